"""The class mode bench (scripts/bench_class_mode.py): its flags, and a small class against a server it starts. That
it sends what the pages send is checked in Chromium by tests/test_class_mode_browser.py (SENDS)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from scripts.bench_class_mode import parse_args
from tests.fixtures.serve import ROOT


@pytest.mark.parametrize("argv, message", [
    (["--students", "0", "--start-server"], "--students must be >= 1"),
    (["--follows", "99", "--start-server"], "--follows must be 1 to 50"),
    (["--url", "http://127.0.0.1:8501"], "--url needs the server's --presenter-key"),
    (["--url", "ftp://x", "--presenter-key", "k"], "--url must look like http://HOST:PORT"),
    (["--students", "5"], "one of the arguments --url --start-server is required"),
    (["--start-server", "--follow-every", "0"], "must be > 0"),
])  # fmt: skip
def test_bad_flags_give_one_line_and_exit_2(argv, message, capsys, monkeypatch):
    monkeypatch.delenv("GRPO_PRESENTER_KEY", raising=False)
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith("error: ") and message in err and err.count("\n") == 1, err


def test_check_is_the_issues_class():
    opts = parse_args(["--check"])
    assert opts.students == 1000 and opts.start_server and opts.pages and opts.page_follow


@pytest.mark.e2e
def test_a_small_class(tmp_path):
    """Eight students with the app's page open: every follow, the question, the Reveal and the page change reach
    each of them, every guess is counted, no error."""
    out = tmp_path / "class.json"
    cmd = [sys.executable, "scripts/bench_class_mode.py", "--start-server", "--students", "8", "--follows", "3",
           "--join-window", "2", "--guess-window", "1", "--timeout", "60", "--json-out", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    result = json.loads(out.read_text())
    assert "| lecturer: a guess counted on the histogram (p95) |" in proc.stdout
    assert result["errors"] == 0 and result["server_log_tracebacks"] == 0, result["error_samples"]
    assert result["joined_on_board"] == result["students_in"] == result["guesses_counted"] == 8
    assert result["follow_s"]["n"] == 8 * 3 and result["reveal_s"]["n"] == result["page_follow_s"]["n"] == 8
