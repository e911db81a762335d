"""The lab runner's costs, as one JSON line: a call of a student's function, all checks of a file, a hang.

    python scripts/bench_lab.py                # 200 calls, 5 full checks, 3 hangs of 1 s (about 10 s)
    python scripts/bench_lab.py --repeats 1    # the suite's tiny budget
    python scripts/bench_lab.py --check        # 3 repeats (CI); the lab has no speed target: figures only

per_call_ms: median wall time of Lab.call("k3_kl", ...) on a correct file (request, the student's function,
reply). checks_ms: median of check_all() on a fresh Lab (every check of every task, nothing cached but the
import). hang_extra_ms: a call that loops forever, minus its time limit (killing the worker and its children).
next_call_ms: the call right after a hang (the worker is replaced). hang_total_ms: the two together, the
hang's whole cost beyond its limit (where a fresh worker's start is paid differs between designs).
n_checks: the cases check_all ran. --write-docs writes the figures into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIXTURES = ROOT / "tests" / "fixtures" / "lab"

from scripts.benchdoc import Report, add_arguments  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=None,
                        help="full checks and hangs measured (calls: 40 each; default 5, 3 with --check)")
    parser.add_argument("--hang", type=float, default=1.0, help="time limit of the hanging call, seconds")
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.repeats = args.repeats or (3 if args.check else 5)
    if not (1 <= args.repeats <= 1000 and 0.05 <= args.hang <= 60):
        print("error: --repeats must be in 1..1000 and --hang in 0.05..60", file=sys.stderr)
        return 2
    import numpy as np

    from sim.lab.checks import CASES
    from sim.lab.runner import Lab, StudentError

    correct = Lab(FIXTURES / "correct")
    x = np.log(np.linspace(0.1, 0.9, 8))
    assert not isinstance(correct.call("k3_kl", x, x), StudentError)  # the worker is up, the file imported
    calls = []
    for _ in range(40 * args.repeats):
        t0 = time.perf_counter()
        correct.call("k3_kl", x, x + 0.1)
        calls.append(time.perf_counter() - t0)
    checks = []
    for _ in range(args.repeats):
        lab = Lab(FIXTURES / "correct")
        t0 = time.perf_counter()
        results = lab.check_all()
        checks.append(time.perf_counter() - t0)
        assert all(r.passed for r in results), results
    extra, after = [], []
    for _ in range(args.repeats):
        hangs = Lab(FIXTURES / "hangs", timeout=args.hang)
        t0 = time.perf_counter()
        got = hangs.call("k3_kl", x, x)
        extra.append(time.perf_counter() - t0 - args.hang)
        assert isinstance(got, StudentError) and got.kind == "timeout", got
        t0 = time.perf_counter()
        ok = hangs.call("group_advantages", np.array([1.0, 0, 0, 1]), 4)
        after.append(time.perf_counter() - t0)
        assert not isinstance(ok, StudentError), ok
    ms = lambda xs: round(1000 * statistics.median(xs), 3)  # noqa: E731
    total = [a + b for a, b in zip(extra, after, strict=True)]
    print(json.dumps({"per_call_ms": ms(calls), "checks_ms": ms(checks), "n_checks": sum(map(len, CASES.values())),
                      "hang_extra_ms": ms(extra), "next_call_ms": ms(after), "hang_total_ms": ms(total),
                      "repeats": args.repeats, "loadavg": os.getloadavg()[0]}))
    report = Report("lab", "The lab runner (a student's code in worker processes)")
    report.add("a call of a student's function (median)", ms(calls), "ms")
    report.add(f"all {sum(map(len, CASES.values()))} checks of a file (median)", ms(checks), "ms")
    report.add(f"a hang beyond its limit: the kill + the next call (median, limit {args.hang:g} s)", ms(total), "ms")
    report.add("the hang: the kill", ms(extra), "ms")
    report.add("the hang: the next call (a fresh worker)", ms(after), "ms")
    report.note(f"Wall clock, {args.repeats} repeats of the checks and the hang, {40 * args.repeats} calls; "
                "no target: the figures say what a student's code costs the server.")
    return report.finish(args)


if __name__ == "__main__":
    raise SystemExit(main())
