#!/usr/bin/env bash
# The project's one test command: installs everything it needs, then lint + every test.
# Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."

# Chromium for the browser tests (Playwright's own browser download cannot work here); HAProxy and curl for
# scripts/serve.sh's test (two app servers behind HAProxy).
if [ ! -x /usr/bin/chromium ] || ! command -v haproxy >/dev/null || ! command -v curl >/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-liberation haproxy curl >/dev/null
fi

[ -d .venv ] || python3 -m venv .venv
. .venv/bin/activate
python -m pip install -q --disable-pip-version-check -r requirements-dev.txt

export OMP_NUM_THREADS=1
ruff check .
python -m pytest "$@"
