"""`pip install .` into a fresh virtual environment, then the `grpo-playground` command from another folder: its
help, `lesson build OUT`, `toy --json`, and the app itself serving /_stcore/health and Plotly.js; and the wheel
holds the vendored Plotly.js, every page, the lab's stubs and the Streamlit config.

Downloading torch and the rest again for each run would cost gigabytes and need the network, which tests never
touch: the fresh venv sees the suite's own venv's third-party packages through a .pth file, and the project is
installed with --no-deps and --no-build-isolation (its build backend, setuptools, comes from there too). What is
tested is the project's own packaging: what the wheel ships, where the installed code finds its files, and the
console command. The checkout is copied first, so that the build writes nothing into it, and every command runs
with the fresh venv's interpreter, in a folder that is not the checkout, with no PYTHONPATH.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.serve import NO_PROXY, free_port

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
IGNORE = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.pyc", "build", "dist", "*.egg-info", ".*_cache",
                                ".hypothesis", "static", "out", "node_modules")


def run(cmd: list, cwd: Path, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}: exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """A fresh venv with the project installed from a copy of the checkout: its bin/, an env, a folder elsewhere,
    and the wheel built from the same copy."""
    tmp = tmp_path_factory.mktemp("install")
    src, venv, elsewhere = tmp / "src", tmp / "venv", tmp / "elsewhere"
    shutil.copytree(ROOT, src, ignore=IGNORE)
    elsewhere.mkdir()
    run([sys.executable, "-m", "venv", "--without-pip", venv], tmp, os.environ)
    py = venv / "bin" / "python"
    fresh_site = run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp,
                     os.environ).stdout.strip()
    shared_site = sysconfig.get_paths()["purelib"]  # this suite's venv: torch, streamlit, setuptools, ...
    Path(fresh_site, "shared-venv.pth").write_text(f"import site; site.addsitedir({shared_site!r})\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    pip = [sys.executable, "-m", "pip", "--python", py]
    run([*pip, "install", "--no-deps", "--no-build-isolation", "--no-index", "-q", src], tmp, env)
    run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", tmp / "dist", src], tmp, env)
    (wheel,) = (tmp / "dist").glob("grpo_playground-*.whl")
    return {"bin": venv / "bin", "py": py, "env": env, "elsewhere": elsewhere, "wheel": wheel, "site": fresh_site}


def test_the_wheel_ships_the_app_and_its_files(installed):
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    app = "grpo_playground/app/"
    assert f"{app}assets/vendor/plotly-cartesian-4.1.1.min.js" in names  # the vendored Plotly.js
    pages = {f"{app}pages/{p.name}" for p in (ROOT / "pages").glob("*.py")}
    assert pages and pages <= names, pages - names  # every page
    assert {f"{app}app.py", f"{app}.streamlit/config.toml", f"{app}assets/data/tinylm_sft.pt", f"{app}lab/tasks.py",
            "sim/paths.py", "sim/toy/runs.py", "ui/server.py", "grpo_playground/cli.py"} <= names
    assert not [n for n in names if n.startswith(("tests/", "scripts/"))]
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "grpo-playground = grpo_playground.cli:run" in zipfile.ZipFile(installed["wheel"]).read(entry).decode()


def test_the_installed_code_is_the_one_that_runs(installed):
    code = "import sim, sim.paths as p; print(sim.__file__); print(p.APP_ROOT)"
    out = run([installed["py"], "-c", code], installed["elsewhere"], installed["env"]).stdout.splitlines()
    assert out[0].startswith(installed["site"]) and out[1] == str(Path(installed["site"], "grpo_playground", "app"))


def test_help_lesson_build_and_toy_from_another_folder(installed):
    cmd, env, here = installed["bin"] / "grpo-playground", installed["env"], installed["elsewhere"]
    helped = run([cmd, "--help"], here, env).stdout
    assert all(f"  {name} " in helped for name in ("toy", "tinylm", "lesson", "lab", "app"))
    run([cmd, "lesson", "build", "OUT", "--quiet"], here, env, timeout=600)
    assert (here / "OUT" / "index.html").is_file() and (here / "OUT" / "training.html").is_file()
    assert list((here / "OUT").rglob("plotly-cartesian-*.min.js")), "the lesson carries the vendored Plotly.js"
    summary = json.loads(run([cmd, "toy", "--json"], here, env).stdout)
    assert summary["config"]["group_size"] == 8 and 0 < summary["final_accuracy"] <= 1
    run([cmd, "lab", "new", "my-lab"], here, env)
    assert (here / "my-lab" / "tasks.py").read_text() == (ROOT / "lab" / "tasks.py").read_text()


def test_no_argument_serves_the_app(installed):
    port = free_port()
    env = installed["env"] | {"STREAMLIT_SERVER_PORT": str(port), "STREAMLIT_SERVER_ADDRESS": "127.0.0.1",
                              "STREAMLIT_SERVER_HEADLESS": "true", "GRPO_WORKERS": "1"}
    log = installed["elsewhere"] / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(installed["bin"] / "grpo-playground")], cwd=installed["elsewhere"], env=env,
                                stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline, healthy = time.monotonic() + 120, False
        while time.monotonic() < deadline and proc.poll() is None and not healthy:
            try:
                with NO_PROXY.open(f"{base}/_stcore/health", timeout=2) as r:
                    healthy = r.status == 200
            except OSError:
                time.sleep(0.2)
        assert healthy, f"no /_stcore/health (exit {proc.poll()}): {log.read_text(errors='replace')[-3000:]}"
        req = urllib.request.Request(f"{base}/assets/plotly-cartesian-4.1.1.min.js")
        with NO_PROXY.open(req, timeout=30) as r:  # the app's own route, from the installed assets/
            assert r.status == 200 and len(r.read()) > 1_000_000
    finally:
        proc.terminate()
        proc.wait(timeout=30)
