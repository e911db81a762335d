"""Record the shipped default TinyLM run's live metrics into assets/data/tinylm_run.json, for the lesson's player.

    python scripts/record_tinylm_run.py            # sim's trainer, StoryConfig() defaults, seed 0 (~15-30 s)
    python scripts/record_tinylm_run.py --out PATH --iterations 2 --eval-samples 2   # a tiny check (the suite)

Each GRPO iteration's reward, entropy, kl, frac_reward_zero_std (TRL names) and the held-out pass@1 where it was
checked (every eval_every iterations), then the pass@k curves before and after; read back by
sim.tinylm.figures.load_run_record.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.tinylm.figures import RUN_ASSET, RUN_METRICS, write_run_record  # noqa: E402
from sim.tinylm.story import StoryConfig, run_story  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(RUN_ASSET), help=f"where to write (default {RUN_ASSET})")
    ap.add_argument("--iterations", type=int, default=None, help="GRPO iterations (default: the shipped run's)")
    ap.add_argument("--eval-samples", type=int, default=None, help="samples per held-out problem (default 64)")
    args = ap.parse_args(argv)
    cfg = StoryConfig()
    if args.iterations is not None or args.eval_samples is not None:
        grpo = cfg.grpo if args.iterations is None else replace(cfg.grpo, iterations=args.iterations)
        cfg = replace(cfg, grpo=grpo, eval_samples=args.eval_samples or cfg.eval_samples)
    steps: list[dict] = []
    t0 = time.perf_counter()
    result = run_story(cfg, on_step=lambda trainer, m: steps.append(
        {k: m[k] for k in ("iteration", *RUN_METRICS) if k in m}))
    command = "python scripts/record_tinylm_run.py" + (" " + " ".join(argv) if argv else "")
    write_run_record(steps, result, args.out, command=command)
    print(f"wrote {args.out}: {len(steps)} iterations in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
