"""`python -m sim diagnose FILE` and `python -m sim plan FILE`: a run's log and a pool's pass rates, read with
Chapter 15 (sim/yourdata/diagnose.py, sim/yourdata/plan.py), as a report or one JSON object.

    python -m sim diagnose trainer_state.json          # findings: each rule, its threshold, the steps it holds at
    python -m sim diagnose metrics.csv -G 16 --json     # a W&B/TensorBoard export; every number as JSON
    python -m sim plan prompts.csv                      # share of dead groups for G = 2..64, pass@k, never-teach
    python -m sim plan prompts.csv -G 16 --batch-prompts 128 --json --out prompts_at_G16.csv

Every bad input (a missing or unreadable file, a directory, a file over 20 MB, binary, bad JSON, JSON nested too
deep, too many columns, a cell that is not a number, c > n, a bad flag) prints one line `error: ...` and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from sim.runtime.files import check_writable, shown_path, write_atomically
from sim.settings import add_flags, from_args
from sim.yourdata.datafile import DataError, read_path


class ArgError(Exception):
    """A bad flag: argparse's message, one line."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump
        raise ArgError(message)


def _run(argv: list[str], parser: argparse.ArgumentParser, work) -> int:
    """Parse, read FILE, call work(args, data) -> (json object, text); print one of them. Exit 2 on bad input."""
    try:
        args = parser.parse_args(argv)
        data = read_path(args.file)
        obj, text = work(args, data)
    except SystemExit as done:  # --help
        return int(done.code or 0)
    except (ArgError, DataError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # --out vanished or the disk filled between the check and the write
        print(f"error: cannot write: {err.strerror or type(err).__name__}", file=sys.stderr)
        return 2
    try:
        print(json.dumps(obj, ensure_ascii=False) if args.json else text)
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    return 0


# ---- diagnose -----------------------------------------------------------------------------------------------

def diagnose_parser() -> argparse.ArgumentParser:
    from sim.yourdata.diagnose import DiagnoseConfig

    p = Parser(prog="python -m sim diagnose", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
               description="Read a GRPO run's log (TRL's trainer_state.json, a CSV of TRL's metrics, verl's "
                           "file-logger JSON Lines, or a `python -m sim tinylm --trainer trl --json` summary) and list "
                           "what its curves say.")
    p.add_argument("file", metavar="FILE", help="trainer_state.json, a CSV of per-step metrics (W&B, TensorBoard, a "
                   "W&B panel), verl's metrics.jsonl, or a tinylm summary")
    add_flags(p, DiagnoseConfig, flags={"group_size": ("--group-size", "-G")})
    p.add_argument("--json", action="store_true", help="print one JSON object: every number and finding")
    return p


def diagnose_main(argv: list[str] | None = None) -> int:
    from sim.yourdata.diagnose import DiagnoseConfig, diagnose, text_report, to_json
    from sim.yourdata.runlog import load_run_log

    def work(args, data):
        d = diagnose(load_run_log(data, args.file), from_args(DiagnoseConfig, args))
        return to_json(d), text_report(d)

    return _run(sys.argv[1:] if argv is None else argv, diagnose_parser(), work)


# ---- plan ---------------------------------------------------------------------------------------------------

def plan_parser() -> argparse.ArgumentParser:
    from sim.yourdata.plan import PlanConfig

    p = Parser(prog="python -m sim plan", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
               description="Read a pool of prompts' base-model pass rates (a CSV: correct,samples or pass_rate) "
                           "and say how many groups would teach nothing at G = 2..64.")
    p.add_argument("file", metavar="FILE", help="CSV, one row per prompt: correct,samples or pass_rate")
    add_flags(p, PlanConfig, flags={"group_size": ("--group-size", "-G")})
    p.add_argument("--json", action="store_true", help="print one JSON object: every number the page shows")
    p.add_argument("--out", metavar="FILE.csv", help="also write one row per prompt at this G (prompt text "
                   "neutralised for spreadsheets)")
    return p


def plan_main(argv: list[str] | None = None) -> int:
    from sim.export import rows_csv
    from sim.toy import ToyConfig
    from sim.yourdata.plan import PlanConfig, load_pool, plan, prompt_rows, text_report, toy_difficulties

    def work(args, data):
        out = None
        if args.out is not None:
            if Path(args.out).suffix != ".csv":
                raise ArgError(f"--out must end in .csv, got {shown_path(args.out)}")
            out = check_writable(args.out, "--out")
        cfg = from_args(PlanConfig, args)
        pool = load_pool(data, args.file)
        d, _ = toy_difficulties(pool)
        toy = ToyConfig(n_prompts=len(d), difficulties=tuple(map(float, d)), group_size=cfg.group_size)
        p = plan(pool, cfg, toy)
        if out is not None:
            write_atomically({out: rows_csv(prompt_rows(pool, cfg.group_size)).encode()})
        return p, text_report(p)

    return _run(sys.argv[1:] if argv is None else argv, plan_parser(), work)
