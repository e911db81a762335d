"""Ctrl-C and SIGTERM on the command line: one line, exit 130 or 143, never a traceback.

    def main(argv):
        return interruptible(lambda: _main(argv), written=lambda: [args.out])   # 130/143 and one line

Every command that writes a file writes it whole or not at all (sim/runtime/files.py, the lesson's swap_in), so an
interrupted command has written nothing, or a file complete before the interrupt: the line says which
(`interrupted: nothing written`, or `interrupted: only PATH written`). SIGTERM is raised as `Terminated`, a
KeyboardInterrupt, where the program is, so every `with` and `finally` on the way out runs (temporary files and
folders are removed) as they do for Ctrl-C. `python -m sim` itself says the same line when the signal comes while it
imports the command (sim/__main__.py).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterable


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, as Ctrl-C's KeyboardInterrupt is."""


def _on_sigterm(signum, frame):
    raise Terminated


def interrupted_line(paths: Iterable, since: float) -> str:
    """The one line an interrupted command prints: the outputs written since `since` (time.time()), else nothing."""
    written = [p for p in paths if p and os.path.exists(p) and os.path.getmtime(p) >= since]
    if written:
        from sim.runtime.files import shown_path

        return f"interrupted: only {', '.join(shown_path(p) for p in written)} written"
    return "interrupted: nothing written"


def interruptible(run: Callable[[], int], written: Callable[[], Iterable] = tuple) -> int:
    """run() with SIGTERM raised as Terminated; after Ctrl-C or SIGTERM, interrupted_line(written()) on stderr and
    128 + the signal's number (130, 143). Off the main thread (a test calling main()) SIGTERM keeps its handler."""
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread
        previous = None
    started = time.time()
    try:
        return run()
    except KeyboardInterrupt as e:
        try:
            print(interrupted_line(written(), started), file=sys.stderr)
        except KeyboardInterrupt:  # a second Ctrl-C while saying it: the code is what matters
            pass
        return 128 + (signal.SIGTERM if isinstance(e, Terminated) else signal.SIGINT)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
