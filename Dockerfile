# GRPO Playground, served as the README starts it: one `streamlit run app.py` on port $GRPO_PORT (8501).
#
#   docker build -t grpo-playground .
#   docker run --rm -p 8501:8501 grpo-playground                    # one server
#   docker run --rm -p 8080:8080 grpo-playground scripts/serve.sh --replicas 4 --port 8080
#                                                                   # 4 servers behind HAProxy (4+ cores)
#
# For several machines, run one container per machine (one server, or serve.sh --replicas = its cores)
# and put a load balancer with sticky sessions and websockets in front of them: deploy/haproxy.cfg is one,
# with a `server` line per machine (README, "Serving a large class"). docs/security.md: what is pinned and why.
#
# The base image is pinned by digest: python:3.11-slim-bookworm's linux/amd64 image (Python 3.11.16, Debian 12),
# as the Docker Official Images' records list it (docker-library/repo-info, repos/python/remote/
# 3.11-slim-bookworm.md; the tag's multi-platform index was then sha256:0bee7276f83efd4a1ee05bbbf4281d95ed28e07
# 9220a9457f25a93e3f1e3c31b). The image is amd64 because requirements.lock holds the hashes of amd64 wheels. To
# move on: `docker buildx imagetools inspect python:3.11-slim-bookworm`, put the linux/amd64 digest here, run
# `python scripts/lock_requirements.py`, rebuild.
FROM --platform=linux/amd64 python:3.11-slim-bookworm@sha256:2fc9207f64226cb05ac317cee0bab6fa55a9ea311ce5a086baddd4b4a83c2d3c

# Debian's signed repositories: HAProxy for serve.sh, curl for the health check
RUN apt-get update \
    && apt-get install -y --no-install-recommends haproxy curl \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 10001 app
WORKDIR /app
COPY requirements.txt requirements.lock ./
# Every package pinned with its wheel's SHA-256 (scripts/lock_requirements.py): a changed or substituted file fails
# the build. PyTorch's CPU index serves torch==2.13.0+cpu (the lock's) instead of the multi-GB CUDA build.
RUN pip install --no-cache-dir --require-hashes --only-binary=:all: \
        --extra-index-url https://download.pytorch.org/whl/cpu -r requirements.lock
# The code belongs to root and is read-only for the user that runs it: a bug (or a student's code in the lab)
# cannot change what the next visitor runs. Bytecode compiled now, so nothing is written beside it later.
COPY . .
RUN python -m compileall -q /app && chmod -R a-w,a+rX /app

USER app
ENV OMP_NUM_THREADS=1 MALLOC_ARENA_MAX=2 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 GRPO_PORT=8501 \
    GRPO_HEALTH_URL_FILE=/tmp/grpo-health-url
EXPOSE 8501
# Where the container serves: the server below on $GRPO_PORT, or serve.sh's HAProxy wherever its --port and --bind
# put it (serve.sh writes that URL to $GRPO_HEALTH_URL_FILE once HAProxy answers; deploy/healthcheck.sh reads it).
# The warm-up (about a minute on a small machine) is the start period, not a failure.
HEALTHCHECK --interval=30s --timeout=5s --start-period=120s CMD ["sh", "/app/deploy/healthcheck.sh"]
# One server has no per-client connection limit of its own: for a class, run serve.sh (even --replicas 1) for
# HAProxy's, or put the container behind a proxy that has one (docs/security.md, "The Docker image").
# exec: the server is PID 1 and gets docker stop's SIGTERM itself
CMD ["sh", "-c", "exec python -m streamlit run app.py --server.headless true --server.port \"$GRPO_PORT\" --server.address 0.0.0.0"]
