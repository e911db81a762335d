"""sim/lab/runner.py: a student's code in a worker process with a time limit, results as plain data.

Timeouts, crashes, wrong shapes, exceptions and import failures come back as StudentError and the next call
works; the file is re-imported when it changes; the convenience calls the pages use (advantages of one group,
k3 over u, loss and gradient, the toy's advantage table) agree with the reference for a correct file and report
the mismatch for a wrong one. All tests share the process's lab pool; timeouts are short.
"""

import math
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from sim.grpo import group_advantages
from sim.lab import probes, solutions
from sim.lab.runner import (
    MAX_FILE_BYTES,
    Comparison,
    Lab,
    LabPathError,
    StudentError,
    compare,
    get_lab,
    lab_from_env,
    lab_pool,
    load_lab,
)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "lab"
CORRECT = (FIXTURES / "correct" / "tasks.py").read_text()
K3_CHAPTER = 0.5 / 0.6 - math.log(0.5 / 0.6) - 1  # 0.01565, printed as 0.0157


def lab(name: str, **kw) -> Lab:
    return load_lab(FIXTURES / name, **kw)


def _until(pred, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while not pred() and time.monotonic() < deadline:
        time.sleep(0.02)
    return pred()


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    st = path.stat()  # a new mtime even within the file system's timestamp granularity
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    return path


# ---- calls and failures ---------------------------------------------------------------------------


def test_call_returns_the_students_tensor():
    logp, ref = np.log([0.6, 0.3]), np.log([0.5, 0.3])
    got = lab("correct").call("k3_kl", logp, ref)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64
    torch.testing.assert_close(got, solutions.k3_kl(torch.tensor(logp), torch.tensor(ref)))
    assert got[0].item() == pytest.approx(K3_CHAPTER, abs=1e-12) and round(K3_CHAPTER, 4) == 0.0157


def test_timeout_kills_the_worker_and_the_next_call_works():
    hangs = lab("hangs", timeout=0.5)
    assert hangs.load() is None and _until(lambda: all(w.pid for w in hangs.pool.workers))  # both workers up
    starts = hangs.pool.starts
    got = hangs.call("k3_kl", np.zeros(2), np.zeros(2))
    assert isinstance(got, StudentError) and got.kind == "timeout" and got.func == "k3_kl"
    assert got.message == "did not finish within 0.5 s (an infinite loop?)"
    ok = hangs.call("group_advantages", np.array([1.0, 0, 0, 1]), 4)  # same file, a function that returns
    assert isinstance(ok, torch.Tensor) and _until(lambda: hangs.pool.starts == starts + 1)  # replaced once


def test_crash_is_reported_and_the_next_call_works():
    crashes = lab("crashes")
    got = crashes.call("k3_kl", np.zeros(2), np.zeros(2))
    assert isinstance(got, StudentError) and got.kind == "crashed"
    assert got.message.startswith("the process running the lab code died (exit code 3)")
    assert isinstance(crashes.call("k3_kl", np.zeros(2), np.zeros(2)), StudentError)  # crashes again, still answers
    assert isinstance(lab("correct").call("k3_kl", np.zeros(2), np.zeros(2)), torch.Tensor)


def test_raised_wrong_shape_wrong_type_and_missing(tmp_path):
    adv = lab("raises").advantages([1, 0, 0, 0])
    assert not adv.ok and adv.student is None and adv.error.kind == "raised"
    assert adv.message == "raised ValueError: groups larger than 2 are not supported yet"
    assert adv.report == {"ok": False, "kind": "raised", "message": adv.message}
    np.testing.assert_allclose(adv.reference, [1.7317, -0.5772, -0.5772, -0.5772], atol=1e-4)

    shape = lab("wrong_shape").advantages([1, 0, 0, 0])
    assert shape.error.kind == "wrong shape"
    assert shape.message == "group_advantages returned shape (1, 4), expected (4,)"
    assert lab("wrong_shape").advantage_table(4).error.kind == "wrong shape"

    write(tmp_path / "tasks.py", "def group_advantages(rewards, G, scale_std=True, eps=1e-4):\n    return [0.0]\n")
    odd = load_lab(tmp_path)
    got = odd.call("group_advantages", np.zeros(4), 4)
    assert got.kind == "wrong type" and got.message == "returned list, not a torch tensor"
    missing = odd.call("k3_kl", np.zeros(2), np.zeros(2))
    assert missing.kind == "missing" and missing.message == "tasks.py has no function k3_kl(logp, ref_logp)"
    with pytest.raises(ValueError, match="func must be one of"):
        odd.call("open", "/etc/passwd")


def test_import_failure_and_reimport_when_the_file_changes(tmp_path):
    path = tmp_path / "tasks.py"
    shutil.copy(FIXTURES / "syntax_error" / "tasks.py.txt", path)
    student = load_lab(tmp_path)
    err = student.load()
    assert err.kind == "import failed" and err.message == "tasks.py does not import: SyntaxError: expected ':' (line 6)"
    assert student.call("k3_kl", np.zeros(1), np.zeros(1)).kind == "import failed"
    assert student.check("k3_kl").message == err.message

    write(path, CORRECT.replace("return torch.exp(d) - d - 1.0", "return 2 * (torch.exp(d) - d - 1.0)"))
    assert student.load() is None
    assert student.call("k3_kl", np.log([0.6]), np.log([0.5])).item() == pytest.approx(2 * K3_CHAPTER, abs=1e-12)
    assert [r.passed for r in student.check_all()] == [True, False, True]
    write(path, CORRECT)
    assert student.call("k3_kl", np.log([0.6]), np.log([0.5])).item() == pytest.approx(K3_CHAPTER, abs=1e-12)
    assert all(r.passed for r in student.check_all())  # the cached results follow the file


def test_student_output_is_discarded(tmp_path, capfd):
    chatty = CORRECT.replace("    d = ref_logp - logp\n", "    print('x' * 100000)\n    d = ref_logp - logp\n")
    write(tmp_path / "tasks.py", "print('hello from import')\n" + chatty)
    got = load_lab(tmp_path).call("k3_kl", np.zeros(3), np.zeros(3))
    assert isinstance(got, torch.Tensor)
    out, err = capfd.readouterr()
    assert "hello" not in out + err and "xxxx" not in out + err


def test_check_all_is_cached_until_the_file_changes(monkeypatch):
    correct = lab("correct")
    first = correct.check_all()
    monkeypatch.setattr(correct.pool, "call", lambda *a, **k: pytest.fail("asked a worker again"))
    assert correct.check_all() == first and all(r.passed for r in first)


def test_lab_paths_are_validated(tmp_path):
    with pytest.raises(LabPathError, match="no such file"):
        load_lab(tmp_path / "nope")
    with pytest.raises(LabPathError, match="no such file: .*tasks.py"):
        load_lab(tmp_path)  # a directory without tasks.py
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(LabPathError, match=r"not a Python file \(.py\)"):
        load_lab(tmp_path / "notes.txt")
    (tmp_path / "big.py").write_text("#" * (MAX_FILE_BYTES + 1))
    with pytest.raises(LabPathError, match="a lab file may have at most"):
        load_lab(tmp_path / "big.py")
    assert lab_from_env({}) == (None, None)
    assert lab_from_env({"GRPO_LAB_DIR": str(tmp_path / "nope")})[1].startswith("GRPO_LAB_DIR: no such file")
    assert "GRPO_LAB_TIMEOUT=-3" in lab_from_env({"GRPO_LAB_DIR": str(FIXTURES / "correct"),
                                                  "GRPO_LAB_TIMEOUT": "-3"})[1]
    found, problem = lab_from_env({"GRPO_LAB_DIR": str(FIXTURES / "correct"), "GRPO_LAB_TIMEOUT": "7"})
    assert problem is None and found is get_lab(FIXTURES / "correct" / "tasks.py", check_timeout=7.0)
    assert found.check_timeout == 7.0 and found.pool is lab_pool()


# ---- what the pages draw --------------------------------------------------------------------------


def closed_form_table(G: int, scale_std: bool, eps: float) -> np.ndarray:
    """[A correct, A wrong] for k = 0..G correct: p = k/G, std = sqrt(p(1-p)); (1-p)/(std+eps) and -p/(std+eps)."""
    table = np.zeros((G + 1, 2))
    for k in range(1, G):
        p = k / G
        scale = math.sqrt(p * (1 - p)) + eps if scale_std else 1.0
        table[k] = [(1 - p) / scale, -p / scale]
    return table


@pytest.mark.parametrize("G,scale_std,eps", [(2, True, 1e-4), (8, True, 1e-4), (8, False, 1e-4), (64, True, 0.1)])
def test_advantage_table_matches_closed_form_and_sim_grpo(G, scale_std, eps):
    ref, inconsistent = probes.advantage_table(solutions, G, scale_std, eps)
    assert inconsistent == []
    np.testing.assert_allclose(ref, closed_form_table(G, scale_std, eps), atol=1e-12)
    # the same table read straight off sim.grpo.group_advantages (ddof=0) on "k ones, then zeros"
    adv = group_advantages(probes.count_rewards(G), G, scale="group" if scale_std else "none", ddof=0, eps=eps)
    a = adv.reshape(G + 1, G).numpy()
    np.testing.assert_allclose(ref[1:, 0], a[1:, 0], atol=1e-12)
    np.testing.assert_allclose(ref[:-1, 1], a[np.arange(G), np.arange(G)], atol=1e-12)
    student = lab("correct").advantage_table(G, scale_std, eps)
    assert student.ok and student.report["inconsistent"] == []
    np.testing.assert_allclose(student.student, ref, atol=1e-9)


def test_advantage_table_reports_the_chapter_mistakes_and_inconsistency(tmp_path):
    wrong_std = lab("wrong_std").advantage_table(4)
    assert not wrong_std.ok and wrong_std.report["n_mismatch"] == 6  # k = 1, 2, 3: both columns
    np.testing.assert_allclose(wrong_std.student[2], [0.866, -0.866], atol=1e-3)  # sample std of 1, 1, 0, 0
    no_eps = lab("no_eps").advantage_table(4)
    assert not no_eps.ok and no_eps.report["n_nan"] == 2  # k = 0 (wrong) and k = G (correct) are 0/0
    assert no_eps.message == "NaN at 2 of 10 values where the reference has a number"

    ranked = CORRECT.replace("    return adv.reshape(-1)",
                             "    return (adv + 0.01 * torch.arange(r.shape[1])).reshape(-1)")
    write(tmp_path / "tasks.py", ranked)
    table = load_lab(tmp_path).advantage_table(4)
    assert not table.ok and table.report["inconsistent"] == [0, 1, 2, 3, 4]
    assert table.message.startswith("answers of the same kind got different advantages in the group(s) with k = 0")


def test_k3_curve_and_loss_and_grad():
    u = np.linspace(0.2, 3.0, 15)
    k3, slope = lab("correct").k3_curve(u)
    assert k3.ok and slope.ok
    np.testing.assert_allclose(k3.reference, u - np.log(u) - 1, atol=1e-12)
    np.testing.assert_allclose(slope.reference, 1 - u, atol=1e-12)
    k3, slope = lab("k1").k3_curve(u)
    assert not k3.ok and k3.report["n_mismatch"] == 14 and not slope.ok  # k1 = k3 = 0 only at u = 1

    lengths = np.array([3, 3, 4, 3])
    mask = (np.arange(4)[None, :] < lengths[:, None]).astype(float)  # (B, T)
    logp = np.log(np.full((4, 4), 0.5))
    batch = (logp, logp + 0.3, logp - 0.2, np.array([1.0, -1, -1, 1]), mask)
    loss, grad = lab("correct").loss_and_grad(*batch, clip_eps=0.2, beta=0.04)
    assert loss.ok and grad.ok and loss.reference.shape == () and grad.reference.shape == (4, 4)
    loss, grad = lab("token_mean").loss_and_grad(*batch, clip_eps=0.2, beta=0.04)
    assert not grad.ok and grad.report["mismatch"][2][3] is True  # the length-4 response's last token
    hangs = lab("hangs", timeout=0.5).k3_curve(u)
    assert hangs[0].error.kind == "timeout" and hangs[1].error.kind == "timeout"


def test_compare_reports_in_plain_data():
    ok = compare([1.0, 2.0], [1.0, 2.0 + 1e-9])
    assert ok["ok"] and ok["n_mismatch"] == 0 and ok["message"].startswith("matches the reference")
    bad = compare([[1.0, 2.5], [0.0, 0.0]], [[1.0, 2.0], [0.0, 0.1]])
    assert not bad["ok"] and bad["n_mismatch"] == 2 and bad["worst_index"] == [0, 1]
    assert bad["max_abs_err"] == pytest.approx(0.5) and bad["mismatch"] == [[False, True], [False, True]]
    assert bad["message"] == "2 of 4 values differ from the reference (largest difference 0.5 at index (0, 1))"
    nan = compare([np.nan, 1.0], [0.0, 1.0])
    assert nan["n_nan"] == 1 and nan["message"] == "NaN at 1 of 2 values where the reference has a number"
    shape = compare(np.zeros((4, 1)), np.zeros(4))
    assert not shape["ok"] and shape["message"] == "shape (4, 1), but the reference has shape (4,)"
    assert compare(None, [1.0])["message"] == "no value to compare"
    assert compare(1.0, 1.0 + 1e-3, atol=1e-2)["ok"]
    c = Comparison(np.zeros(2), np.zeros(2), None, compare(np.zeros(2), np.zeros(2)))
    assert c.ok and c.message.startswith("matches")


def test_concurrent_sessions_share_one_worker():
    from concurrent.futures import ThreadPoolExecutor

    correct = lab("correct")
    logp = np.log(np.linspace(0.1, 0.9, 5))

    def one(i):
        return correct.call("k3_kl", logp, logp + 0.1 * i)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, range(12)))
    for i, got in enumerate(results):
        d = 0.1 * i
        np.testing.assert_allclose(got.numpy(), np.exp(d) - d - 1, atol=1e-12)
