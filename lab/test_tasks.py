"""The chapter's lab tests: every check of sim/lab/checks.py as one pytest test.

    python -m pytest -q                     # your tasks.py: fails until the TODOs are filled in
    RL_SOLUTIONS=1 python -m pytest -q      # the reference solutions (sim/lab/solutions.py): all pass

A failure says in the chapter's terms what is wrong, and which check found it. The same checks
run in `python -m sim lab check tasks.py` (one line per task, with a time limit).
"""

import importlib.util
import os
from pathlib import Path

import pytest

from sim.lab import checks, solutions


def _implementation():
    """(module under test, why it could not be imported or None)."""
    if os.environ.get("RL_SOLUTIONS") == "1":
        return solutions, None
    path = Path(__file__).with_name("tasks.py")
    try:
        spec = importlib.util.spec_from_file_location("lab_tasks_under_test", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:
        return None, f"{path.name} does not import: {type(e).__name__}: {e}"
    return module, None


IMPL, IMPORT_ERROR = _implementation()


def _run(case):
    if IMPORT_ERROR:
        pytest.fail(IMPORT_ERROR, pytrace=False)
    message = checks.run_case(case, IMPL)
    if message:
        info = checks.TASKS[case.task]
        pytest.fail(f"Task {info.number} {info.func}: {message}\n  (check: {case.asserts})", pytrace=False)


def _cases(task):
    return pytest.mark.parametrize("case", checks.CASES[task], ids=[c.name for c in checks.CASES[task]])


@_cases("group_advantages")
def test_task2_group_advantages(case):
    _run(case)


@_cases("k3_kl")
def test_task3_k3_kl(case):
    _run(case)


@_cases("grpo_loss")
def test_task4_grpo_loss(case):
    _run(case)
