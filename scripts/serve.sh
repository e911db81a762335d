#!/usr/bin/env bash
# Several GRPO Playground servers behind HAProxy, for a class that one server cannot serve.
#
#     scripts/serve.sh --replicas 2 --port 8501                 # students open http://THIS-MACHINE:8501
#     scripts/serve.sh --replicas 4 --port 8080 --bind 127.0.0.1 --app-port 9001
#
# Starts N `streamlit run app.py` servers as the README starts them (OMP_NUM_THREADS=1, MALLOC_ARENA_MAX=2),
# on 127.0.0.1 ports APP_PORT..APP_PORT+N-1 (default P+100..), waits until each answers /_stcore/health, then
# runs HAProxy (deploy/haproxy.cfg) on BIND:P with sticky sessions (cookie) and websockets. Ctrl-C or SIGTERM
# stops HAProxy and every server (each in its own process group, children included); so does any of them
# exiting. (The toy's runs are computed in the students' browsers: a server runs script runs, the lab's sandbox
# and TinyLM's trainer.) Logs: $GRPO_SERVE_LOGS (default a temporary folder, printed). Needs
# Debian's haproxy package ($HAPROXY names another binary) and curl; $PYTHON or --python the interpreter.
set -u

usage="usage: scripts/serve.sh --replicas N --port P [--bind ADDR] [--app-port Q] [--python PY]"
die_usage() { echo "error: $1" >&2; echo "$usage" >&2; exit 2; }
die() { echo "error: $1" >&2; exit 1; }

replicas="" port="" bind="0.0.0.0" app_port="" python="${PYTHON:-python3}"
is_int() { [[ "$1" =~ ^[0-9]+$ ]]; }
while [ $# -gt 0 ]; do
    case "$1" in
        --replicas|--port|--bind|--app-port|--python)
            [ $# -ge 2 ] || die_usage "$1 needs a value"
            case "$1" in
                --replicas) replicas="$2" ;; --port) port="$2" ;; --bind) bind="$2" ;;
                --app-port) app_port="$2" ;; --python) python="$2" ;;
            esac
            shift 2 ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; echo "$usage"; exit 0 ;;
        *) die_usage "unknown argument: $1" ;;
    esac
done
[ -n "$replicas" ] || die_usage "--replicas is required"
[ -n "$port" ] || die_usage "--port is required"
{ is_int "$replicas" && [ "$replicas" -ge 1 ] && [ "$replicas" -le 64 ]; } \
    || die_usage "--replicas must be a whole number from 1 to 64, got '$replicas'"
{ is_int "$port" && [ "$port" -ge 1 ] && [ "$port" -le 65535 ]; } || die_usage "--port must be a port number (1-65535), got '$port'"
[ -n "$app_port" ] || app_port=$((port + 100))
{ is_int "$app_port" && [ "$app_port" -ge 1 ] && [ $((app_port + replicas - 1)) -le 65535 ]; } \
    || die_usage "--app-port must leave room for $replicas ports below 65536, got '$app_port'"
if [ "$port" -ge "$app_port" ] && [ "$port" -lt $((app_port + replicas)) ]; then
    die_usage "--port $port collides with the app servers' ports $app_port..$((app_port + replicas - 1))"
fi
[[ "$bind" =~ ^[0-9A-Za-z.:_-]+$ ]] || die_usage "--bind must be an address such as 0.0.0.0 or 127.0.0.1, got '$bind'"

haproxy_bin="${HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}"  # $HAPROXY: another binary
[ -x "$haproxy_bin" ] || die "haproxy is not installed ($haproxy_bin not found; Debian/Ubuntu: sudo apt-get install haproxy)"
"$python" -c "import streamlit" 2>/dev/null || die "$python cannot import streamlit: activate the venv or pass --python"
command -v curl >/dev/null || die "curl is needed to wait for the servers (sudo apt-get install curl)"

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || die "cannot enter $root"
logs="${GRPO_SERVE_LOGS:-$(mktemp -d /tmp/grpo-serve.XXXXXX)}"
mkdir -p "$logs" || die "cannot create the log folder $logs"

pids=()
stopping=0
stop() {  # TERM each process group, then KILL what is left after 10 s
    [ "$stopping" = 1 ] && return
    stopping=1
    trap '' INT TERM
    for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null; done
    for _ in $(seq 100); do
        alive=0
        for pid in "${pids[@]}"; do kill -0 -- "-$pid" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null; done
    wait 2>/dev/null
    echo "serve.sh: stopped" >&2
}
trap 'stop; exit 0' INT TERM
trap 'stop' EXIT

cfg="$logs/haproxy.cfg"
cp deploy/haproxy.cfg "$cfg" || die "cannot write $cfg"
for i in $(seq 1 "$replicas"); do
    p=$((app_port + i - 1))
    echo "    server app$i 127.0.0.1:$p check cookie app$i" >> "$cfg"
    OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" \
        setsid "$python" -m streamlit \
        run app.py --server.headless true --server.port "$p" --server.address 127.0.0.1 \
        > "$logs/app$i.log" 2>&1 &
    pids+=($!)
done
echo "serve.sh: $replicas app servers on 127.0.0.1:$app_port..$((app_port + replicas - 1)), logs in $logs" >&2

wait_healthy() {  # PORT PID TRIES WHAT LOG: poll PORT's health check every 0.1 s while PID lives, or stop everything
    local t
    for t in $(seq "$3"); do
        curl -fs -o /dev/null "http://127.0.0.1:$1/_stcore/health" && return 0
        kill -0 "$2" 2>/dev/null || die "$4 exited: see $5"
        sleep 0.1
    done
    die "$4 did not answer within $(($3 / 10)) s: see $5"
}
for i in $(seq 1 "$replicas"); do  # each answers its health check within 60 s, or everything stops
    p=$((app_port + i - 1))
    wait_healthy "$p" "${pids[$((i - 1))]}" 600 "app server $i (port $p)" "$logs/app$i.log"
done

GRPO_BIND="$bind:$port" "$haproxy_bin" -c -q -f "$cfg" || die "haproxy rejected $cfg"
GRPO_BIND="$bind:$port" setsid "$haproxy_bin" -db -f "$cfg" > "$logs/haproxy.log" 2>&1 &
pids+=($!)
wait_healthy "$port" "${pids[-1]}" 50 "haproxy (is port $port free?)" "$logs/haproxy.log"
echo "serve.sh: ready at http://$bind:$port ($replicas servers behind HAProxy); Ctrl-C stops everything" >&2

wait -n "${pids[@]}"  # the first process to exit (a crash) stops the rest
echo "error: a server or haproxy exited; stopping the others (logs in $logs)" >&2
stop
exit 1
