"""The project as a newcomer meets it: pyproject.toml agrees with the requirements files and ships every package,
`grpo-playground` dispatches to the app and to `python -m sim`'s table, sim/paths.py finds the app's files in a
checkout and in an installed copy. (Installing it for real: tests/test_install.py, in the integration tier; the
docs: tests/test_docs.py.)"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import shutil
import sys
import tomllib
from pathlib import Path

import pytest

import sim.__main__ as sim_main
from grpo_playground import cli
from sim import paths

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


# ---- dependencies: one list in pyproject, the same pins in requirements*.txt ---------------------------------


def requirements(name: str, follow: bool = True) -> list[str]:
    """The requirement lines of a requirements file (comments dropped, `-r` files followed if `follow`)."""
    out = []
    for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
        line = line.split(" #")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-r "):
            out += requirements(line[3:].strip()) if follow else []
        else:
            out.append(line)
    return out


def norm(req: str) -> str:
    return re.sub(r"\s+", "", req).replace("'", '"').lower()


def test_pyproject_pins_exactly_what_the_requirements_files_pin():
    project = PYPROJECT["project"]
    assert sorted(map(norm, project["dependencies"])) == sorted(map(norm, requirements("requirements.txt")))
    extras = project["optional-dependencies"]
    assert sorted(map(norm, extras["trl"])) == sorted(map(norm, requirements("requirements-trl.txt", follow=False)))
    assert sorted(map(norm, extras["dev"])) == sorted(map(norm, requirements("requirements-dev.txt", follow=False)))
    assert "-r requirements.txt" in (ROOT / "requirements-trl.txt").read_text()
    assert "-r requirements.txt" in (ROOT / "requirements-dev.txt").read_text()
    assert "torch==2.13.0" in project["dependencies"], "torch stays pinned: a loose torch pulls a CUDA build"


def test_every_package_is_shipped_and_the_app_files_with_them():
    setuptools = PYPROJECT["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(ROOT).parts) for top in ("sim", "ui", "grpo_playground")
             for p in (ROOT / top).rglob("__init__.py")}
    assert found <= set(setuptools["packages"]), f"not in pyproject's packages: {found - set(setuptools['packages'])}"
    assert setuptools["package-dir"] == {"grpo_playground.app": "."}
    data = setuptools["package-data"]["grpo_playground.app"]
    assert {"pages/*.py", "assets/**/*", "lab/*", ".streamlit/config.toml"} <= set(data)
    assert sorted(p.name for p in ROOT.glob("*.py")) == ["app.py"], "the root's modules all go into the package"
    assert PYPROJECT["project"]["scripts"] == {"grpo-playground": "grpo_playground.cli:run"}


# ---- where the files are ---------------------------------------------------------------------------------


def test_a_checkout_finds_its_files_in_the_repository_root():
    assert paths.CODE_ROOT == paths.APP_ROOT == ROOT
    assert paths.APP.is_file() and (paths.PAGES / "training.py").is_file() and paths.LAB_STUBS.is_dir()
    from sim.player.plotly_js import PLOTLY_JS
    from sim.tinylm.checkpoint import ASSET

    assert PLOTLY_JS.parent == paths.VENDOR and ASSET.parent == paths.DATA
    assert {paths.JS.parent, paths.DATA.parent, paths.VENDOR.parent} == {ROOT / "assets"} == {paths.ASSETS}


def test_an_installed_copy_finds_its_files_under_grpo_playground_app(tmp_path):
    site = tmp_path / "site-packages"  # the layout `pip install .` writes (see pyproject.toml)
    (site / "sim").mkdir(parents=True)
    shutil.copy(ROOT / "sim" / "paths.py", site / "sim" / "paths.py")
    (site / "grpo_playground" / "app").mkdir(parents=True)
    (site / "grpo_playground" / "app" / "app.py").write_text("")
    spec = importlib.util.spec_from_file_location("installed_paths", site / "sim" / "paths.py")
    installed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(installed)
    assert installed.CODE_ROOT == site.resolve()
    assert installed.APP_ROOT == site.resolve() / "grpo_playground" / "app"
    assert installed.ASSETS == installed.APP_ROOT / "assets" and installed.LAB_STUBS == installed.APP_ROOT / "lab"


def test_no_module_computes_a_path_of_its_own():
    """Every path to the app's files comes from sim/paths.py: no `parents[...]` of a module's own file elsewhere."""
    offenders = [str(p.relative_to(ROOT)) for top in ("sim", "ui", "pages", "grpo_playground")
                 for p in (ROOT / top).rglob("*.py") if "__file__).resolve().parents[" in p.read_text()
                 and p != ROOT / "sim" / "paths.py"]  # fmt: skip
    assert offenders == []


# ---- the command ------------------------------------------------------------------------------------------


def test_help_lists_the_app_and_every_sim_command(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: grpo-playground [COMMAND] [flags]")
    for name in ("(none)", "app", *sim_main.COMMANDS):
        assert re.search(rf"^  {re.escape(name)}\s+\S", out, re.M), name


def test_every_command_dispatches_to_sims_table(monkeypatch):
    called = []
    for name, entry in sim_main.COMMANDS.items():  # (module, help[, the function, "main" if absent])
        mod = importlib.import_module(entry[0])
        func = entry[2] if len(entry) > 2 else "main"
        monkeypatch.setattr(mod, func, lambda argv, name=name: called.append((name, argv)) or 0)
    for name in sim_main.COMMANDS:
        assert cli.main([name, "--flag", "x"]) == 0
    assert called == [(name, ["--flag", "x"]) for name in sim_main.COMMANDS]


def test_an_unknown_command_is_one_error_and_exit_2(capsys):
    assert cli.main(["toys"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown command 'toys'") and "grpo-playground [COMMAND]" in err


def test_toy_runs_in_process_as_python_m_sim_does(capsys):
    assert cli.main(["toy", "--iterations", "3", "--n-seeds", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["iterations"] == 3


@pytest.mark.parametrize("argv, flags", [([], []), (["app"], []), (["app", "--server.port", "8080"],
                                                                     ["--server.port", "8080"])])
def test_no_command_starts_the_installed_app_as_the_docs_do(monkeypatch, argv, flags):
    started = []
    monkeypatch.setattr(cli.os, "execve", lambda path, cmd, env: started.append((path, cmd, env)))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")  # the environment's value wins over the default
    cli.main(argv)
    ((path, cmd, env),) = started
    assert path == sys.executable and cmd == [sys.executable, "-m", "streamlit", "run", str(paths.APP), *flags]
    assert env["OMP_NUM_THREADS"] == "1" and env["MALLOC_ARENA_MAX"] == "4"
