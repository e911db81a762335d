"""The lab's processes against hostile student files: children started in a new session, by a setsid double fork
or after turning the subreaper off are gone when the check ends; 20 GB at import, or a shared mapping, meets a
memory cap with its own message; a thread left spinning does not outlive its call; a hanging function costs its
time limit once per file version and never holds up another page."""

import contextlib
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
ESCAPES = Path(escape.__file__).read_text()  # the fixture's attacks, appended to a student's file
UNREAPED = ESCAPES + '''
_PIDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pids")


def _escape():
    with open(_PIDS, "a") as f:
        f.write(" ".join(map(str, unreaped(7, 600))) + " ")  # issue 43 row 8: seven `sleep 600`


_escape()
_k3 = k3_kl


def k3_kl(logp, ref_logp):
    _escape()
    return _k3(logp, ref_logp)
'''
SPINS = ESCAPES + "\nspin()  # issue 43 row 6: at import, so once per worker that imports it\n"
SHARED = ESCAPES + "\nBIG = shared_memory(768)  # issue 43 row 7: over a 512 MB cap, in a shared mapping\n"
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


def visit(page: str) -> AppTest:
    """A visit to the lab's page: its script run, then the one its page's report of the setting triggers, for which
    the server computes the checks (ui/labpage.py)."""
    from tests.fixtures.apptest import report

    return report(AppTest.from_file(page, default_timeout=60).run(), "lab")


def said(at: AppTest) -> str:
    """Every text of the page's document, one per line."""
    from tests.fixtures.apptest import documents

    return "\n".join(b.get("text", "") for blocks in documents(at) for b in blocks)


def test_lab_page_pays_a_hang_once_per_file_version(tmp_path, monkeypatch):
    """Row 14 on the page: a second visit (a new session) runs nothing; a new version of the file runs again."""
    path = lab_file(tmp_path, "page", HANGS_ADV)
    monkeypatch.setenv("GRPO_LAB_DIR", str(path.parent))
    monkeypatch.setenv("GRPO_LAB_TIMEOUT", "1")
    page = str(ROOT / "pages" / "lab.py")
    assert Lab(path).load() is None  # the workers are up (a fork server's first start is not what is tested)
    first = visit(page)
    assert "did not finish within 1 s (an infinite loop?)" in said(first)
    real, asked = lab_pool().call, []

    def spy(fn, args=(), kwargs=None, **options):
        asked.append(args[0]["op"])
        return real(fn, args, kwargs, **options)

    with monkeypatch.context() as m:
        m.setattr(lab_pool(), "call", spy)
        second = visit(page)
    assert not second.exception and "did not finish within 1 s" in said(second)
    assert "check" not in asked  # (only the cheap import check: load)
    path.write_text(CORRECT)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    assert lab_pool().call == real
    fixed = visit(page)
    assert "3 of 3 tasks pass." in said(fixed)


def test_cli_kills_what_turned_the_subreaper_off_and_counts_shared_memory(tmp_path):
    """Rows 8 and 7 of issue 43 from the command line: seven `sleep 600` double-forked after prctl(
    PR_SET_CHILD_SUBREAPER, 0) at import and in every k3_kl call are gone when `lab check` ends; 768 MB mapped
    MAP_SHARED at import meets GRPO_LAB_MEMORY_MB=512 (it passed the cap before: RLIMIT_DATA counts no shared
    mapping)."""
    unreaped, shared = lab_file(tmp_path, "unreaped", CORRECT + UNREAPED), lab_file(tmp_path, "shared", SHARED)
    env = dict(os.environ, OMP_NUM_THREADS="1", GRPO_LAB_MEMORY_MB="512")
    procs = [subprocess.Popen([sys.executable, "-m", "sim", "lab", "check", str(p)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for p in (unreaped, shared)]
    (out, err), (sout, serr) = (p.communicate(timeout=240) for p in procs)
    assert procs[0].returncode == 0 and err == "" and len(out.splitlines()) == 3 and "FAIL" not in out, out + err
    pids = [int(p) for p in (unreaped.parent / "pids").read_text().split()]
    assert len(pids) >= 14 and not [p for p in pids if alive(p)]  # the import's seven and each call's
    assert procs[1].returncode == 1 and serr == "" and len(sout.splitlines()) == 1, sout + serr
    assert sout.startswith("tasks.py went over its memory cap of 512 MB (") and "GRPO_LAB_MEMORY_MB" in sout


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of `pids` and every descendant (/proc), clock ticks of 1/100 s."""
    tree, total = set(pids), 0
    while new := {int(n) for n in os.listdir("/proc") if n.isdigit() and _parent(n) in tree} - tree:
        tree |= new
    for p in tree:
        with contextlib.suppress(OSError, IndexError):
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def _parent(pid: str) -> int:
    with contextlib.suppress(OSError, IndexError):
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return -1


def test_a_thread_left_by_the_students_code_does_not_spin_on(tmp_path):
    """Row 6 of issue 43: a file that starts a spinning thread at import. Each worker that imported it is
    replaced once its call has answered, so between calls the lab's workers are idle (both spun at 85-100% CPU
    for a minute and more before), and the checks still give their verdicts."""
    lab = Lab(lab_file(tmp_path, "spins", CORRECT + SPINS))
    assert lab.load() is None
    results = lab.check_all()
    assert [r.passed for r in results] == [True, True, True]
    assert sum(w.thread_replacements for w in lab.pool.workers) >= 1
    time.sleep(0.5)  # the replacements start
    pids = [w.pid for w in lab.pool.workers if w.pid]
    before = _cpu_seconds(pids)
    time.sleep(2.0)
    assert _cpu_seconds(pids) - before < 0.5  # a spinning thread alone would add about 2 s
