"""`python -m sim tinylm`: SFT checkpoint -> GRPO -> pass@k before and after (story.run_story), as a table or JSON.

    python -m sim tinylm                    # from the shipped SFT checkpoint (assets/data/tinylm_sft.pt)
    python -m sim tinylm --preset chapter-lab   # the chapter's lab: GRPO sharpens (sim/tinylm/presets.py)
    python -m sim tinylm --from-scratch     # train SFT first (~0.5 pass@1), then GRPO
    python -m sim tinylm --json --iterations 20 --group-size 4
    python -m sim tinylm --trainer trl --json   # the same run in TRL's GRPOTrainer (requirements-trl.txt)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

from sim.runtime.args import ArgError, Parser
from sim.runtime.files import check_apart, check_writable, shipped, shown_path, write_atomically
from sim.runtime.interrupt import Terminated, interruptible  # noqa: F401 (cli.Terminated)
from sim.settings import add_flags, from_args
from sim.tinylm.checkpoint import ASSET, CheckpointError, check_save_path, sidecar_path
from sim.tinylm.grpo_train import GRPOConfig
from sim.tinylm.presets import PRESET_NAMES, PRESETS, preset_changes
from sim.tinylm.sft import SFTConfig
from sim.tinylm.story import KS, StoryConfig, run_story
from sim.tinylm.trl_bridge import ProcessCountError
from sim.validate import neutral

RANK_GRACE_S = 30.0  # a rank > 0 that finds a bad process count waits this long for rank 0 to say so


def build_parser() -> argparse.ArgumentParser:
    """A flag per GRPOConfig field (declared in grpo_train.py: range and help), plus the story's own."""
    p = Parser(
        prog="python -m sim tinylm",
        description="SFT + GRPO on a tiny transformer learning a+b.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--checkpoint", default=str(ASSET), help="SFT checkpoint to start from")
    p.add_argument("--save-sft", metavar="PATH", help="train SFT first (implied) and save the model here")
    p.add_argument("--sft-seed", type=int, default=0, help="seed of the SFT run (--from-scratch)")
    p.add_argument("--preset", choices=PRESET_NAMES, default="default",
                   help="; ".join(f"{n}: {q.title}" for n, q in PRESETS.items()) + " (other flags override it)")
    add_flags(p, StoryConfig)  # --eval-samples, --from-scratch
    add_flags(p, GRPOConfig, flags={"prompts_per_iter": "--prompts", "group_size": ("--group-size", "-G")})
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--out", metavar="PATH", help="write the JSON summary here (with --json: only there)")
    p.add_argument("--trainer", choices=("sim", "trl"), default="sim",
                   help="sim: this project's trainer; trl: TRL's GRPOTrainer (sim/tinylm/trl_bridge.py)")
    p.add_argument("--max-seconds", type=float, help="--trainer trl: stop GRPO after this long, then evaluate")
    p.add_argument("--keep-trainer-state", metavar="PATH",
                   help="--trainer trl: also write the run's trainer_state.json (TRL's log_history) here, the file "
                        "`python -m sim diagnose` reads")
    p.add_argument("--diagnosis", metavar="PATH",
                   help="--trainer trl: keep `python -m sim diagnose`'s findings here while it trains, with the log "
                        "(a trainer_state.json the Your run page reads); each rule that fires prints a line on stderr")
    return p


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The flags, with --preset's settings as the defaults that the other flags override."""
    p = build_parser()
    for arg in argv:  # argparse reads `--checkpoint=--` as the value [] (it drops "--"), which no flag can take
        if arg.startswith("--") and arg.endswith("=--"):
            p.error(f"argument {arg[:-3]}: expected one argument")
    p.set_defaults(**preset_changes(p.parse_known_args(argv)[0].preset))
    return p.parse_args(argv)


def story_config(args: argparse.Namespace) -> StoryConfig:
    """The flags as a StoryConfig (ValueError for an out-of-range value)."""
    return from_args(StoryConfig, args, grpo=from_args(GRPOConfig, args), checkpoint=args.checkpoint,
                     from_scratch=args.from_scratch or bool(args.save_sft),
                     sft=SFTConfig(seed=args.sft_seed, threads=args.threads))


def check_output(path: str, flag: str = "--save-sft") -> None:
    """Fail before training, not after it, when `path` cannot be written (a ValueError: one line). A checkpoint
    (--save-sft) follows check_save_path's rules; any other output (--out) sim.runtime.files.check_writable's."""
    if flag == "--save-sft":
        check_save_path(path, flag)
    else:
        check_writable(path, flag)


def outputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The files the run writes, as (flag, path): the ones given."""
    return [(flag, path) for flag, path in (("--save-sft", args.save_sft), ("--out", args.out),
                                            ("--keep-trainer-state", args.keep_trainer_state),
                                            ("--diagnosis", args.diagnosis)) if path]


def check_apart_outputs(args: argparse.Namespace) -> None:
    """Before any work (OutputPathError, one line): no output is the checkpoint the run starts from or its sidecar,
    a file the playground ships, or another output of the run (--save-sft a.pt --out a.json: the sidecar). The
    one exception is the shipped checkpoint's documented rebuild, --save-sft assets/data/tinylm_sft.pt."""
    written = outputs(args)
    if args.save_sft:
        written.insert(1, ("the sidecar of --save-sft", sidecar_path(args.save_sft)))
    reads = not (args.from_scratch or args.save_sft)  # --save-sft trains SFT first: --checkpoint is not read
    inputs = [("--checkpoint", args.checkpoint), ("the sidecar of --checkpoint", sidecar_path(args.checkpoint))]
    rebuild = bool(args.save_sft) and os.path.realpath(args.save_sft) == os.path.realpath(ASSET)
    check_apart(written, inputs=inputs if reads else (),
                keep=shipped(but=(ASSET, sidecar_path(ASSET)) if rebuild else ()))


def format_table(res: dict) -> str:
    n = res["eval_samples"]
    before, after = res["pass_at_k_before"], res["pass_at_k_after"]
    lines = [
        f"TinyLM: GRPO {res['iterations']} iterations, {res['heldout_problems']} held-out problems x {n} samples",
        f"{'':>12} {'SFT':>8} {'GRPO':>8}",
    ]
    for k in (k for k in KS if k <= n):
        lines.append(f"{'pass@' + str(k):>12} {before[k - 1]:8.3f} {after[k - 1]:8.3f}")
    lines.append(f"{'never solved':>12} {len(res['never_solved_before']):8d} {len(res['never_solved_after']):8d}")
    cross = "none" if res["crossover_k"] is None else f"{res['crossover_k']:.1f}"
    lines.append(f"curves cross at k = {cross}")
    sft = "" if res["sft"] is None else f"SFT {res['sft']['seconds']:.1f} s, "
    lines.append(f"time: {sft}GRPO {res['grpo_seconds']:.1f} s, eval {res['eval_seconds']:.1f} s, "
                 f"total {res['wall_seconds']:.1f} s")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Exit 0 on success; 2 for bad input (flags, values, a run over the memory cap, an unwritable --save-sft,
    an output that is an input or a shipped file, a bad --checkpoint); 1 when the shipped checkpoint itself is
    missing or broken (rebuild it); 130 after Ctrl-C and 143 after SIGTERM, each with one line and no temporary
    folder left (sim/runtime/interrupt.py: it names an SFT checkpoint saved before the interrupt)."""
    seen: dict = {}

    def written():
        args = seen.get("args")
        return [getattr(args, "save_sft", None), getattr(args, "out", None)]

    return interruptible(lambda: _main(argv, seen), written)


def _main(argv: list[str], seen: dict) -> int:
    try:
        args = seen["args"] = parse_args(argv)
        cfg = story_config(args)
        for flag, path in outputs(args):
            check_output(path, flag)
        check_apart_outputs(args)
        for flag, value in (("--max-seconds", args.max_seconds), ("--keep-trainer-state", args.keep_trainer_state),
                            ("--diagnosis", args.diagnosis)):
            if value is not None and args.trainer != "trl":
                raise ValueError(f"{flag} applies to --trainer trl only")
        if args.trainer == "trl":
            from sim.tinylm.trl_bridge import trl_story  # imports TRL only now: MissingTRL (exit 2) without it

            res = trl_story(cfg, save_sft=args.save_sft, max_seconds=args.max_seconds,
                            keep_trainer_state=args.keep_trainer_state, diagnosis=args.diagnosis)
        else:
            res = run_story(cfg, save_sft=args.save_sft)
        if res is None:  # a rank > 0 of a multi-process TRL run: rank 0 reports
            return 0
        if args.out:
            write_atomically({Path(args.out): (json.dumps(res) + "\n").encode()})
    except ArgError as e:
        print(f"error: {e} (python -m sim tinylm --help)", file=sys.stderr)
        return 2
    except ProcessCountError as e:  # every rank finds it; rank 0 says it
        if e.rank == 0:
            print(f"error: {e}", file=sys.stderr)
        else:  # let rank 0 say it first: the launcher stops every rank once one exits (torchrun's SIGTERM)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            time.sleep(RANK_GRACE_S)
        return 2
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1 if os.path.realpath(args.checkpoint) == str(ASSET) else 2  # realpath: no error on a symlink loop
    except OSError as e:  # e.g. the disk filled up while saving
        print(f"error: {type(e).__name__}: {neutral(e)}", file=sys.stderr)
        return 2
    if args.json and args.out:  # the object is in the file: said once, as diagnose and plan say it
        print(f"wrote {shown_path(args.out)}")
    else:
        print(json.dumps(res) if args.json else format_table(res))
    return 0
