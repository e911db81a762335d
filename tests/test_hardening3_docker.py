"""Issue 28, the Dockerfile: the base image pinned by digest, every package pip installs pinned with its wheel's
hash (requirements.lock, `--require-hashes`), the app's code read-only for the user that runs it, the health check
on the port the container serves. No Docker engine here: these read the files the build reads."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
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
    assert "requirements.lock" not in (ROOT / ".dockerignore").read_text()


def test_the_code_is_read_only_for_the_user_that_runs_it():
    assert not [c for c in instruction("COPY ") if "--chown" in c]  # root's files
    user = INSTRUCTIONS.index("USER app")
    assert [i for i in INSTRUCTIONS[:user] if "chmod -R a-w" in i]
    assert not [i for i in INSTRUCTIONS[user:] if i.startswith(("COPY", "ADD", "RUN"))]  # nothing written as app


def test_the_health_check_asks_the_port_the_container_serves():
    (env,) = [i for i in instruction("ENV ") if "GRPO_PORT=" in i]
    port = re.search(r"GRPO_PORT=(\d+)", env).group(1)
    (health,) = instruction("HEALTHCHECK ")
    (cmd,) = instruction("CMD ")
    assert "127.0.0.1:${GRPO_PORT}/_stcore/health" in health
    assert '--server.port \\"$GRPO_PORT\\"' in cmd and cmd.startswith('CMD ["sh", "-c", "exec ')
    assert instruction("EXPOSE ") == [f"EXPOSE {port}"]
    assert 'port="${GRPO_PORT:-}"' in (ROOT / "scripts" / "serve.sh").read_text()  # serve.sh's --port default


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
