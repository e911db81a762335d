"""`python -m sim diagnose FILE` and `python -m sim plan FILE`: a run's log and a pool's pass rates, read with
Chapter 15 (sim/yourdata/diagnose.py, sim/yourdata/plan.py), as a report or one JSON object.

    python -m sim diagnose trainer_state.json          # findings: each rule, its threshold, the steps it holds at
    python -m sim diagnose metrics.csv -G 16 --json     # a W&B/TensorBoard export; every number as JSON
    python -m sim plan prompts.csv                      # share of dead groups for G = 2..64, pass@k, never-teach
    python -m sim plan prompts.csv -G 16 --batch-prompts 128 --json --out prompts_at_G16.csv
    python -m sim diagnose trainer_state.json --json --out findings.json   # the JSON in the file, one line here

`--out FILE.json` writes the JSON object `--json` prints (with --json, stdout then gets one line, not the object
again); plan's `--out FILE.csv` writes one row per prompt. Every bad input (a missing or unreadable file, a
directory, a file over 20 MB, binary, bad JSON, JSON nested too deep, too many columns, a cell that is not a number,
c > n, a bad flag, an --out that is FILE itself or a file the playground ships) prints one line `error: ...` and
exits 2, before FILE is read where it can. Ctrl-C or SIGTERM: `interrupted: nothing written`, exit 130 or 143.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sim.runtime.args import ArgError, Parser
from sim.runtime.files import check_apart, check_writable, shipped, shown_path, write_atomically
from sim.runtime.interrupt import interruptible
from sim.settings import add_flags, from_args
from sim.yourdata.datafile import DataError, read_path


def _check_out(args, suffixes: tuple[str, ...]) -> Path | None:
    """--out, refused before FILE is read: a suffix not in `suffixes`, a path that cannot be written, FILE itself
    (plan mine.csv --out mine.csv would replace the pool it reads) or a file the playground ships."""
    if getattr(args, "out", None) is None:
        return None
    if not isinstance(args.out, str) or Path(args.out).suffix not in suffixes:  # argparse hands [] for --out=--
        raise ArgError(f"--out must end in {' or '.join(suffixes)}, got {shown_path(args.out)}")
    out = check_writable(args.out, "--out")
    check_apart([("--out", args.out)], inputs=[("FILE", args.file)], keep=shipped())
    return out


def _json_text(obj) -> str:
    from sim.export import json_text  # control and bidi characters escaped, in the file and on stdout

    return json_text(obj)


def _run(argv: list[str], parser: argparse.ArgumentParser, work, suffixes: tuple[str, ...] = (".json",)) -> int:
    """Parse, check --out, read FILE, call work(args, data) -> (json object, text, CSV bytes or None); write --out
    (FILE.json: the object; FILE.csv: the CSV) and print the text, the object (--json), or, when the object went
    to --out, one line saying so. Exit 2 on bad input; 130 or 143 when interrupted (sim/runtime/interrupt.py)."""
    seen: dict = {}
    return interruptible(lambda: _run_once(argv, parser, work, suffixes, seen), lambda: [seen.get("out")])


def _run_once(argv, parser, work, suffixes, seen: dict) -> int:
    try:
        args = parser.parse_args(argv)
        out = seen["out"] = _check_out(args, suffixes)
        data = read_path(args.file)
        obj, text, rows = work(args, data)
        if out is not None:
            write_atomically({out: rows if out.suffix == ".csv" else (_json_text(obj) + "\n").encode()})
    except SystemExit as done:  # --help
        return int(done.code or 0)
    except (ArgError, DataError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # --out vanished or the disk filled between the check and the write
        print(f"error: cannot write: {err.strerror or type(err).__name__}", file=sys.stderr)
        return 2
    try:
        if args.json and out is not None and out.suffix == ".json":  # the object is in the file: not twice
            print(f"wrote {shown_path(args.out)}")
        else:
            print(_json_text(obj) if args.json else text)
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
    p.add_argument("--out", metavar="FILE.json", help="write that JSON object to FILE.json (with --json, print one "
                   "line instead of the object)")
    return p


def diagnose_main(argv: list[str] | None = None) -> int:
    from sim.yourdata.diagnose import DiagnoseConfig, diagnose, text_report, to_json
    from sim.yourdata.runlog import load_run_log

    def work(args, data):
        d = diagnose(load_run_log(data, args.file), from_args(DiagnoseConfig, args))
        return to_json(d), text_report(d), None

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
    p.add_argument("--out", metavar="FILE", help="FILE.csv: also write one row per prompt at this G (prompt text "
                   "neutralised for spreadsheets); FILE.json: write the JSON object --json prints (with --json, "
                   "print one line instead of the object)")
    return p


def plan_main(argv: list[str] | None = None) -> int:
    from sim.export import rows_csv
    from sim.toy import ToyConfig
    from sim.yourdata.plan import PlanConfig, load_pool, plan, prompt_rows, text_report, toy_difficulties

    def work(args, data):
        cfg = from_args(PlanConfig, args)
        pool = load_pool(data, args.file)
        d, _ = toy_difficulties(pool)
        toy = ToyConfig(n_prompts=len(d), difficulties=tuple(map(float, d)), group_size=cfg.group_size)
        p = plan(pool, cfg, toy)
        rows = rows_csv(prompt_rows(pool, cfg.group_size)).encode() if Path(args.out or "").suffix == ".csv" else None
        return p, text_report(p), rows

    return _run(sys.argv[1:] if argv is None else argv, plan_parser(), work, (".csv", ".json"))
