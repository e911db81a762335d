"""pages/lab.py under AppTest: without GRPO_LAB_DIR the tasks, checks and commands; with it, one row per task
from running the checks on that file in the worker (correct, wrong, raising, hanging, missing)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sim.lab.checks import CASES
from tests.fixtures.apptest import documents

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "lab"
PAGE = str(ROOT / "pages" / "lab.py")


pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("full_error_details")]  # tests/conftest.py


def run(monkeypatch, lab_dir=None, timeout=None) -> AppTest:
    monkeypatch.delenv("GRPO_LAB_DIR", raising=False)
    monkeypatch.delenv("GRPO_LAB_TIMEOUT", raising=False)
    if lab_dir is not None:
        monkeypatch.setenv("GRPO_LAB_DIR", str(lab_dir))
    if timeout is not None:
        monkeypatch.setenv("GRPO_LAB_TIMEOUT", str(timeout))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    return at


def task_rows(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**Task ")]


def test_without_lab_dir_shows_tasks_checks_and_commands(monkeypatch):
    at = run(monkeypatch)
    (blocks,) = documents(at)  # sim/views/lab.py tasks: the document a lesson's lab page shows too
    heads = [b["text"] for b in blocks if b["kind"] == "heading"]
    assert heads == ["Run the checks on your file", "Task 2: Group advantages", "Task 3: The k3 estimator",
                     "Task 4: The GRPO loss"]
    assert len([b for b in blocks if b["kind"] == "formula" and b["latex"]]) >= 4
    code = "\n".join(b["text"] for b in blocks if b["kind"] == "code")  # plain text with a Copy button
    assert not at.code
    assert "python -m sim lab new my-lab" in code and "python -m sim lab check my-lab/tasks.py" in code
    assert "RL_SOLUTIONS=1 python -m pytest -q" in code
    assert "grpo_loss(logp, old_logp, ref_logp, adv, mask, clip_eps=0.2, beta=0.04)" in code
    body = "\n".join(b["text"] for b in blocks if b["kind"] == "text")
    assert "1.732" in body and "0.0157" in body and "1.25 > 1.2" in body and "-1/12" in body
    assert sum(body.count(f"{i}. ") >= 1 for i in range(1, 8)) == 7  # numbered checks
    assert "GRPO_LAB_DIR" in at.info[0].value
    assert not at.error and not task_rows(at)
    n_checks = sum(len(c) for c in CASES.values())
    assert n_checks == 18


def test_correct_lab_all_pass(monkeypatch):
    at = run(monkeypatch, FIXTURES / "correct")
    assert str(FIXTURES / "correct" / "tasks.py") in "\n".join(c.value for c in at.code)
    rows = task_rows(at)
    assert len(rows) == 3 and all(":green[" in r for r in rows)
    assert any("3 of 3 tasks pass" in m.value for m in at.markdown)


def test_wrong_lab_names_the_mistake_as_plain_text(monkeypatch):
    at = run(monkeypatch, FIXTURES / "wrong_std")
    rows = task_rows(at)
    assert ":red[" in rows[0] and ":green[" in rows[1] and ":green[" in rows[2]
    messages = [t.value for t in at.text]
    assert any(m.startswith("std is the sample std (unbiased=True") for m in messages)
    assert any("failing check: rewards 1, 0, 0, 1" in m for m in messages)


def test_raising_and_hanging_functions_leave_the_page_working(monkeypatch):
    at = run(monkeypatch, FIXTURES / "raises")
    assert any(t.value == "raised ValueError: groups larger than 2 are not supported yet" for t in at.text)
    at = run(monkeypatch, FIXTURES / "hangs", timeout=1)
    assert any(t.value == "did not finish within 1 s (an infinite loop?)" for t in at.text)
    rows = task_rows(at)
    assert ":green[" in rows[0] and ":red[" in rows[1] and ":green[" in rows[2]
    at.button(key="lab_rerun").click()  # a rerun after the timeout (the worker restarted for Task 4)
    monkeypatch.setenv("GRPO_LAB_DIR", str(FIXTURES / "correct"))
    at.run()
    assert not at.exception and all(":green[" in r for r in task_rows(at))


def test_bad_lab_dir_and_unimportable_file(monkeypatch, tmp_path):
    at = run(monkeypatch, tmp_path / "nowhere")
    assert at.error and "no such file" in at.code[0].value
    (tmp_path / "tasks.py").write_text((FIXTURES / "syntax_error" / "tasks.py.txt").read_text())
    at = run(monkeypatch, tmp_path)
    assert at.error and at.code[1].value == "tasks.py does not import: SyntaxError: expected ':' (line 6)"
    at = run(monkeypatch, FIXTURES / "correct", timeout="soon")
    assert at.error and "GRPO_LAB_TIMEOUT=soon" in at.code[0].value
