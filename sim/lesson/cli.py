"""`python -m sim lesson build OUT`: the playground's views as a static folder that opens from file://.

Bad flags and an unwritable or existing OUT give one line `error: ...` and exit 2, before anything is computed.
Progress goes to stderr; the summary (one line) to stdout.

Training dynamics, Std scaling and the sharpening toy compute every setting in the page, so no view has a grid of
settings to choose any more: `--grid` (and its caps, --max-settings and --max-mb) is refused with a line that says
so.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

GONE = ("--grid", "--max-settings", "--max-mb")  # the Training grid's flags, before the views computed in the page
VIEWS = ("training", "one_group", "kl_clip", "std_scaling", "passk_estimator", "passk_problems", "sharpen", "wasted",
         "tinylm_run", "tinylm")


class ArgError(Exception):
    """A bad flag: argparse's message, one line."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, no usage dump, no SystemExit
        raise ArgError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m sim lesson", description="Build a lesson: the playground's views as static "
                    "files (open OUT/index.html from disk, or serve OUT with any static file server).")
    sub = parser.add_subparsers(dest="command", metavar="build", parser_class=Parser)
    b = sub.add_parser("build", help="compute the views' settings and write the lesson folder OUT",
                       description="Compute the precomputed views' settings with sim/ and write the lesson into OUT "
                                   "(Training dynamics, Std scaling and the sharpening toy compute in the page).")
    b.add_argument("out", metavar="OUT", help="folder to write (must not exist, be empty, or be a lesson with --force)")
    b.add_argument("--views", default=",".join(VIEWS),
                   help=f"comma-separated views to build, from {', '.join(VIEWS)} (default: all)")
    b.add_argument("--force", action="store_true", help="replace OUT if it is a lesson built before")
    b.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return parser


def views_for(args) -> list:
    from sim.lesson import exercise_views, recorded, views

    names = [v.strip() for v in args.views.split(",") if v.strip()]
    unknown = [n for n in names if n not in VIEWS]
    if unknown or not names:
        raise ValueError(f"--views: unknown view {(unknown or [''])[0][:40]!r}; choose from {', '.join(VIEWS)}")
    out = []
    for name in names:
        out.append({"training": views.training_view, "std_scaling": views.std_view, "sharpen": views.sharpen_view,
                    "wasted": views.wasted_view,
                    "passk_estimator": views.estimator_view, "tinylm": views.tinylm_view,
                    "one_group": exercise_views.one_group_view, "kl_clip": exercise_views.kl_view,
                    "passk_problems": exercise_views.problems_view, "tinylm_run": recorded.tinylm_run_view}[name]())
    if None in out and "tinylm_run" in names and out[names.index("tinylm_run")] is None:
        raise ValueError("--views tinylm_run: assets/tinylm_run.json is missing or damaged (python "
                         "scripts/record_tinylm_run.py records it)")
    if None in out:  # only TinyLM's recorded figures can be missing
        raise ValueError("--views tinylm: assets/tinylm_seeds.json is missing or damaged (python "
                         "scripts/bench_tinylm.py --skip-sft --write-figures --seeds 5 records it)")
    return out


def progress(stream, every_s: float = 2.0):
    """say(view, done, total) for build(): on a terminal one line rewritten in place; elsewhere (a log, a pipe)
    plain lines, no carriage return or escape code: one when a view is done and at most one every `every_s`."""
    start = time.perf_counter()
    last = [start]
    tty = stream.isatty()

    def say(view: str, done: int, total: int) -> None:
        now = time.perf_counter()
        line = f"{view}: {done}/{total} settings, {now - start:.1f} s"
        if tty:
            print(f"\r{line}\033[K", end="", file=stream, flush=True)
        elif done == total or now - last[0] >= every_s:
            last[0] = now
            print(line, file=stream, flush=True)

    return say


def main(argv: list[str] | None = None) -> int:
    from sim.lesson.build import build

    try:
        given = sys.argv[1:] if argv is None else argv
        gone = next((a.split("=")[0] for a in given if a.split("=")[0] in GONE), None)
        if gone:
            raise ArgError(f"{gone} is gone: Training dynamics, Std scaling and the sharpening toy compute every "
                           "setting in the page, at any value of every control (build without it)")
        args = build_parser().parse_args(argv)
        if args.command != "build":
            raise ArgError("choose a command: python -m sim lesson build OUT (see --help)")
        views = views_for(args)
        n, live = sum(len(v.entries) for v in views), [v.title for v in views if v.live is not None]
        summary = f"{n} settings computed ahead of time" + (
            f"; {', '.join(live)} compute{'s' if len(live) == 1 else ''} every setting in your browser" if live
            else "") + "."
        say = (lambda view, done, total: None) if args.quiet else progress(sys.stderr)
        result = build(Path(args.out), views, force=args.force, say=say, summary=summary)
        if not args.quiet and sys.stderr.isatty():
            print(file=sys.stderr)
    except SystemExit as done:  # --help
        return int(done.code or 0)
    except (ArgError, ValueError) as err:  # LessonError is a ValueError
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # the disk filled, or OUT vanished between the check and the write
        print(f"error: cannot write {args.out}: {err.strerror or err}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {result['settings']} settings and {result['live']} views computed in the page, "
          f"{result['data_bytes'] / 1e6:.1f} MB of data, {result['seconds']:.1f} s; open "
          f"{Path(args.out) / 'index.html'}")
    return 0
