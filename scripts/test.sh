#!/usr/bin/env bash
# The project's one test command (CI runs it: .ci/run). Installs what it needs, then ruff, the three test tiers in
# order (unit, integration, e2e: docs/architecture.md, "Tests"), each with its time, then every benchmark's
# --check, whose output is printed but never fails the run (a shared machine's speed varies 2-3.5x in a day).
#
#   bash scripts/test.sh                 # everything, as CI
#   bash scripts/test.sh --fast          # ruff + the unit tier (about a minute): before each commit
#   bash scripts/test.sh --bench         # the benchmarks' --check only
#   bash scripts/test.sh -k lesson -x    # anything else goes to pytest, in every tier
set -uo pipefail
cd "$(dirname "$0")/.."

mode=all
case "${1:-}" in
  --fast) mode=fast; shift ;;
  --bench) mode=bench; shift ;;
esac

if [ "$mode" = all ] || [ "$mode" = bench ]; then
  # Chromium for the e2e tier and the browser benchmarks (Playwright's own browser download cannot work here);
  # HAProxy and curl for scripts/serve.sh's test (two app servers behind HAProxy).
  if [ ! -x /usr/bin/chromium ] || ! command -v haproxy >/dev/null || ! command -v curl >/dev/null; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq || exit 1
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-liberation haproxy curl \
      >/dev/null || exit 1
  fi
fi

[ -d .venv ] || python3 -m venv .venv || exit 1
. .venv/bin/activate
python -m pip install -q --disable-pip-version-check -r requirements-dev.txt || exit 1
export OMP_NUM_THREADS=1

failed=0
report=()

tier() {  # tier NAME MARK-EXPRESSION [pytest args]: one tier, timed; pytest's "no tests collected" (5) is no failure
  local name=$1 expr=$2; shift 2
  local start=$SECONDS rc
  echo "== $name tier (-m \"$expr\")"
  python -m pytest -m "$expr" "$@"
  rc=$?
  [ $rc -eq 5 ] && rc=0
  report+=("$(printf '%-12s %4d s  %s' "$name" $((SECONDS - start)) "$([ $rc -eq 0 ] && echo passed || echo "FAILED (exit $rc)")")")
  [ $rc -eq 0 ] || failed=1
}

if [ "$mode" != bench ]; then
  echo "== ruff"
  ruff check . || failed=1
  tier unit "not integration and not e2e" "$@"
  if [ "$mode" = all ]; then
    tier integration "integration" "$@"
    tier e2e "e2e" "$@"
  fi
fi

if [ "$mode" = all ] || [ "$mode" = bench ]; then
  missed=()
  for bench in toy engine cold_start player lesson classroom class_mode tinylm tinylm_browser tinylm_class lab trainers your_data; do
    start=$SECONDS
    echo "== benchmark: python scripts/bench_$bench.py --check"
    python "scripts/bench_$bench.py" --check
    rc=$?
    report+=("$(printf '%-24s %4d s  %s' "bench_$bench --check" $((SECONDS - start)) "$([ $rc -eq 0 ] && echo "no target missed by 2x" || echo "MISSED a target by over 2x, or failed (exit $rc)")")")
    [ $rc -eq 0 ] || missed+=("bench_$bench")
  done
  [ ${#missed[@]} -eq 0 ] || echo "benchmarks that missed a target by more than 2x or failed: ${missed[*]} (not a test failure: see docs/benchmarks.md)"
fi

echo "== summary"
printf '%s\n' "${report[@]}"
exit $failed
