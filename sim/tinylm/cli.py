"""`python -m sim tinylm`: SFT checkpoint -> GRPO -> pass@k before and after, as a table or JSON.

    python -m sim tinylm                    # from the shipped SFT checkpoint (assets/tinylm_sft.pt)
    python -m sim tinylm --from-scratch     # train SFT first (~0.5 pass@1), then GRPO
    python -m sim tinylm --json --iterations 20 --group-size 4
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from sim.grpo import BASELINES, LOSS_TYPES, SCALES
from sim.tinylm.checkpoint import ASSET, REGENERATE, CheckpointError, load_checkpoint, save_checkpoint
from sim.tinylm.data import split
from sim.tinylm.evaluate import KS, compare, passk_eval
from sim.tinylm.grpo_train import LR_SCHEDULES, GRPOConfig, train_grpo
from sim.tinylm.sft import SFTConfig, train_sft


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit code 2
        raise _UsageError(message)


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    d = GRPOConfig()
    p = _Parser(
        prog="python -m sim tinylm",
        description="SFT + GRPO on a tiny transformer learning a+b.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--from-scratch", action="store_true", help="train SFT first instead of loading the checkpoint")
    p.add_argument("--checkpoint", default=str(ASSET), help="SFT checkpoint to start from")
    p.add_argument("--save-sft", metavar="PATH", help="with --from-scratch (implied): save the SFT model here")
    p.add_argument("--sft-seed", type=int, default=0, help="seed of the SFT run (--from-scratch)")
    p.add_argument("--iterations", type=int, default=d.iterations, help="GRPO iterations")
    p.add_argument("--prompts", type=int, default=d.prompts_per_iter, help="P, prompts per iteration")
    p.add_argument("--group-size", "-G", type=int, default=d.group_size, help="G, responses per prompt")
    p.add_argument("--lr", type=float, default=d.lr, help="AdamW learning rate")
    p.add_argument("--warmup", type=int, default=d.warmup, help="learning-rate warmup iterations")
    p.add_argument("--lr-schedule", choices=LR_SCHEDULES, default=d.lr_schedule, help="after warmup")
    p.add_argument("--adam-beta1", type=float, default=d.adam_beta1, help="AdamW first-moment decay")
    p.add_argument("--beta", type=float, default=d.beta, help="KL coefficient")
    p.add_argument("--mu", type=int, default=d.mu, help="inner steps per batch")
    p.add_argument("--clip-eps", type=float, default=d.clip_eps, help="PPO clip range")
    p.add_argument("--scale", choices=SCALES, default=d.scale, help="std scaling of the advantages")
    p.add_argument("--baseline", choices=BASELINES, default=d.baseline, help="advantage baseline")
    p.add_argument("--ddof", type=int, default=d.ddof, help="0 population std (chapter), 1 sample std (TRL)")
    p.add_argument("--loss-type", choices=LOSS_TYPES, default=d.loss_type, help="loss aggregation")
    p.add_argument("--temperature", type=float, default=d.temperature, help="sampling temperature")
    p.add_argument("--seed", type=int, default=d.seed, help="GRPO seed")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--eval-samples", type=int, default=64, help="samples per held-out problem for pass@k")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def run(args: argparse.Namespace) -> dict:
    """The whole story; returns the JSON-able result. Raises CheckpointError or ValueError."""
    grpo_cfg = GRPOConfig(
        iterations=args.iterations, prompts_per_iter=args.prompts, group_size=args.group_size, lr=args.lr,
        warmup=args.warmup, lr_schedule=args.lr_schedule, adam_beta1=args.adam_beta1, beta=args.beta, mu=args.mu,
        clip_eps=args.clip_eps, scale=args.scale,
        baseline=args.baseline, ddof=args.ddof, loss_type=args.loss_type, temperature=args.temperature,
        seed=args.seed, threads=args.threads,
    )  # fmt: skip
    if not 1 <= args.eval_samples <= 1024:
        raise ValueError(f"--eval-samples must be in [1, 1024], got {args.eval_samples}")
    t0 = time.perf_counter()
    sft_seconds = None
    if args.from_scratch or args.save_sft:
        sft = train_sft(SFTConfig(seed=args.sft_seed, threads=args.threads))
        model, sft_seconds = sft.model, sft.seconds
        if args.save_sft:
            save_checkpoint(model, args.save_sft, {
                "sft_config": SFTConfig(seed=args.sft_seed).to_dict(), "seed": args.sft_seed, "steps": sft.steps,
                "pass_at_1_exact": sft.pass_at_1, "sft_seconds": round(sft.seconds, 1), "regenerate": REGENERATE,
            })  # fmt: skip
    else:
        model, _ = load_checkpoint(args.checkpoint)
    _, heldout = split()
    t1 = time.perf_counter()
    trainer = train_grpo(model, grpo_cfg)
    grpo_seconds = time.perf_counter() - t1
    t2 = time.perf_counter()
    before = passk_eval(model, heldout, n=args.eval_samples, seed=args.seed)
    after = passk_eval(trainer.policy, heldout, n=args.eval_samples, seed=args.seed + 1)
    eval_seconds = time.perf_counter() - t2
    ks = [k for k in KS if k <= args.eval_samples]
    return {
        "pass_at_1_before": before["pass_at_1"],
        "pass_at_1_after": after["pass_at_1"],
        "pass_at_k_before": {str(k): float(before["pass_at_k"][k - 1]) for k in ks},
        "pass_at_k_after": {str(k): float(after["pass_at_k"][k - 1]) for k in ks},
        "never_solved_before": before["never_solved"],
        "never_solved_after": after["never_solved"],
        "crossover_k": compare(before, after)["crossover_k"],
        "sft_seconds": sft_seconds,
        "grpo_seconds": grpo_seconds,
        "eval_seconds": eval_seconds,
        "wall_seconds": time.perf_counter() - t0,
        "iterations": trainer.iteration,
        "eval_samples": args.eval_samples,
        "heldout_problems": len(heldout),
        "config": grpo_cfg.to_dict(),
    }


def format_table(res: dict) -> str:
    n = res["eval_samples"]
    lines = [
        f"TinyLM: GRPO {res['iterations']} iterations, {res['heldout_problems']} held-out problems x {n} samples",
        f"{'':>12} {'SFT':>8} {'GRPO':>8}",
    ]
    for k in res["pass_at_k_before"]:
        lines.append(f"{'pass@' + k:>12} {res['pass_at_k_before'][k]:8.3f} {res['pass_at_k_after'][k]:8.3f}")
    lines.append(f"{'never solved':>12} {res['never_solved_before']:8d} {res['never_solved_after']:8d}")
    cross = "none" if res["crossover_k"] is None else f"{res['crossover_k']:.1f}"
    lines.append(f"curves cross at k = {cross}")
    sft = "" if res["sft_seconds"] is None else f"SFT {res['sft_seconds']:.1f} s, "
    lines.append(f"time: {sft}GRPO {res['grpo_seconds']:.1f} s, eval {res['eval_seconds']:.1f} s, "
                 f"total {res['wall_seconds']:.1f} s")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
        res = run(args)
    except _UsageError as e:
        print(f"error: {e} (python -m sim tinylm --help)", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(res) if args.json else format_table(res))
    return 0
