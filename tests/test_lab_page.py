"""pages/lab.py under AppTest: without GRPO_LAB_DIR the tasks, checks and commands; with it, one row per task
from running the checks on that file in the worker (correct, wrong, raising, hanging, missing)."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sim.lab.checks import CASES
from tests.fixtures.apptest import documents, report

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
    at = report(at, "lab")  # the page reports its setting; the server computes the lab's document for it
    assert not at.exception, at.exception
    return at


def blocks_of(at: AppTest) -> list[dict]:
    """The page's one document: the checks on the server's lab file, then the tasks (ui/labpage.py)."""
    (blocks,) = documents(at)
    return blocks


def task_rows(at: AppTest) -> list[tuple[str, str]]:
    """Each task's row of the checks: (tone, text), "success" for a pass, "error" for a fail with its message."""
    return [(b["tone"], b["text"]) for b in blocks_of(at) if b["kind"] == "note" and b["text"].startswith("Task ")]


def notes(at: AppTest, tone: str) -> list[str]:
    return [b["text"] for b in blocks_of(at) if b["kind"] == "note" and b["tone"] == tone]


def codes(at: AppTest) -> list[str]:
    return [b["text"] for b in blocks_of(at) if b["kind"] == "code"]


def texts(at: AppTest) -> list[str]:
    return [b["text"] for b in blocks_of(at) if b["kind"] == "text"]


def test_without_lab_dir_shows_tasks_checks_and_commands(monkeypatch):
    at = run(monkeypatch)
    blocks = blocks_of(at)  # the checks' note, then sim/views/lab.py tasks: the document a lesson's lab page shows too
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
    assert "GRPO_LAB_DIR=my-lab streamlit run app.py" in notes(at, "info")[0]
    assert not notes(at, "error") and not task_rows(at)
    n_checks = sum(len(c) for c in CASES.values())
    assert n_checks == 18


def test_correct_lab_all_pass(monkeypatch):
    at = run(monkeypatch, FIXTURES / "correct")
    assert str(FIXTURES / "correct" / "tasks.py") in codes(at)
    rows = task_rows(at)
    assert len(rows) == 3 and all(tone == "success" and ": pass, all " in text for tone, text in rows)
    assert any(t.startswith("3 of 3 tasks pass.") for t in texts(at))


def test_wrong_lab_names_the_mistake_as_plain_text(monkeypatch):
    at = run(monkeypatch, FIXTURES / "wrong_std")
    tones = [tone for tone, _ in task_rows(at)]
    assert tones == ["error", "success", "success"]
    failed = task_rows(at)[0][1]
    assert "\nstd is the sample std (unbiased=True" in failed
    assert "failing check: rewards 1, 0, 0, 1" in failed


def test_raising_and_hanging_functions_leave_the_page_working(monkeypatch):
    at = run(monkeypatch, FIXTURES / "raises")
    assert any("raised ValueError: groups larger than 2 are not supported yet" in t for _, t in task_rows(at))
    at = run(monkeypatch, FIXTURES / "hangs", timeout=1)
    assert any("did not finish within 1 s (an infinite loop?)" in t for _, t in task_rows(at))
    assert [tone for tone, _ in task_rows(at)] == ["success", "error", "success"]
    at.button(key="lab_rerun").click()  # a rerun after the timeout (the worker restarted for Task 4)
    monkeypatch.setenv("GRPO_LAB_DIR", str(FIXTURES / "correct"))
    at.run()
    assert not at.exception and all(tone == "success" for tone, _ in task_rows(at))


def test_bad_lab_dir_and_unimportable_file(monkeypatch, tmp_path):
    at = run(monkeypatch, tmp_path / "nowhere")
    (said,) = notes(at, "error")
    assert said.startswith("The lab configured for this server cannot be used:") and "no such file" in said
    (tmp_path / "tasks.py").write_text((FIXTURES / "syntax_error" / "tasks.py.txt").read_text())
    at = run(monkeypatch, tmp_path)
    (said,) = notes(at, "error")
    assert said == "Your file could not be loaded: tasks.py does not import: SyntaxError: expected ':' (line 6)"
    at = run(monkeypatch, FIXTURES / "correct", timeout="soon")
    (said,) = notes(at, "error")
    assert "GRPO_LAB_TIMEOUT=soon" in said
