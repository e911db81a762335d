"""Side by side on one machine: TinyLM's GRPO run in this project's trainer and in TRL's GRPOTrainer.

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python scripts/bench_trainers.py [--time-cap 300] [--processes 1,2]
    python scripts/bench_trainers.py --tiny           # a few iterations of each, for the test suite
    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python scripts/bench_trainers.py --check   # 20 s each, TRL on 1 process (CI)

The same task, start (the shipped SFT checkpoint), settings (GRPOConfig defaults unless flags say otherwise) and
evaluation for: `sim` (in this process), `trl_1` (`python -m sim tinylm --trainer trl`) and `trl_2`
(`accelerate launch --multi_gpu --num_processes 2 -m sim.tinylm.trl_run`: on a CPU the gloo backend). Each
trainer trains until its iterations are done or --time-cap seconds have passed, then the held-out evaluation
runs. Prints one JSON line: the load average before and after, the settings, and per trainer completions per
second of training, optimizer steps, the first iteration and second at which the exact held-out pass@1
reached --target (null if never: see best_pass_at_1), the final exact and sampled pass@1 and pass@64.
TRL's seconds exclude its import and process start (reported apart as wall_seconds). Then the figures; there is
no target (the comparison is the figure). --check is --time-cap 20 --processes 1 --eval-samples 8;
--write-docs writes the figures into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scripts.benchdoc import Report, add_arguments  # noqa: E402
from sim.tinylm.data import split  # noqa: E402
from sim.tinylm.evaluate import expected_pass_at_1, passk_eval  # noqa: E402
from sim.tinylm.grpo_train import GRPOConfig, GRPOTrainer  # noqa: E402
from sim.tinylm.story import StoryConfig, starting_model  # noqa: E402

TINY = {"iterations": 2, "prompts_per_iter": 2, "group_size": 4, "eval_every": 1}
FLAGS = {"iterations": "--iterations", "prompts_per_iter": "--prompts", "group_size": "-G",
         "eval_every": "--eval-every", "seed": "--seed"}  # the GRPOConfig fields both trainers get, as CLI flags


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def row(iterations: int, seconds: float, curve: list, times: list, evals: dict, cfg: GRPOConfig, target: float) -> dict:
    """One trainer's line: throughput, steps, time to target, finals. curve: (iteration, exact pass@1); times:
    training seconds at each point of the curve."""
    hit = next(((it, t) for (it, p), t in zip(curve, times, strict=True) if p >= target), (None, None))
    k64 = min(64, len(evals["after"])) - 1
    return {
        "completions_per_second": iterations * cfg.prompts_per_iter * cfg.group_size / seconds if seconds else None,
        "iterations": iterations,
        "optimizer_steps": iterations * cfg.mu,
        "grpo_seconds": seconds,
        "iteration_to_target": hit[0],
        "seconds_to_target": hit[1],
        "best_pass_at_1": max(p for _, p in curve),
        "final_pass_at_1_exact": curve[-1][1],
        "final_pass_at_1": evals["after"][0],
        f"final_pass_at_{k64 + 1}": evals["after"][k64],
    }


def bench_sim(story: StoryConfig, cap: float, target: float) -> dict:
    model, _ = starting_model(story)
    t0 = time.perf_counter()
    trainer = GRPOTrainer(model, story.grpo)
    times = [0.0]
    for m in trainer.steps():
        over = time.perf_counter() - t0 > cap
        if over and "pass_at_1" not in m:  # the last point of the curve is where training stopped
            trainer.pass_at_1.append((trainer.iteration, expected_pass_at_1(trainer.policy, trainer.heldout)))
        if "pass_at_1" in m or over:
            times.append(time.perf_counter() - t0)
        if over:
            break
    seconds = time.perf_counter() - t0
    n, seed = story.eval_samples, story.grpo.seed
    heldout = split()[1]
    after = passk_eval(trainer.policy.eval(), heldout, n=n, seed=seed)["pass_at_k"].tolist()
    return row(trainer.iteration, seconds, trainer.pass_at_1, times, {"after": after}, story.grpo, target)


def bench_trl(story: StoryConfig, processes: int, cap: float, target: float, timeout: float) -> dict:
    flags = [x for k, flag in FLAGS.items() for x in (flag, str(getattr(story.grpo, k)))]
    flags += ["--eval-samples", str(story.eval_samples), "--max-seconds", str(cap), "--json"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        if processes == 1:
            cmd = [sys.executable, "-m", "sim", "tinylm", "--trainer", "trl", *flags, "--out", str(out)]
        else:
            cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes",
                   str(processes), "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
                   "-m", "sim.tinylm.trl_run", *flags, "--out", str(out)]  # fmt: skip
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1], "returncode": proc.returncode}
        res = json.loads(out.read_text())
    curve = [tuple(p) for p in res["exact_pass_at_1"]]
    line = row(res["iterations"], res["grpo_seconds"], curve, res["exact_pass_at_1_seconds"],
               {"after": res["pass_at_k_after"]}, story.grpo, target)  # fmt: skip
    digests = {r["weights_sha256"] for r in res["ranks"]}
    line |= {"wall_seconds": wall, "processes": res["num_processes"], "backend": res["backend"],
             "rank_steps": [r["steps"] for r in res["ranks"]],
             "ranks_agree": len(digests) == 1, "trained": res["start_weights_sha256"] not in digests}  # fmt: skip
    return line


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--time-cap", type=float, default=None, help="seconds of training per trainer at most (300)")
    p.add_argument("--iterations", type=int, default=GRPOConfig().iterations)
    p.add_argument("--eval-samples", type=int, default=None, help="samples per held-out problem (64)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", type=float, default=0.80, help="exact held-out pass@1 to time")
    p.add_argument("--processes", default=None, help="TRL runs: process counts, comma-separated (empty: none; "
                   "default 1,2)")
    p.add_argument("--tiny", action="store_true", help=f"a tiny budget for the test suite: {TINY}, 2 eval samples")
    add_arguments(p)
    args = p.parse_args(argv)
    for name, normal, check in (("time_cap", 300.0, 20.0), ("eval_samples", 64, 8), ("processes", "1,2", "1")):
        if getattr(args, name) is None:
            setattr(args, name, check if args.check else normal)
    grpo = GRPOConfig(**TINY, seed=args.seed) if args.tiny else GRPOConfig(iterations=args.iterations, seed=args.seed)
    story = StoryConfig(grpo=grpo, eval_samples=2 if args.tiny else args.eval_samples)
    procs = [int(x) for x in args.processes.split(",") if x.strip()]
    out: dict = {"loadavg_before": loadavg(), "cpus": os.cpu_count(), "time_cap": args.time_cap,
                 "settings": {k: getattr(grpo, k) for k in (*TINY, "seed", "lr", "loss_type", "beta")},
                 "eval_samples": story.eval_samples}  # fmt: skip
    out["sim"] = bench_sim(story, args.time_cap, args.target)
    for n in procs:
        out[f"trl_{n}"] = bench_trl(story, n, args.time_cap, args.target, timeout=args.time_cap * 2 + 300)
    out["loadavg_after"] = loadavg()
    print(json.dumps(out))
    report = Report("trainers", "TinyLM's GRPO run: this project's trainer and TRL's GRPOTrainer")
    for name in ("sim", *(f"trl_{n}" for n in procs)):
        r = out[name]
        label = "sim (1 process)" if name == "sim" else f"trl, {name[4:]} process{'es' * (name != 'trl_1')}"
        if "error" in r:
            report.note(f"{label}: failed: {r['error']}")
            continue
        report.add(f"{label}: completions per second of training", round(r["completions_per_second"] or 0), "/s")
        report.add(f"{label}: iterations in the {args.time_cap:g} s cap", r["iterations"])
        reached = r["seconds_to_target"]  # None: not within the cap ("never" in the table)
        report.add(f"{label}: exact pass@1 >= {args.target} first at", float("inf") if reached is None else reached,
                   "s")
        report.add(f"{label}: final exact held-out pass@1", round(r["final_pass_at_1_exact"], 3))
    report.note(f"The defaults (P = {grpo.prompts_per_iter}, G = {grpo.group_size}, seed {args.seed}), each trainer "
                f"stopped after {args.time_cap:g} s of training or {grpo.iterations} iterations; {story.eval_samples} "
                "samples per held-out problem. No target: the comparison is the figure.")
    return report.finish(args)


if __name__ == "__main__":
    sys.exit(main())
