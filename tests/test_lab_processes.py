"""The lab's processes against hostile student files: children started in a new session
or by a setsid double fork are gone when the check ends; 20 GB at import meets a memory cap with its own
message; a hanging function costs its time limit once per file version and never holds up another page."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from sim.lab.runner import Lab, lab_pool
from tests.fixtures import escape
from tests.fixtures.escape import alive

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
CORRECT = (ROOT / "tests" / "fixtures" / "lab" / "correct" / "tasks.py").read_text()
SPAWNS = Path(escape.__file__).read_text() + '''
_PIDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pids")


def _escape():
    with open(_PIDS, "a") as f:
        f.write(" ".join(map(str, escape(120))) + " ")


_escape()  # at import, and again in every call of k3_kl
_k3 = k3_kl


def k3_kl(logp, ref_logp):
    _escape()
    return _k3(logp, ref_logp)
'''
HUNGRY = "import numpy\nBIG = numpy.ones(20 * 10**9 // 8)  # 20 GB\n"
HANGS_ADV = CORRECT.replace("    r = rewards.view(-1, G)\n", "    while True:\n        pass\n", 1)


def lab_file(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / name).mkdir()
    path = tmp_path / name / "tasks.py"
    path.write_text(text)
    return path


def test_cli_leaves_nothing_running_and_caps_memory(tmp_path):
    """Rows 6 and 7 from the command line, the two commands at once."""
    spawns, hungry = lab_file(tmp_path, "spawns", CORRECT + SPAWNS), lab_file(tmp_path, "hungry", HUNGRY + CORRECT)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-m", "sim", "lab", "check", str(p)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for p in (spawns, hungry)]
    (out, err), (hout, herr) = (p.communicate(timeout=240) for p in procs)
    assert procs[0].returncode == 0 and err == "" and len(out.splitlines()) == 3 and "FAIL" not in out, out + err
    pids = [int(p) for p in (spawns.parent / "pids").read_text().split()]
    assert len(pids) >= 4 and not [p for p in pids if alive(p)]  # the import's and the calls' escapees
    assert procs[1].returncode == 1 and herr == "" and len(hout.splitlines()) == 1, hout + herr
    assert hout.startswith("tasks.py went over its memory cap of 1024 MB (MemoryError") and "infinite" not in hout
    assert "GRPO_LAB_MEMORY_MB" in hout


def test_page_calls_leave_nothing_running(tmp_path):
    """Row 6 from the server's side: the call returns only after the processes it started are gone."""
    lab = Lab(lab_file(tmp_path, "spawns", CORRECT + SPAWNS))
    got = lab.call("k3_kl", np.log([0.6]), np.log([0.5]))
    assert abs(got.item() - 0.01565) < 1e-4
    pids = [int(p) for p in (tmp_path / "spawns" / "pids").read_text().split()]
    assert len(pids) == 4 and not [p for p in pids if alive(p)]


def test_a_hang_costs_its_limit_once_and_other_calls_do_not_wait(tmp_path, monkeypatch):
    """Row 14: group_advantages is `while True: pass`. The checks pay the limit once; k3 (another page, e.g.
    /kl_clip with "Use my lab code") answers meanwhile; every later visit gets the remembered timeout."""
    lab = Lab(lab_file(tmp_path, "hangs", HANGS_ADV), check_timeout=2.0)
    assert lab.load() is None
    results, events, real = [], [], lab.pool.call

    def noted(fn, args=(), kwargs=None, **options):  # the order in which the calls come back
        got = real(fn, args, kwargs, **options)
        events.append((args[0]["op"], getattr(got, "kind", "")))
        return got

    monkeypatch.setattr(lab.pool, "call", noted)
    checking = threading.Thread(target=lambda: results.extend(lab.check_all()))
    checking.start()
    time.sleep(0.3)
    k3, _ = lab.k3_curve(np.linspace(0.5, 2.0, 4))
    events.append(("k3 answered", ""))
    checking.join()
    assert k3.ok
    timed_out = next(i for i, (_, kind) in enumerate(events) if kind == "timeout")
    assert events.index(("k3 answered", "")) < timed_out, f"k3 waited for the hang: {events}"
    assert results[0].kind == "timeout" and results[0].message.startswith("did not finish within 2 s")
    assert results[1].passed and results[2].passed
    monkeypatch.setattr(lab.pool, "call", lambda *a, **k: (_ for _ in ()).throw(AssertionError("ran it again")))
    assert lab.check_all() == results
    table = lab.advantage_table(4)  # the Training page asks the same function: no second wait
    assert table.error.kind == "timeout" and "not run again until the file changes" in table.message


def test_lab_page_pays_a_hang_once_per_file_version(tmp_path, monkeypatch):
    """Row 14 on the page: a second visit (a new session) runs nothing; a new version of the file runs again."""
    path = lab_file(tmp_path, "page", HANGS_ADV)
    monkeypatch.setenv("GRPO_LAB_DIR", str(path.parent))
    monkeypatch.setenv("GRPO_LAB_TIMEOUT", "1")
    page = str(ROOT / "pages" / "lab.py")
    assert Lab(path).load() is None  # the workers are up (a fork server's first start is not what is tested)
    first = AppTest.from_file(page, default_timeout=60).run()
    assert any(t.value == "did not finish within 1 s (an infinite loop?)" for t in first.text)
    real, asked = lab_pool().call, []

    def spy(fn, args=(), kwargs=None, **options):
        asked.append(args[0]["op"])
        return real(fn, args, kwargs, **options)

    with monkeypatch.context() as m:
        m.setattr(lab_pool(), "call", spy)
        second = AppTest.from_file(page, default_timeout=60).run()
    assert not second.exception and any(t.value.startswith("did not finish within 1 s") for t in second.text)
    assert "check" not in asked  # (only the cheap import check: load)
    path.write_text(CORRECT)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    assert lab_pool().call == real
    fixed = AppTest.from_file(page, default_timeout=60).run()
    assert any("3 of 3 tasks pass" in m.value for m in fixed.markdown)
