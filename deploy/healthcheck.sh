#!/bin/sh
# The Docker image's health check: the address the container serves answers /_stcore/health.
#
# The image's own server listens on $GRPO_PORT; scripts/serve.sh listens where its --port and --bind say, and once
# HAProxy answers there it writes the URL its readiness check asked to $GRPO_HEALTH_URL_FILE (removed when it
# stops), which this reads first. So `docker run ... scripts/serve.sh --replicas 4 --port 8080` is checked on 8080.
url="http://127.0.0.1:${GRPO_PORT:-8501}/_stcore/health"
if [ -n "${GRPO_HEALTH_URL_FILE:-}" ] && [ -s "$GRPO_HEALTH_URL_FILE" ]; then
    url="$(head -n 1 "$GRPO_HEALTH_URL_FILE")"
fi
exec curl -fsg -o /dev/null --max-time 4 "$url"
