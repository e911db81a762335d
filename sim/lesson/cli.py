"""`python -m sim lesson build OUT`: the playground's views as a static folder that opens from file://.

Bad flags and an unwritable or existing OUT give one line `error: ...` and exit 2, before anything is computed.
Progress goes to stderr; the summary (one line) to stdout.

Every view computes every setting in the page (TinyLM's runs are recorded), so no view has a grid of settings to
choose: `--grid` (and its caps, --max-settings and --max-mb) is refused with a line that says so. The views' names
are sim/views/catalog.py's; the names of views that are now part of one (passk_estimator, passk_problems and sharpen
are pass@k's parts, tinylm_run TinyLM's) still select it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from sim.runtime.args import ArgError, Parser

GONE = ("--grid", "--max-settings", "--max-mb")  # the Training grid's flags, before the views computed in the page



def _views() -> tuple[str, ...]:
    from sim.views.catalog import NAMES

    return NAMES


def views_for(names: str) -> list:
    from sim.lesson.build import views_for as chosen

    return chosen(names)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m sim lesson", description="Build a lesson: the playground's views as static "
                    "files (open OUT/index.html from disk, or serve OUT with any static file server).")
    sub = parser.add_subparsers(dest="command", metavar="build", parser_class=Parser)
    b = sub.add_parser("build", help="compute the views' settings and write the lesson folder OUT",
                       description="Write the lesson into OUT: a page per view, which computes any setting in the "
                                   "browser (TinyLM's runs recorded by sim/), and the contents page.")
    b.add_argument("out", metavar="OUT", help="folder to write (must not exist, be empty, or be a lesson with --force)")
    b.add_argument("--views", default=",".join(_views()),
                   help=f"comma-separated views to build, from {', '.join(_views())} (default: all; the app-only ones "
                        "are listed on the contents page, without a page)")
    b.add_argument("--force", action="store_true", help="replace OUT if it is a lesson built before")
    b.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return parser


def progress(stream, every_s: float = 2.0):
    """say(view, done, total) for build(): on a terminal one line rewritten in place; elsewhere (a log, a pipe)
    plain lines, no carriage return or escape code: one when a view is done and at most one every `every_s`."""
    start = time.perf_counter()
    last = [start]
    tty = stream.isatty()

    def say(view: str, done: int, total: int) -> None:
        now = time.perf_counter()
        line = f"{view}: {done}/{total} views, {now - start:.1f} s"
        if tty:  # the last view ends its line, so whatever follows (the summary, an error) starts a line of its own
            say.open = done < total
            print(f"\r{line}\033[K", end="" if say.open else "\n", file=stream, flush=True)
        elif done == total or now - last[0] >= every_s:
            last[0] = now
            print(line, file=stream, flush=True)

    say.open = False  # a progress line on the terminal waits for its end
    return say


def main(argv: list[str] | None = None) -> int:
    """Exit 0; 2 for bad input or an OUT it may not replace (one line); 130 or 143 after Ctrl-C or SIGTERM: one
    line, the old lesson whole and no temporary folder left (sim/runtime/interrupt.py, build.swap_in)."""
    from sim.runtime.interrupt import interruptible

    seen: dict = {}
    return interruptible(lambda: _main(argv, seen), lambda: [seen.get("out")])


def _main(argv: list[str] | None, seen: dict) -> int:
    from sim.lesson.build import build

    try:
        given = sys.argv[1:] if argv is None else argv
        gone = next((a.split("=")[0] for a in given if a.split("=")[0] in GONE), None)
        if gone:
            raise ArgError(f"{gone} is gone: every view computes every setting in the page, at any value of every "
                           "control (build without it)")
        args = build_parser().parse_args(argv)
        if args.command != "build":
            raise ArgError("choose a command: python -m sim lesson build OUT (see --help)")
        seen["out"] = args.out
        views = views_for(args.views)
        app = [v.title for v in views if v.lesson == "app"]
        summary = ("Every control of the app's views is here" + (f"; {', '.join(app)} need the app (a visitor's file "
                   "or the server)." if app else "."))
        say = (lambda view, done, total: None) if args.quiet else progress(sys.stderr)
        try:
            result = build(Path(args.out), views, force=args.force, say=say, summary=summary)
        finally:  # a progress line still open on the terminal: an error or an interrupt gets a line of its own
            if getattr(say, "open", False):
                print(file=sys.stderr)
    except SystemExit as done:  # --help
        return int(done.code or 0)
    except (ArgError, ValueError, OSError) as err:
        return _error(err, seen)
    print(f"wrote {args.out}: {result['pages']} views ({result['recorded']} recorded, the others computed in the "
          f"page), {result['app_only']} listed as the app's only, {result['data_bytes'] / 1e6:.1f} MB of data, "
          f"{result['seconds']:.1f} s; open {Path(args.out) / 'index.html'}")
    return 0


def _error(err: Exception, seen: dict) -> int:
    """One line for what went wrong, exit 2: bad input or an OUT it may not replace (LessonError is a ValueError),
    or the disk filled or OUT vanished between the check and the write (OSError)."""
    if isinstance(err, OSError):
        print(f"error: cannot write {seen.get('out')}: {err.strerror or err}", file=sys.stderr)
    else:
        print(f"error: {err}", file=sys.stderr)
    return 2
