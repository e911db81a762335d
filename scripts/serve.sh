#!/usr/bin/env bash
# Several GRPO Playground servers behind HAProxy, for a class that one server cannot serve.
#
#     scripts/serve.sh --replicas 2 --port 8501                 # students open http://THIS-MACHINE:8501
#     scripts/serve.sh --replicas 4 --port 8080 --bind 127.0.0.1 --app-port 9001 --max-conn-per-client 256
#
# Checks every port first (HAProxy's BIND:P, the servers' 127.0.0.1:APP_PORT..APP_PORT+N-1, default P+100..),
# then starts N `streamlit run app.py` servers as the README starts them (OMP_NUM_THREADS=1, MALLOC_ARENA_MAX=2),
# waits until each answers /_stcore/health, and runs HAProxy (deploy/haproxy.cfg) on BIND:P: sticky sessions
# (cookie), websockets, at most C connections at once per client address (default 64, $GRPO_MAX_CONN_PER_CLIENT),
# one log line per request (path without its query). A server that dies is logged (which, when, its exit status)
# and restarted after a back-off (1 s, doubling to 60 s; back to 1 s once it has run a minute): the class goes on
# on the live ones, HAProxy sending the dead one's students to them. HAProxy is restarted the same way. Only
# Ctrl-C or SIGTERM stops everything (each process in its own process group, children included). Every server
# shares one presenter key ($GRPO_PRESENTER_KEY, or a random one printed at start: the lecturer adds
# ?presenter=KEY; a key set in GRPO_PRESENTER_KEY must be hard to guess, ui/presenter.py). The toy's runs are computed
# in the students' browsers: a server runs script runs, the lab's sandbox and TinyLM's trainer. --port defaults to
# $GRPO_PORT. Logs: $GRPO_SERVE_LOGS (default a temporary folder, printed; a folder it creates is 700, every log 600),
# with serve.log, the supervisor's own and the one file that holds the key. Readiness is asked where HAProxy listens
# (--bind's address; 127.0.0.1 for 0.0.0.0, ::1 for ::); that URL is written to $GRPO_HEALTH_URL_FILE when set (the
# Docker image's health check reads it). Needs Debian's haproxy package ($HAPROXY names another binary) and curl;
# $PYTHON or --python the interpreter. docs/security.md: limits, logging, the key.
set -u

usage="usage: scripts/serve.sh --replicas N --port P [--bind ADDR] [--app-port Q] [--max-conn-per-client C] [--python PY]"
die_usage() { echo "error: $1" >&2; echo "$usage" >&2; exit 2; }
die() { echo "error: $1" >&2; exit 1; }

replicas="" port="${GRPO_PORT:-}" bind="0.0.0.0" app_port="" python="${PYTHON:-python3}"
max_conn="${GRPO_MAX_CONN_PER_CLIENT:-64}"
while [ $# -gt 0 ]; do
    case "$1" in
        --replicas|--port|--bind|--app-port|--python|--max-conn-per-client)
            [ $# -ge 2 ] || die_usage "$1 needs a value"
            case "$1" in
                --replicas) replicas="$2" ;; --port) port="$2" ;; --bind) bind="$2" ;;
                --app-port) app_port="$2" ;; --python) python="$2" ;; --max-conn-per-client) max_conn="$2" ;;
            esac
            shift 2 ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; echo "$usage"; exit 0 ;;
        *) die_usage "unknown argument: $1" ;;
    esac
done
# A whole number in decimal: no sign, no leading zero (bash reads 0100 as octal and 08080 not at all), at most
# 9 digits (no overflow). number NAME VALUE LO HI WHAT
number() {
    [[ "$2" =~ ^0[0-9]+$ ]] && die_usage "$1 must be written without leading zeros, got '$2'"
    { [[ "$2" =~ ^[1-9][0-9]{0,8}$|^0$ ]] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ]; } || die_usage "$1 must be $5, got '$2'"
}
[ -n "$replicas" ] || die_usage "--replicas is required"
[ -n "$port" ] || die_usage "--port is required"
number --replicas "$replicas" 1 64 "a whole number from 1 to 64"
number --port "$port" 1 65535 "a port number (1-65535)"
number --max-conn-per-client "$max_conn" 1 4096 "a whole number from 1 to 4096 (connections one client may hold)"
[ -n "$app_port" ] || app_port=$((port + 100))
number --app-port "$app_port" 1 65535 "a port number (1-65535)"
[ $((app_port + replicas - 1)) -le 65535 ] \
    || die_usage "--app-port must leave room for $replicas ports below 65536, got '$app_port'"
if [ "$port" -ge "$app_port" ] && [ "$port" -lt $((app_port + replicas)) ]; then
    die_usage "--port $port collides with the app servers' ports $app_port..$((app_port + replicas - 1))"
fi
[[ "$bind" =~ ^[0-9A-Za-z.:_-]+$ ]] || die_usage "--bind must be an address such as 0.0.0.0 or 127.0.0.1, got '$bind'"
# where HAProxy answers: the bound address itself (a real address of the machine, ::1), this machine for a wildcard
case "$bind" in
    0.0.0.0) probe_host=127.0.0.1 ;; ::) probe_host="[::1]" ;; *:*) probe_host="[$bind]" ;; *) probe_host="$bind" ;;
esac
key="${GRPO_PRESENTER_KEY:-}"
root="$(cd "$(dirname "$0")/.." && pwd)"

haproxy_bin="${HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}"  # $HAPROXY: another binary
[ -x "$haproxy_bin" ] || die "haproxy is not installed ($haproxy_bin not found; Debian/Ubuntu: sudo apt-get install haproxy)"
"$python" -c "import streamlit" 2>/dev/null || die "$python cannot import streamlit: activate the venv or pass --python"
command -v curl >/dev/null || die "curl is needed to wait for the servers (sudo apt-get install curl)"
if [ -n "$key" ]; then  # the servers' own rule (ui/presenter.py: the form, and not easy to guess), from the environment
    why="$(cd "$root" && "$python" -c 'from ui.presenter import make_key
try:
    make_key()
except ValueError as e:
    print(e)' 2>&1)"
    [ -z "$why" ] || die_usage "$why"
fi

# Every port before anything starts: a taken one is named with its cause, not found later in a log.
port_problem() {  # ADDR PORT: nothing if a server can listen there, else why not (as the OS says it)
    "$python" - "$1" "$2" <<'EOF'
import errno, socket, sys
addr, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as HAProxy and Streamlit bind
try:
    s.bind((addr, port))
    s.listen(1)
except OSError as e:
    hint = {errno.EADDRINUSE: "another program listens there", errno.EADDRNOTAVAIL: "no such address on this machine",
            errno.EACCES: "ports below 1024 need root or CAP_NET_BIND_SERVICE"}.get(e.errno)
    print(f"{e.strerror} ({hint})" if hint else e.strerror)
EOF
}
why="$(port_problem "$bind" "$port")"
[ -z "$why" ] || die "port $port on $bind (HAProxy, --port) cannot be used: $why"
for i in $(seq 1 "$replicas"); do
    p=$((app_port + i - 1))
    why="$(port_problem 127.0.0.1 "$p")"
    [ -z "$why" ] || die "port $p on 127.0.0.1 (app server $i, --app-port $app_port + $((i - 1))) cannot be used: $why"
done

cd "$root" || die "cannot enter $root"
logs="${GRPO_SERVE_LOGS:-$(mktemp -d /tmp/grpo-serve.XXXXXX)}"  # mktemp -d: 700
[ -d "$logs" ] || mkdir -p -m 700 "$logs" || die "cannot create the log folder $logs"
for f in serve.log haproxy.log $(for i in $(seq 1 "$replicas"); do echo "app$i.log"; done); do
    (umask 077 && : >> "$logs/$f" && chmod 600 "$logs/$f") || die "cannot write $logs/$f"  # the owner's only
done
say() { echo "serve.sh: $*" >&2; echo "$(date '+%F %T') $*" >> "$logs/serve.log"; }
[ -n "$key" ] || key="$("$python" -c 'import secrets; print(secrets.token_urlsafe(16))')"

pids=()     # pids[0]: HAProxy; pids[i]: app server i (1..N); "" while it waits for its restart
started=()  # $SECONDS when each was last started
backoff=()  # seconds before its next restart
due=()      # $SECONDS at which a dead one is restarted
stopping=0
stop() {  # TERM each process group, then KILL what is left after 10 s
    [ "$stopping" = 1 ] && return
    stopping=1
    trap '' INT TERM
    local pid alive
    for pid in "${pids[@]}"; do [ -n "$pid" ] && { kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null; }; done
    for _ in $(seq 100); do
        alive=0
        for pid in "${pids[@]}"; do [ -n "$pid" ] && kill -0 -- "-$pid" 2>/dev/null && alive=1; done
        [ "$alive" = 0 ] && break
        sleep 0.1
    done
    for pid in "${pids[@]}"; do [ -n "$pid" ] && kill -KILL -- "-$pid" 2>/dev/null; done
    wait 2>/dev/null
    [ -n "${GRPO_HEALTH_URL_FILE:-}" ] && rm -f "$GRPO_HEALTH_URL_FILE"
    echo "serve.sh: stopped" >&2
}
trap 'stop; exit 0' INT TERM
trap 'stop' EXIT


cfg="$logs/haproxy.cfg"
(umask 077 && cp deploy/haproxy.cfg "$cfg" && chmod 600 "$cfg") || die "cannot write $cfg"
for i in $(seq 1 "$replicas"); do
    echo "    server app$i 127.0.0.1:$((app_port + i - 1)) check cookie app$i" >> "$cfg"
done

start_app() {  # I: app server I in its own process group (setsid), its output appended to appI.log
    local i=$1
    echo "==== $(date '+%F %T') serve.sh starts app server $i" >> "$logs/app$i.log"
    GRPO_PRESENTER_KEY="$key" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" \
        MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}" setsid "$python" -m streamlit \
        run app.py --server.headless true --server.port "$((app_port + i - 1))" --server.address 127.0.0.1 \
        >> "$logs/app$i.log" 2>&1 &
    pids[$i]=$!
    started[$i]=$SECONDS
}
start_haproxy() {
    GRPO_BIND="$bind:$port" GRPO_MAX_CONN="$max_conn" setsid "$haproxy_bin" -db -f "$cfg" >> "$logs/haproxy.log" 2>&1 &
    pids[0]=$!
    started[0]=$SECONDS
}
name_of() { [ "$1" = 0 ] && echo "haproxy (port $port)" || echo "app server $1 (127.0.0.1:$((app_port + $1 - 1)))"; }

for i in $(seq 1 "$replicas"); do start_app "$i"; backoff[$i]=1; done
say "$replicas app servers on 127.0.0.1:$app_port..$((app_port + replicas - 1)), logs in $logs"

wait_healthy() {  # URL PID TRIES WHAT LOG: poll the health check URL every 0.1 s while PID lives, or stop everything
    local t
    for t in $(seq "$3"); do
        curl -fsg -o /dev/null --max-time 2 "$1" && return 0
        kill -0 "$2" 2>/dev/null || die "$4 exited while starting: see $5"
        sleep 0.1
    done
    die "$4 did not answer within $(($3 / 10)) s: see $5"
}
for i in $(seq 1 "$replicas"); do  # each answers its health check within 60 s, or everything stops
    wait_healthy "http://127.0.0.1:$((app_port + i - 1))/_stcore/health" "${pids[$i]}" 600 "$(name_of "$i")" \
        "$logs/app$i.log"
done

GRPO_BIND="$bind:$port" GRPO_MAX_CONN="$max_conn" "$haproxy_bin" -c -q -f "$cfg" || die "haproxy rejected $cfg"
start_haproxy
backoff[0]=1
health="http://$probe_host:$port/_stcore/health"  # where HAProxy listens, not always 127.0.0.1
wait_healthy "$health" "${pids[0]}" 50 "$(name_of 0) at $health" "$logs/haproxy.log"
if [ -n "${GRPO_HEALTH_URL_FILE:-}" ]; then  # for a health check that does not know --port and --bind (Docker's)
    echo "$health" > "$GRPO_HEALTH_URL_FILE.tmp" && mv "$GRPO_HEALTH_URL_FILE.tmp" "$GRPO_HEALTH_URL_FILE" \
        || die "cannot write GRPO_HEALTH_URL_FILE=$GRPO_HEALTH_URL_FILE"
fi
if [ -n "${GRPO_PRESENTER_KEY:-}" ]; then  # whoever set it has it: not written again
    say "presenter key: the one in GRPO_PRESENTER_KEY (not printed; the lecturer opens a page with ?presenter=KEY)"
else  # written once, here and in serve.log (the servers do not print a key they were given)
    say "presenter key: $key (the lecturer adds ?presenter=KEY to a page's address; GRPO_PRESENTER_KEY sets it)"
fi
say "ready at http://$([[ "$bind" == *:* ]] && echo "[$bind]" || echo "$bind"):$port ($replicas servers behind" \
    "HAProxy, at most $max_conn connections per client); Ctrl-C stops everything"

# Supervise: a process that exits is logged and restarted after its back-off; the others keep serving.
while true; do
    for i in $(seq 0 "$replicas"); do
        pid="${pids[$i]}"
        if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then  # it exited (bash has reaped it: no zombie)
            wait "$pid" 2>/dev/null
            status=$?
            up=$((SECONDS - started[i]))
            [ "$up" -ge 60 ] && backoff[$i]=1  # it had run a while: a fresh fault, not a crash loop
            say "$(name_of "$i") (pid $pid) exited with status $status after $up s; restarting it in ${backoff[i]} s" \
                "(logs: $logs/$([ "$i" = 0 ] && echo haproxy || echo "app$i").log)"
            pids[$i]=""
            due[$i]=$((SECONDS + backoff[i]))
            backoff[$i]=$((backoff[i] * 2 > 60 ? 60 : backoff[i] * 2))
        fi
        if [ -z "${pids[$i]}" ] && [ "$SECONDS" -ge "${due[$i]}" ]; then
            if [ "$i" = 0 ]; then start_haproxy; else start_app "$i"; fi
            say "restarted $(name_of "$i") as pid ${pids[$i]}"
        fi
    done
    sleep 0.5 &
    wait $! 2>/dev/null  # a signal ends the wait at once: the trap stops everything
done
