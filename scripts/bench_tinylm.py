"""Benchmark TinyLM on this CPU: SFT from scratch, GRPO from the shipped checkpoint (3 seeds), pass@k eval.

    OMP_NUM_THREADS=1 python scripts/bench_tinylm.py [--seeds 3] [--iterations N] [--skip-sft]

Prints one JSON object: the load average and `import torch` time; SFT wall/CPU seconds, steps and
pass@1; per GRPO seed (default settings, from the shipped checkpoint) the wall and CPU time,
final exact held-out pass@1 and the first iteration/time it reached 0.80, completions/s and
generated tokens/s (tokens up to and including <eos>); the 300 x 64 evaluation time. Timings on a
shared machine are noisy: read the medians, and compare wall with CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

_t = time.perf_counter()
import torch  # noqa: E402, F401

IMPORT_TORCH_S = time.perf_counter() - _t

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.tinylm.checkpoint import load_checkpoint  # noqa: E402
from sim.tinylm.data import split  # noqa: E402
from sim.tinylm.evaluate import passk_eval  # noqa: E402
from sim.tinylm.grpo_train import GRPOConfig, GRPOTrainer  # noqa: E402
from sim.tinylm.sft import SFTConfig, train_sft  # noqa: E402


def bench_grpo(model, seed: int, iterations: int | None, target: float = 0.8) -> dict:
    cfg = GRPOConfig(seed=seed) if iterations is None else GRPOConfig(seed=seed, iterations=iterations)
    t0, c0 = time.perf_counter(), time.process_time()
    trainer = GRPOTrainer(model, cfg)
    reached, tokens = None, 0.0
    for m in trainer.steps():
        tokens += m["completions/mean_length"] * cfg.prompts_per_iter * cfg.group_size
        if reached is None and m.get("pass_at_1", 0.0) >= target:
            reached = {"iteration": m["iteration"], "seconds": time.perf_counter() - t0}
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    completions = cfg.iterations * cfg.prompts_per_iter * cfg.group_size
    return {"seed": seed, "seconds": wall, "cpu_seconds": cpu, "pass_at_1": trainer.pass_at_1[-1][1],
            "reached_0.8": reached, "completions_per_s": completions / wall,
            "generated_tokens_per_s": tokens / wall}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--iterations", type=int, default=None)
    p.add_argument("--skip-sft", action="store_true")
    a = p.parse_args()
    out: dict = {"loadavg_1_5_15": os.getloadavg(), "import_torch_seconds": IMPORT_TORCH_S}
    if not a.skip_sft:
        c0 = time.process_time()
        sft = train_sft(SFTConfig())
        out["sft"] = {"seconds": sft.seconds, "cpu_seconds": time.process_time() - c0, "steps": sft.steps,
                      "pass_at_1_exact": sft.pass_at_1}  # fmt: skip
    model, _ = load_checkpoint()
    runs = [bench_grpo(model, s, a.iterations) for s in range(a.seeds)]
    out["grpo"] = runs
    out["grpo_median_seconds"] = statistics.median(r["seconds"] for r in runs)
    out["grpo_median_pass_at_1"] = statistics.median(r["pass_at_1"] for r in runs)
    out["grpo_median_completions_per_s"] = statistics.median(r["completions_per_s"] for r in runs)
    out["grpo_median_generated_tokens_per_s"] = statistics.median(r["generated_tokens_per_s"] for r in runs)
    t0 = time.perf_counter()
    passk_eval(model, split()[1], n=64)
    out["eval_300x64_seconds"] = time.perf_counter() - t0
    out["loadavg_1_5_15_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
