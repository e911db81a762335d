"""`python -m sim toy`: run the 24-prompt GRPO toy headless, print a summary, optionally save the history.

    python -m sim toy --iterations 300 --n-seeds 64 --out history.csv
    python -m sim toy --dynamic-sampling --json

One flag per ToyConfig field (same names, dashes for underscores); ToyConfig validates the values.
Bad flags print one line `error: ...` and return 2.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
import time
from pathlib import Path

from sim.toy import ToyConfig, ToyHistory, expected_run, history_rows, run_toy

# Help per field: what it is and its allowed range (ToyConfig enforces the range).
HELP = {
    "n_prompts": "number of prompts P in the pool, 1..256",
    "d_min": "difficulty of the easiest prompt, -50..50",
    "d_max": "difficulty of the hardest prompt, -50..50 (d_j spread linearly d_min..d_max)",
    "difficulties": "explicit comma-separated difficulties, one per prompt, overriding d-min/d-max "
                    "(write --difficulties=-1,0,2 when the first is negative)",
    "u_init": "initial per-prompt parameter u_j, -50..50",
    "w_init": "initial shared skill w, -50..50",
    "group_size": "answers G sampled per prompt, 2..1024",
    "lr": "step size on the per-prompt parameters u, 0..1000",
    "lr_w": "step size on the shared skill w, 0..1000 (default: same as --lr)",
    "beta": "weight of the k3 KL penalty to the initial policy, 0..100",
    "scale": "advantage divisor: group std (GRPO), batch std (TRL), none (Dr. GRPO)",
    "baseline": "mean (GRPO), loo (RLOO leave-one-out), none (plain REINFORCE)",
    "ddof": "std convention: 0 population (chapter), 1 sample (TRL)",
    "eps": "added to the std before dividing, 1e-8..1",
    "mu": "inner gradient steps per batch (GRPO's mu), 1..16",
    "clip_eps": "PPO clip range below 1, (0, 1]",
    "clip_eps_high": "clip range above 1, (0, 10] (default: same as --clip-eps; DAPO uses 0.28)",
    "dynamic_sampling": "DAPO dynamic sampling: drop all-equal groups and draw more to refill the batch",
    "max_redraws": "cap on refill rounds per iteration under dynamic sampling, 0..64",
    "iterations": "training iterations T, 1..5000",
    "seed": "seed of the random generator, 0..2**63-1",
    "n_seeds": "independent runs S simulated at once, 1..1024",
}


class _ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump, no SystemExit
        raise _ArgError(message)


def _difficulties(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m sim toy", description="Run the chapter's 24-prompt GRPO toy headless.",
                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    for f in dataclasses.fields(ToyConfig):
        flag = "--" + f.name.replace("_", "-")
        default = f.default
        if f.name == "dynamic_sampling":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=HELP[f.name])
        elif f.name in ("scale", "baseline"):
            choices = ("group", "batch", "none") if f.name == "scale" else ("mean", "loo", "none")
            parser.add_argument(flag, choices=choices, default=default, help=HELP[f.name])
        elif f.name == "difficulties":
            parser.add_argument(flag, type=_difficulties, default=None, help=HELP[f.name])
        else:
            kind = int if isinstance(default, int) else float
            parser.add_argument(flag, type=kind, default=default, help=HELP[f.name])
    parser.add_argument("--expected", action="store_true",
                        help="run the exact average run (expected_run, one seed) instead of sampling")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help="write the per-iteration history to FILE.csv or FILE.json")
    parser.add_argument("--json", action="store_true", help="print a machine-readable summary to stdout")
    return parser


def summary(h: ToyHistory, seconds: float) -> dict:
    """Machine-readable summary: final and per-iteration mean accuracy, zero-gradient fractions."""
    mean = lambda x: [round(float(v), 6) for v in x.mean(axis=1)]  # noqa: E731 (over seeds)
    return {
        "config": dataclasses.asdict(h.config),
        "initial_accuracy": float(h.accuracy[0].mean()),
        "final_accuracy": float(h.accuracy[-1].mean()),
        "answers_sampled": float(h.answers[-1].mean()),
        "seconds": round(seconds, 4),
        "accuracy": mean(h.accuracy),  # (T+1,) state after t iterations
        "frac_all_correct": mean(h.frac_all_correct),  # (T,) iteration t+1's groups
        "frac_all_wrong": mean(h.frac_all_wrong),
        "expected_zero_frac": mean(h.expected_zero_frac),
    }


def _text_summary(s: dict) -> str:
    c, T = s["config"], len(s["frac_all_correct"])
    lines = [
        f"GRPO toy: P={c['n_prompts']} G={c['group_size']} lr={c['lr']} T={T} seeds={c['n_seeds']} "
        f"scale={c['scale']} baseline={c['baseline']} dynamic_sampling={c['dynamic_sampling']}",
        f"accuracy          {s['initial_accuracy']:.3f} -> {s['final_accuracy']:.3f}",
    ]
    for label, t in (("first iteration", 0), ("last iteration ", T - 1)):
        lines.append(f"{label}   all-correct groups {s['frac_all_correct'][t]:.3f}, all-wrong "
                     f"{s['frac_all_wrong'][t]:.3f} (expected zero-gradient {s['expected_zero_frac'][t]:.3f})")
    lines.append(f"answers sampled   {s['answers_sampled']:,.0f} per seed")
    lines.append(f"time              {s['seconds']:.3f} s")
    return "\n".join(lines)


def write_history(h: ToyHistory, path: Path) -> None:
    """Write history_rows(h) as CSV or JSON, chosen by the extension."""
    rows = history_rows(h)
    if path.suffix == ".json":
        path.write_text(json.dumps({"config": dataclasses.asdict(h.config), "rows": rows}))
        return
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except _ArgError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except SystemExit as done:  # --help
        return int(done.code or 0)
    out = None if args.out is None else Path(args.out)
    if out is not None and out.suffix not in (".csv", ".json"):
        print(f"error: --out must end in .csv or .json, got {args.out!r}", file=sys.stderr)
        return 2
    fields = {f.name: getattr(args, f.name) for f in dataclasses.fields(ToyConfig)}
    try:
        cfg = ToyConfig(**fields)
        start = time.perf_counter()
        h = expected_run(cfg) if args.expected else run_toy(cfg)
        seconds = time.perf_counter() - start
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    s = summary(h, seconds)
    try:
        print(json.dumps(s) if args.json else _text_summary(s))
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    if out is not None:
        try:
            write_history(h, out)
        except OSError as err:
            print(f"error: cannot write {args.out}: {err.strerror}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

