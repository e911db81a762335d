"""`python -m sim lab`: the chapter's lab from the command line.

    python -m sim lab new my-lab                 # fresh stubs: tasks.py, test_tasks.py, conftest.py, README.md
    python -m sim lab check my-lab/tasks.py      # one line per task: pass, or what is wrong
    python -m sim lab check                      # the shipped lab/tasks.py

`check` runs the student's code in a separate process with a time limit per task (--timeout).
Exit codes: 0 every task passes; 1 a task fails, or the file does not import; 2 bad input (no
such file, bad flags, `new` into existing files). Every problem is one line, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

from sim.lab.limits import TIMEOUT_MAX, TIMEOUT_MIN, parse_timeout
from sim.lab.pool import LabPathError, lab_pool, resolve_lab_path
from sim.paths import CODE_ROOT, LAB_STUBS
from sim.runtime.args import ArgError, Parser
from sim.runtime.files import OutputPathError, check_folder
from sim.runtime.interrupt import interruptible
from sim.validate import neutral

STUBS = LAB_STUBS
STUB_FILES = ("tasks.py", "test_tasks.py", "conftest.py", "README.md")
ROOT_HINT = "PROJECT_ROOT = None"  # the line of conftest.py that `new` fills in


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m sim lab", description="The chapter's lab: write Tasks 2-4, then check them.")
    sub = parser.add_subparsers(dest="command", metavar="{check,new}", parser_class=Parser)
    check = sub.add_parser("check", help="run the checks on a lab file, one line per task")
    check.add_argument("path", nargs="?", default=str(STUBS / "tasks.py"),
                       help="tasks.py, or a directory holding it (default: the shipped lab/tasks.py)")
    check.add_argument("--timeout", default="15",
                       help=f"seconds allowed for each task's checks ({TIMEOUT_MIN:g} to {TIMEOUT_MAX:g})")
    new = sub.add_parser("new", help="copy fresh stubs into DIR (refuses to overwrite)")
    new.add_argument("dir", help="directory to create or fill")
    return parser


def cmd_check(path: str, timeout: float) -> int:
    try:
        lab_path = resolve_lab_path(path)
    except LabPathError as e:
        print(f"error: {neutral(e)}", file=sys.stderr)
        return 2
    except OSError as e:  # a name too long for the file system (ENAMETOOLONG), a permission denied on the way
        print(f"error: {_path_problem(path, e)}", file=sys.stderr)
        return 2
    lab_pool().start()  # the workers start while this process imports torch
    from sim.lab.runner import Lab  # Ctrl-C or SIGTERM: sim/__main__.exit_process kills the workers

    lab = Lab(lab_path, timeout=timeout, check_timeout=timeout)
    problem = lab.load()
    if problem is not None:
        print(neutral(problem.message, keep_newlines=True))  # the student's text: no terminal escapes
        return 1
    results = lab.check_all()
    for r in results:
        print(neutral(r.line(), keep_newlines=True))
    return 0 if all(r.passed for r in results) else 1


def cmd_new(directory: str) -> int:
    """Copy the four stubs into `directory`, refused before anything is written (exit 2, one line) when it is a
    symbolic link or the file system's root (sim.runtime.files.check_folder, the lesson's rules), a file, or
    already has one of the stubs; all four are written or none (an error or an interrupt removes those written)."""
    try:
        target = check_folder(directory, "the lab")  # `lab new /` as root, or through a link
        if target.exists() and not target.is_dir():
            print(f"error: {neutral(directory)} exists and is not a directory", file=sys.stderr)
            return 2
        existing = [name for name in STUB_FILES if os.path.lexists(target / name)]
    except OutputPathError as e:
        print(f"error: {e}; nothing was written", file=sys.stderr)
        return 2
    except OSError as e:  # ENAMETOOLONG, EACCES on a parent
        print(f"error: {_path_problem(directory, e)}", file=sys.stderr)
        return 2
    shown = neutral(directory)
    if existing:
        print(f"error: {shown} already has {', '.join(existing)}; nothing was written "
              "(choose a new directory)", file=sys.stderr)
        return 2
    written = []
    try:
        target.mkdir(parents=True, exist_ok=True)
        for name in STUB_FILES:
            text = (STUBS / name).read_text()
            if name == "conftest.py":
                text = text.replace(ROOT_HINT, f"PROJECT_ROOT = {str(CODE_ROOT)!r}", 1)
            with open(target / name, "x") as f:  # "x": never overwrite a file that appeared meanwhile
                written.append(target / name)
                f.write(text)
    except BaseException as e:  # an error or Ctrl-C: all four stubs or none, no half-filled lab
        for p in written:
            p.unlink(missing_ok=True)
        if not isinstance(e, OSError):
            raise
        print(f"error: cannot write to {shown}: {e.strerror}; nothing was written", file=sys.stderr)
        return 2
    print(f"wrote {', '.join(STUB_FILES)} to {shown}")
    print(f"next: fill in the TODOs in {shown}/tasks.py, then: python -m sim lab check {shown}/tasks.py")
    return 0


def _path_problem(path: str, e: OSError) -> str:
    shown = neutral(path if len(path) <= 80 else path[:60] + f"… ({len(path)} characters)")
    return f"{shown}: {e.strerror or e}"


def main(argv: list[str] | None = None) -> int:
    """Exit codes as the module says; 130 or 143 after Ctrl-C or SIGTERM, one line (sim/runtime/interrupt.py)."""
    argv = sys.argv[1:] if argv is None else argv
    return interruptible(lambda: _main(argv))


def _main(argv: list[str]) -> int:
    parser = build_parser()
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0
    try:
        args = parser.parse_args(argv)
    except ArgError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except SystemExit as e:  # --help of a subcommand
        return e.code if isinstance(e.code, int) else 0
    if args.command == "new":
        return cmd_new(args.dir)
    try:
        timeout = parse_timeout(args.timeout)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return cmd_check(args.path, timeout)
