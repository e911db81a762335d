"""Benchmark of the GRPO toy: count-based numpy path (run_toy) vs the per-answer torch reference.

    OMP_NUM_THREADS=1 python scripts/bench_toy.py            # full (about a minute)
    OMP_NUM_THREADS=1 python scripts/bench_toy.py --quick    # fewer repeats
    OMP_NUM_THREADS=1 python scripts/bench_toy.py --tiny     # one repeat of each, no 256-seed runs (the test's)
    OMP_NUM_THREADS=1 python scripts/bench_toy.py --check    # --quick's sizes, each target's verdict (CI)

Prints medians over repeats of wall time and of process CPU time (CPU time is the steadier figure on a
shared machine: it does not count time spent waiting for a core, though a busy neighbour still slows
every instruction: the load average is printed before and after), and the minimum CPU time (the figure
closest to an idle machine). The targets:
  a 300-iteration run with 64 seeds (G = 8) under 50 ms; cost at G = 64 within 1.5x of G = 8;
  at least 20x the straightforward per-answer version at G = 64.
--check exits 1 when one is missed by more than 2x; --write-docs writes the figures into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from scripts.benchdoc import Report, add_arguments, machine, measure  # noqa: E402
from sim.toy import ToyConfig, expected_run, run_toy, run_toy_reference  # noqa: E402
from sim.toy.binomial import binomial_sampler  # noqa: E402

# Settings that leave the defaults' shortcuts (update tables looked up once per iteration, no refills, no
# batch std): each adds work to the loop, measured so that a regression there shows too
OFF_DEFAULTS = {"KL penalty (beta = 0.04)": dict(beta=0.04), "mu = 2 clipped inner steps": dict(mu=2),
                "dynamic sampling": dict(dynamic_sampling=True), "batch std (scale = batch)": dict(scale="batch")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 9, shorter reference runs")
    parser.add_argument("--tiny", action="store_true", help="1 repeat, no 256-seed runs, 3 reference iterations "
                        "(checks that the script runs; its figures mean little)")
    add_arguments(parser)
    args = parser.parse_args(argv)
    args.quick = args.quick or args.check
    torch.set_num_threads(1)
    repeats = 1 if args.tiny else 3 if args.quick else 9
    seeds = (1, 64) if args.tiny else (1, 64, 256)
    few = 1 if args.tiny else max(3, repeats // 2)
    print(machine())

    print("cold start: exact binomial sampler tables (built once per G, then cached)")
    for G in (8, 64):
        binomial_sampler.cache_clear()
        t0 = time.process_time()
        binomial_sampler(G)
        print(f"  G={G:<3} {1e3 * (time.process_time() - t0):7.1f} ms CPU")

    print("\nfast path, run_toy (numpy, count-based), 300 iterations")
    head = (f"  {'G':>3} {'seeds':>5} {'wall ms':>9} {'CPU ms':>9} {'min CPU':>9} {'iter/s (CPU)':>13} "
            f"{'seed-iter/s (CPU)':>18}")
    print(head)
    fast = {}
    for G in (8, 64):
        for S in seeds:
            cfg = ToyConfig(group_size=G, n_seeds=S, iterations=300)
            wall, cpu, low = measure(lambda cfg=cfg: run_toy(cfg), repeats)
            fast[G, S] = cpu
            print(f"  {G:>3} {S:>5} {1e3 * wall:9.1f} {1e3 * cpu:9.1f} {1e3 * low:9.1f} {300 / cpu:13.0f} "
                  f"{300 * S / cpu:18.0f}")
    print("\nthe same loop off the defaults (G = 8, 64 seeds, 300 iterations)")
    print(f"  {'setting':<34} {'wall ms':>9} {'CPU ms':>9} {'min CPU':>9}")
    for label, extra in OFF_DEFAULTS.items():
        cfg = ToyConfig(n_seeds=64, iterations=300, **extra)
        wall, cpu, low = measure(lambda cfg=cfg: run_toy(cfg), few)
        print(f"  {label:<34} {1e3 * wall:9.1f} {1e3 * cpu:9.1f} {1e3 * low:9.1f}")

    print("\none new Training-dynamics setting (the page's default: ToyConfig(n_seeds=16, lr_w=0.2), 200 iterations)")
    page, setting = ToyConfig(n_seeds=16, lr_w=0.2), {}
    for name, fn in (("run_toy", run_toy), ("expected_run", expected_run)):
        wall, cpu, low = measure(lambda fn=fn: fn(page), repeats)
        setting[name] = cpu
        print(f"  {name:<13} {1e3 * wall:7.1f} ms wall {1e3 * cpu:7.1f} ms CPU (min {1e3 * low:.1f})")

    n_ref = 3 if args.tiny else 10 if args.quick else 30
    print(f"\nstraightforward path, run_toy_reference (every answer, sim.grpo + autograd), {n_ref} iterations")
    print(f"  {'G':>3} {'seeds':>5} {'wall ms':>9} {'CPU ms':>9} {'seed-iter/s (CPU)':>18}")
    ref = {}
    for G in (8, 64):
        cfg = ToyConfig(group_size=G, n_seeds=2, iterations=n_ref)
        wall, cpu, _ = measure(lambda cfg=cfg: run_toy_reference(cfg), few)
        ref[G] = cpu / (2 * n_ref)  # CPU seconds per seed-iteration; it loops over seeds, so it scales with S
        print(f"  {G:>3} {2:>5} {1e3 * wall:9.1f} {1e3 * cpu:9.1f} {1 / ref[G]:18.0f}")

    print(machine())
    report = Report("toy", "Toy engine (sim/toy)")
    report.add("run_toy, 300 iterations × 64 seeds, G = 8 (CPU, median)", round(1e3 * fast[8, 64], 1), "ms",
               target=50)
    report.add("the Training page's default setting: run_toy (CPU)", round(1e3 * setting["run_toy"], 1), "ms")
    report.add("the Training page's default setting: expected_run (CPU)", round(1e3 * setting["expected_run"], 1),
               "ms")
    for S in seeds:
        report.add(f"cost at G = 64 over G = 8, {S} seed{'s' * (S > 1)}", round(fast[64, S] / fast[8, S], 2), "×",
                   target=1.5)
    for S in seeds:
        speedup = ref[64] / (fast[64, S] / (300 * S))
        report.add(f"speed-up over the per-answer reference (sim.grpo + autograd), G = 64, {S} seed{'s' * (S > 1)}",
                   round(speedup), "×", target=20, higher_is_better=True)
    report.note(f"CPU time (process_time), median of {repeats} runs after a warm-up run; torch on one thread.")
    return report.finish(args)


if __name__ == "__main__":
    sys.exit(main())
