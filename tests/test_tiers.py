"""The test tiers (docs/architecture.md, "Tests"): plain `pytest` runs the unit tier, and tests/conftest.py's guard
fails a unit-tier test that starts a process or a server."""

from __future__ import annotations

import multiprocessing
import os
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import TIER_MARKS, UnitTierViolation, unit_tier_guard

ROOT = Path(__file__).resolve().parents[1]


def test_plain_pytest_deselects_the_slower_tiers_and_knows_their_marks():
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    addopts = ini["addopts"]
    assert addopts[addopts.index("-m") + 1] == "not integration and not e2e"
    assert sorted(m.split(":")[0] for m in ini["markers"]) == sorted(TIER_MARKS)


def test_the_guard_refuses_every_way_to_start_a_process_or_a_server():
    """Nested in the guard this unit test already runs under (its own list records, and on leaving it the outer
    guard is back in place: test_the_guard_leaves_everything_as_it_found_it)."""
    seen: list[str] = []
    with unit_tier_guard(seen):
        with pytest.raises(UnitTierViolation):
            subprocess.run([sys.executable, "-c", "pass"])
        with pytest.raises(UnitTierViolation):
            os.fork()
        with pytest.raises(UnitTierViolation):
            multiprocessing.get_context("spawn").Process(target=print).start()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            with pytest.raises(UnitTierViolation):
                s.listen()
    assert len(seen) == 4
    assert all("mark it @pytest.mark.integration" in m and "@pytest.mark.e2e" in m for m in seen)
    assert "subprocess.Popen" in seen[0] and "os.fork" in seen[1] and "multiprocessing" in seen[2]
    assert "listened on a socket" in seen[3]


def test_the_guard_leaves_everything_as_it_found_it():
    before = (subprocess.Popen._execute_child, os.fork, multiprocessing.process.BaseProcess.start,
              socket.socket.listen, "listen" in vars(socket.socket))
    with unit_tier_guard([]):
        pass
    after = (subprocess.Popen._execute_child, os.fork, multiprocessing.process.BaseProcess.start,
             socket.socket.listen, "listen" in vars(socket.socket))
    assert before == after
