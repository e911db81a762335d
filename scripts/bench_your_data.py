"""Benchmark of reading a visitor's files (sim/yourdata: datafile.py, runlog.py, plan.py, diagnose.py).

    OMP_NUM_THREADS=1 python scripts/bench_your_data.py            # 9 repeats of each (about a minute)
    OMP_NUM_THREADS=1 python scripts/bench_your_data.py --quick    # 3 repeats
    OMP_NUM_THREADS=1 python scripts/bench_your_data.py --check    # each figure beside its target; exit 1 beyond 2x
    OMP_NUM_THREADS=1 python scripts/bench_your_data.py --write-docs  # also rewrite its docs/benchmarks.md section
    python scripts/bench_your_data.py --tiny                       # 100 steps, 1,000 prompts, 1 repeat (the test's)

Files, built in memory as the tools write them:
  * a 10,000-step trainer_state.json (json.dumps(indent=2, sort_keys=True), the keys a TRL 1.16.0 GRPOTrainer run
    logs per step, taken from assets/data/examples/tinylm_trl_trainer_state.json), and the same log as a W&B-style CSV
    (`train/` prefixes);
  * a 100,000-prompt CSV, `prompt,correct,samples`, 64 samples per prompt;
  * two hostile files the caps refuse: a CSV header of 10^6 columns and 200,000 nested JSON brackets.
Prints medians over repeats of wall and process CPU seconds (CPU time is the steadier figure on a shared
machine) for parsing (bytes -> arrays) and for the analysis after it (diagnose, plan), and the load average.
Targets (--check): parsing a 10,000-step log under 1 s, a 100,000-prompt CSV under 2 s, each refusal under 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from scripts.benchdoc import Report, add_arguments  # noqa: E402
from sim.yourdata.datafile import DataError  # noqa: E402
from sim.yourdata.diagnose import diagnose  # noqa: E402
from sim.yourdata.plan import load_pool, plan  # noqa: E402
from sim.yourdata.runlog import load_run_log  # noqa: E402

EXAMPLE = ROOT / "assets" / "data" / "examples" / "tinylm_trl_trainer_state.json"
LABELS = {"log_10k_json_parse": "parse a 10,000-step trainer_state.json", "log_10k_csv_parse": "parse the same log as "
          "a W&B CSV", "log_10k_diagnose": "diagnose it (every rule)", "pool_100k_parse": "parse a 100,000-prompt CSV",
          "pool_100k_plan": "plan it (G = 2..64, pass@k, the toy's quantiles)",
          "refuse_1e6_columns": "refuse a 10^6-column CSV", "refuse_deep_json": "refuse 200,000 nested brackets"}
TARGETS = {"log_10k_json_parse": 1.0, "log_10k_csv_parse": 1.0, "pool_100k_parse": 2.0, "refuse_1e6_columns": 0.5,
           "refuse_deep_json": 0.5}


def trainer_state(steps: int) -> bytes:
    """A trainer_state.json of `steps` steps with the example run's keys, as transformers writes it."""
    keys = sorted(k for k in json.loads(EXAMPLE.read_text())["log_history"][0] if k != "step")
    rng = np.random.default_rng(0)
    values = rng.random((steps, len(keys)))  # (T, K)
    history = [{"step": t + 1, **{k: float(v) for k, v in zip(keys, row, strict=True)}}
               for t, row in enumerate(values)]
    history.append({"step": steps, "train_runtime": 1.0, "train_loss": 0.0})
    return (json.dumps({"global_step": steps, "log_history": history}, indent=2, sort_keys=True) + "\n").encode()


def log_csv(state: bytes) -> bytes:
    rows = [r for r in json.loads(state)["log_history"] if "reward" in r]
    keys = [k for k in rows[0] if k != "step"]
    lines = ["train/global_step," + ",".join(f"train/{k}" for k in keys)]
    lines += [f"{r['step']}," + ",".join(repr(r[k]) for k in keys) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def pool_csv(prompts: int) -> bytes:
    c = np.random.default_rng(1).binomial(64, np.random.default_rng(2).beta(0.6, 0.6, size=prompts))
    return ("prompt,correct,samples\n" + "".join(f"{i % 97}+{i % 89}=,{k},64\n" for i, k in enumerate(c))).encode()


def measure(fn, repeats: int) -> dict:
    fn()  # warm-up
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return {"wall_s": round(statistics.median(walls), 4), "cpu_s": round(statistics.median(cpus), 4)}


def refused(data: bytes, name: str):
    def run():
        try:
            load_run_log(data, name)
        except DataError:
            return
        raise AssertionError(f"{name} was not refused")

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 9")
    parser.add_argument("--tiny", action="store_true", help="100 steps, 1,000 prompts, 1 repeat (checks that the "
                        "script runs; its figures mean little)")
    add_arguments(parser)
    args = parser.parse_args(argv)
    repeats = 1 if args.tiny else 3 if args.quick else 9
    state = trainer_state(100 if args.tiny else 10_000)
    csv_log, pool = log_csv(state), pool_csv(1000 if args.tiny else 100_000)
    wide = (",".join(f"c{i}" for i in range(10**6)) + "\n").encode()
    deep = b"[" * 200_000 + b"]" * 200_000
    log = load_run_log(state, "trainer_state.json")
    parsed_pool = load_pool(pool, "pool.csv")
    print(f"files: trainer_state.json {len(state) / 2**20:.1f} MB ({len(log.steps):,} steps x {len(log.metrics)} "
          f"metrics), W&B CSV {len(csv_log) / 2**20:.1f} MB, pool CSV {len(pool) / 2**20:.1f} MB "
          f"({parsed_pool.rate.size:,} prompts), {len(wide) / 2**20:.1f} MB header, {len(deep) / 2**20:.1f} MB of "
          "brackets")
    figures = {
        "log_10k_json_parse": measure(lambda: load_run_log(state, "trainer_state.json"), repeats),
        "log_10k_csv_parse": measure(lambda: load_run_log(csv_log, "wandb.csv"), repeats),
        "log_10k_diagnose": measure(lambda: diagnose(log), repeats),
        "pool_100k_parse": measure(lambda: load_pool(pool, "pool.csv"), repeats),
        "pool_100k_plan": measure(lambda: plan(parsed_pool), repeats),
        "refuse_1e6_columns": measure(refused(wide, "wide.csv"), repeats),
        "refuse_deep_json": measure(refused(deep, "deep.json"), repeats),
    }
    print(json.dumps({"repeats": repeats, **figures}))
    report = Report("your-data", "Reading a visitor's files (sim/yourdata/datafile.py, runlog, plan, diagnose)")
    for name, f in figures.items():
        target = TARGETS.get(name)
        report.add(f"{LABELS[name]} (wall, median)", round(f["wall_s"] * 1000), "ms",
                   target=None if target is None else target * 1000)
    report.note(f"Medians of {repeats} repeats; files built in memory as TRL, W&B and a pool CSV write them.")
    return report.finish(args)


if __name__ == "__main__":
    sys.exit(main())
