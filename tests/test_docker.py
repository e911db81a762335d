"""The Docker image, read from the files the build reads (no Docker engine here): the base image pinned by digest,
every package pip installs pinned with its wheel's hash (requirements.lock, `--require-hashes`), the app's code
read-only for the user that runs it, an allow-list build context (.dockerignore, read with Docker's own rules), and
a health check on the address the container serves, whatever port or address serve.sh was given."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from scripts.lock_requirements import normalize, requirements

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
INSTRUCTIONS = [re.sub(r"\s*\\\n\s*", " ", block).strip() for block in
                re.split(r"\n(?=[A-Z]+ )", re.sub(r"(?m)^#.*\n", "", DOCKERFILE)) if block.strip()]


def lock() -> dict[str, tuple[str, str, list[str]]]:
    """requirements.lock as {name: (version, marker, [sha256 hashes])}; every line must be one of its entries."""
    text = (ROOT / "requirements.lock").read_text()
    entries = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", re.sub(r"(?m)^#.*\n", "", text).strip()):
        m = re.fullmatch(r"([a-z0-9-]+)==(\S+?)(?: ; ([^\\]+?))? \\\n((?:    --hash=sha256:[0-9a-f]{64}(?: \\\n)?)+)",
                         block.strip("\n"))
        assert m, f"not a pinned, hashed entry: {block!r}"
        name, version, marker, hashes = m.groups()
        assert name not in entries, f"{name} twice"
        entries[name] = (version, marker or "", re.findall(r"sha256:([0-9a-f]{64})", hashes))
    return entries


def test_the_lock_pins_every_requirement_at_its_version_with_a_hash():
    locked = lock()
    for name, (version, marker) in requirements(ROOT / "requirements.txt").items():
        assert name in locked, f"{name} is in requirements.txt but not in requirements.lock: rerun the lock script"
        got = locked[name][0]
        assert got == version or got == f"{version}+cpu" and name == "torch", (name, version, got)
        assert locked[name][1] == marker, (name, marker, locked[name][1])
    assert all(hashes for _, _, hashes in locked.values())
    assert locked["torch"][0] == "2.13.0+cpu"  # the CPU build, as the image installs it


def test_the_lock_holds_what_the_app_imports():
    locked = lock()
    for name in ("streamlit", "plotly", "numpy", "scipy", "torch", "starlette", "uvicorn", "websockets", "pyarrow"):
        assert normalize(name) in locked


def instruction(prefix: str) -> list[str]:
    return [i for i in INSTRUCTIONS if i.startswith(prefix)]


def test_the_base_image_is_pinned_by_a_digest():
    (base,) = instruction("FROM ")
    assert re.fullmatch(r"FROM --platform=linux/amd64 python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", base), base


def test_pip_installs_only_hashed_wheels_from_the_lock():
    pips = [i for i in instruction("RUN ") if "pip install" in i]
    assert len(pips) == 1 and "--require-hashes" in pips[0] and "-r requirements.lock" in pips[0]
    assert "--only-binary=:all:" in pips[0] and "requirements.lock" in " ".join(instruction("COPY "))
    assert in_context("requirements.lock") and in_context("requirements.txt")


def test_the_code_is_read_only_for_the_user_that_runs_it():
    assert not [c for c in instruction("COPY ") if "--chown" in c]  # root's files
    user = INSTRUCTIONS.index("USER app")
    assert [i for i in INSTRUCTIONS[:user] if "chmod -R a-w" in i]
    assert not [i for i in INSTRUCTIONS[user:] if i.startswith(("COPY", "ADD", "RUN"))]  # nothing written as app


def test_the_health_check_asks_where_the_container_serves():
    """$GRPO_PORT for the image's own server; serve.sh's HAProxy wherever --port and --bind put it (serve.sh writes
    that URL to $GRPO_HEALTH_URL_FILE, the health check reads it first): `docker run ... scripts/serve.sh --replicas
    4 --port 8080` was checked on 8501 and reported unhealthy."""
    (env,) = [i for i in instruction("ENV ") if "GRPO_PORT=" in i]
    port = re.search(r"GRPO_PORT=(\d+)", env).group(1)
    url_file = re.search(r"GRPO_HEALTH_URL_FILE=(\S+)", env).group(1)
    (health,) = instruction("HEALTHCHECK ")
    (cmd,) = instruction("CMD ")
    assert health.endswith('CMD ["sh", "/app/deploy/healthcheck.sh"]') and "--start-period=" in health
    assert '--server.port \\"$GRPO_PORT\\"' in cmd and cmd.startswith('CMD ["sh", "-c", "exec ')
    assert instruction("EXPOSE ") == [f"EXPOSE {port}"] and url_file.startswith("/tmp/")
    serve = (ROOT / "scripts" / "serve.sh").read_text()
    assert 'port="${GRPO_PORT:-}"' in serve and '> "$GRPO_HEALTH_URL_FILE.tmp"' in serve
    check = (ROOT / "deploy" / "healthcheck.sh").read_text()
    assert "GRPO_HEALTH_URL_FILE" in check and "${GRPO_PORT:-8501}" in check


# ---- the build context: an allow-list ------------------------------------------------------------------------


def ignore_rules() -> list[tuple[bool, re.Pattern]]:
    """.dockerignore as Docker reads it (moby/patternmatcher): each line a path pattern (`*` and `?` within one
    name, `**` across folders), `!` an exception; the last pattern that matches a path or one of its folders
    decides."""
    rules = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        pattern = os.path.normpath(line.lstrip("!")).lstrip("/")
        regex = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                regex, i = regex + "(.*/)?", i + 3
            elif pattern.startswith("**", i):
                regex, i = regex + ".*", i + 2
            else:
                c = pattern[i]
                regex += "[^/]*" if c == "*" else "[^/]" if c == "?" else c if c in "[]" else re.escape(c)
                i += 1
        rules.append((keep, re.compile(regex + r"\Z")))
    return rules


RULES = ignore_rules()


def in_context(path: str) -> bool:
    """Would `docker build .` send `path` (relative to the repository) to the builder?"""
    parts = path.split("/")
    sent = True
    for keep, rx in RULES:
        if any(rx.match("/".join(parts[:n])) for n in range(1, len(parts) + 1)):
            sent = keep
    return sent


RUNTIME = ("app.py", "pages", "ui", "sim", "assets", "lab", ".streamlit/config.toml", "scripts/serve.sh",
           "deploy/haproxy.cfg", "deploy/healthcheck.sh", "requirements.txt", "requirements.lock")
SUFFIXES = {".py", ".js", ".css", ".json", ".csv", ".png", ".md", ".toml", ".txt", ".lock", ".sh", ".cfg", ".pt"}


def test_the_context_holds_everything_the_image_runs():
    files = []
    for name in RUNTIME:
        p = ROOT / name
        files += [p] if p.is_file() else [f for f in p.rglob("*") if f.is_file() and f.suffix in SUFFIXES
                                           and not {"__pycache__", "static"} & set(f.parts)]  # not tracked
    assert len(files) > 150
    missing = [str(f.relative_to(ROOT)) for f in files if not in_context(str(f.relative_to(ROOT)))]
    assert missing == []
    assert in_context("assets/data/tinylm_sft.pt") and in_context("assets/vendor/" + next(
        f.name for f in (ROOT / "assets" / "vendor").iterdir() if f.suffix == ".js"))


@pytest.mark.parametrize("path", [
    "out/history.csv", "build/lib/sim/grpo.py", "dist/grpo_playground-0.1-py3-none-any.whl", ".hypothesis/examples/a",
    ".env", "sim/.env", "ui/.env.local", "lab/.secrets", ".venv/bin/python", ".git/config", ".ci/run",
    "tests/test_grpo.py", "docs/security.md", "README.md", "my_state.pt", "assets/data/mine.pt",
    "sim/tinylm/saved.pt", "lab/trl-out/checkpoint-5/optimizer.pt", "lab/checkpoint-5/rng_state.pth",
    "trl-out/trainer_state.json", "lab/trainer_state.json", "sim/__pycache__/grpo.cpython-311.pyc", "sim/grpo.pyc",
    "assets/js/.DS_Store", "pages/.ipynb_checkpoints/x.py", "static/x.js", "pages/static/x.js", "serve.log",
    "lab/serve.log", "sim/model.safetensors", "Dockerfile", ".dockerignore", "scripts/bench_toy.py",
    "grpo_playground/cli.py", "requirements-dev.txt", "run.json", "nohup.out",
])  # fmt: skip
def test_the_context_leaves_out_what_a_checkout_also_holds(path):
    assert not in_context(path), path


def test_the_rules_read_as_docker_reads_them():
    """A few of Docker's own cases: the last match decides, a folder's pattern covers its files, ** spans folders."""
    assert not in_context("anything") and in_context("sim/deep/er/x.py") and not in_context("sim/deep/x.pt")
    assert in_context(".streamlit/config.toml") and not in_context(".streamlit/secrets.toml")


# ---- the health check, run -----------------------------------------------------------------------------------


class Ok(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(200 if self.path == "/_stcore/health" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.mark.integration
def test_the_health_check_script_asks_serve_sh_s_url_first(tmp_path):
    live = ThreadingHTTPServer(("127.0.0.1", 0), Ok)
    threading.Thread(target=live.serve_forever, daemon=True).start()
    port = live.server_address[1]
    url_file = tmp_path / "health-url"

    def check(**env) -> int:
        return subprocess.run(["sh", str(ROOT / "deploy" / "healthcheck.sh")], capture_output=True, timeout=20,
                              env=dict(os.environ, **env)).returncode

    try:
        assert check(GRPO_PORT=str(port), GRPO_HEALTH_URL_FILE=str(url_file)) == 0  # no file yet: $GRPO_PORT
        assert check(GRPO_PORT="1", GRPO_HEALTH_URL_FILE=str(url_file)) != 0
        url_file.write_text(f"http://127.0.0.1:{port}/_stcore/health\n")  # what serve.sh writes when ready
        assert check(GRPO_PORT="1", GRPO_HEALTH_URL_FILE=str(url_file)) == 0
        url_file.write_text("http://127.0.0.1:1/_stcore/health\n")
        assert check(GRPO_PORT=str(port), GRPO_HEALTH_URL_FILE=str(url_file)) != 0  # the served one is down
    finally:
        live.shutdown()


@pytest.mark.integration
def test_the_lock_script_writes_each_wheel_with_its_hash(tmp_path):
    """scripts/lock_requirements.py offline (--wheels: what a pip download left in a folder)."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    made = {"torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl": b"torch",
            "uvloop-0.23.0-cp311-cp311-manylinux2014_x86_64.whl": b"uvloop",
            "Jinja2-3.1.6-py3-none-any.whl": b"jinja"}  # fmt: skip
    for name, data in made.items():
        (wheels / name).write_bytes(data)
    out = tmp_path / "requirements.lock"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "lock_requirements.py"), "--wheels", str(wheels),
                           "--out", str(out)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    sha = {n: hashlib.sha256(d).hexdigest() for n, d in made.items()}
    assert f"jinja2==3.1.6 \\\n    --hash=sha256:{sha['Jinja2-3.1.6-py3-none-any.whl']}" in text
    assert 'uvloop==0.23.0 ; sys_platform != "win32" \\\n    --hash=sha256:' in text  # requirements.txt's marker
    assert text.index("jinja2") < text.index("torch==2.13.0+cpu") < text.index("uvloop")
