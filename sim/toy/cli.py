"""`python -m sim toy`: run the 24-prompt GRPO toy headless, print a summary, optionally save the history.

    python -m sim toy --iterations 300 --n-seeds 64 --out history.csv
    python -m sim toy --dynamic-sampling --json

One flag per ToyConfig field (same names, dashes for underscores), built from the field declarations in
sim/toy/model.py, which also validate the values. Bad input (a bad flag or value, an output file that cannot
be written) prints one line `error: ...` and returns 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from sim.export import write_history
from sim.runtime.args import ArgError, Parser
from sim.runtime.files import check_apart, check_writable, shipped, shown_path
from sim.runtime.interrupt import interruptible
from sim.settings import add_flags, from_args
from sim.toy import ToyConfig, ToyHistory, expected_run, history_rows, run_toy


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m sim toy", description="Run the chapter's 24-prompt GRPO toy headless.",
                    formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_flags(parser, ToyConfig)
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
        "frac_all_correct": mean(h.metrics["frac_all_correct"]),  # (T,) iteration t+1's groups
        "frac_all_wrong": mean(h.metrics["frac_all_wrong"]),
        "expected_zero_frac": mean(h.metrics["expected_zero_frac"]),
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


def _check_out(text: str | None) -> Path | None:
    """The --out path, refused before any work if it has the wrong extension or cannot be written
    (sim.runtime.files.check_writable: a directory, a symlink loop, a device, a long name, no such directory)."""
    if text is None:
        return None
    if not isinstance(text, str):  # argparse (3.11) turns --out=-- into [] instead of the text "--"
        raise ArgError("--out needs a file name ending in .csv or .json")
    out = Path(text)
    if out.suffix not in (".csv", ".json"):
        raise ArgError(f"--out must end in .csv or .json, got {shown_path(text)!r}")
    if not out.parent.is_dir():
        raise ArgError(f"cannot write {shown_path(text)}: no such directory")
    target = check_writable(out, "cannot write")  # "cannot write PATH: why"
    check_apart([("--out", text)], keep=shipped())  # e.g. assets/data/tinylm_sft.json, TinyLM's sidecar
    return target


def main(argv: list[str] | None = None) -> int:
    """Exit 0; 2 for bad input (one line); 130 or 143 after Ctrl-C or SIGTERM (one line, sim/runtime/interrupt.py)."""
    argv = sys.argv[1:] if argv is None else argv
    seen: dict = {}
    return interruptible(lambda: _main(argv, seen), lambda: [seen.get("out")])


def _main(argv: list[str], seen: dict) -> int:
    try:
        args = build_parser().parse_args(argv)
        out = seen["out"] = _check_out(args.out)
        cfg = from_args(ToyConfig, args)
        start = time.perf_counter()
        h = expected_run(cfg) if args.expected else run_toy(cfg)
        seconds = time.perf_counter() - start
        if out is not None:
            write_history(history_rows(h), cfg, out)
    except SystemExit as done:  # --help
        return int(done.code or 0)
    except (ArgError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # the output vanished or the disk filled between the check and the write
        print(f"error: cannot write {shown_path(args.out)}: {err.strerror}", file=sys.stderr)
        return 2
    s = summary(h, seconds)
    try:
        print(json.dumps(s) if args.json else _text_summary(s))
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
