"""The server's gate: at most GATE_SIZE student script runs compute at once, the lecturer's never waiting.

    admit(server, line)  # a page, after its title (ui.page.open_page): wait for a place, saying so on `line`
    leave(server)        # app.py, when the script run ends: the place goes to the next in line

Script runs share one interpreter lock, so 30 runs at once each take 30 times as long, the projected screen's
too. No page computes a toy run any more (the browser does: assets/js/live.js), but a class of 200 moving sliders still
asks for about 20 script runs a second; the gate lets students in one at a time, in order, and the lecturer's
session (it showed the server's presenter key, ui/presenter.py; `?classroom=1` alone only enlarges the page)
straight in. A lab call from a page (the student's code, in the lab's sandbox) gives its place up while it waits
(GatedPool), so the class is not held behind one student's infinite loop. A bare Server (AppTest, a test app) has
no gate.
"""

from __future__ import annotations

import bisect
import itertools
import threading
import time

from ui.presenter import LECTURER, STUDENT  # priorities, lower first; who is the lecturer: ui/presenter.py

GATE_SIZE = 1  # student script runs at once: measured better for the lecturer than 2
POLL_S = 0.5  # how often a waiting run checks whether a newer run of its session replaced it


class Gate:
    """At most `size` script runs compute at once, the lecturer's first.

    Script runs share one interpreter lock, so 30 runs at once each take 30 times as long, the projected
    screen's too. A page's run enters after its title (ui.page.open_page) and leaves when it ends (app.py)
    or while a lab call of its waits (GatedPool): students enter in order, up to `size` at
    once, and the lecturer does not queue (a presenter run always enters). A place that frees is handed to
    the first in line, so waiting runs sleep on their own event instead of polling a shared one."""

    def __init__(self, size: int = 2):
        self.size, self.inside = size, 0
        self._line: list[list] = []  # [priority, seq, event] of the runs waiting, best first
        self._seq = itertools.count()
        self._lock = threading.Lock()
        self._held = threading.local()  # does this thread's run hold a place

    def enter(self, priority: int = STUDENT, check=None, on_wait=None) -> None:
        """Wait for a place (no-op if this thread holds one). check(): called every 0.25 s while waiting (a
        newer run of the session raises there); on_wait(ahead): told about once a second how many are ahead."""
        if getattr(self._held, "on", False):
            return
        with self._lock:
            if priority == LECTURER or (not self._line and self.inside < self.size):
                self.inside += 1
                self._held.on = True
                return
            ticket = [priority, next(self._seq), threading.Event()]
            bisect.insort(self._line, ticket, key=lambda t: (t[0], t[1]))
        told = 0.0
        try:
            while not ticket[2].wait(POLL_S):
                if check is not None:
                    check()
                if on_wait is not None and time.monotonic() - told >= 1.0:
                    told = time.monotonic()
                    on_wait(self._ahead(ticket))
        except BaseException:
            with self._lock:
                if ticket in self._line:  # still waiting: leave the line
                    self._line.remove(ticket)
                    return_place = False
                else:  # handed a place as it stopped: pass it on
                    return_place = True
            if return_place:
                self._held.on = True
                self.leave()
            raise
        self._held.on = True

    def _ahead(self, ticket) -> int:
        with self._lock:
            return self.inside + next((i for i, t in enumerate(self._line) if t is ticket), 0)

    def leave(self) -> None:
        """Give this thread's place back (no-op if it holds none): to the first in line, if any."""
        if not getattr(self._held, "on", False):
            return
        self._held.on = False
        with self._lock:
            if self._line and self.inside <= self.size:
                self._line.pop(0)[2].set()  # the place passes on: `inside` is unchanged
            else:
                self.inside -= 1

    def holding(self) -> bool:
        """Does this thread's run hold a place?"""
        return getattr(self._held, "on", False)

    @property
    def waiting(self) -> int:
        with self._lock:
            return len(self._line)


class GatedPool:
    """A sim.runtime.procs Pool for the lab's calls from a page: while a call waits (a student's hanging function
    takes its whole time limit), the page's script run gives its place in the gate up, and takes it back
    after, so the class is not held behind one student's infinite loop."""

    def __init__(self, pool, gate: Gate):
        self.pool, self.gate = pool, gate

    def start(self) -> None:
        self.pool.start()

    def call(self, *args, **kwargs):
        held = self.gate.holding()
        self.gate.leave()
        try:
            return self.pool.call(*args, **kwargs)
        finally:
            if held:
                check, say, priority = _page_hooks(status_line())
                self.gate.enter(priority, check, lambda n: say(f"The server is busy: {n} pages ahead of this one."))
                say(None)


# ---- a page's side ----------------------------------------------------------------------------------

STATUS_KEY = "_status_line"  # st.session_state: the page's status line, under its title (ui.page.open_page)


def status_line():
    """The page's status line (empty unless a run waits for its place), or None outside a page."""
    import streamlit as st

    return st.session_state.get(STATUS_KEY)


def admit(server, line=None) -> None:
    """This script run takes its place in the server's gate (Gate), saying so on `line` (the page's status line)
    while it waits; app.py gives the place back when the run ends. No gate on a bare server (AppTest)."""
    if server.gated:
        check, say, priority = _page_hooks(line)
        server.gate.enter(priority, check, lambda n: say(f"The server is busy: {n} pages ahead of this one."))
        say(None)


def leave(server) -> None:
    """The script run ended (app.py): its place in the gate goes to the next."""
    server.gate.leave()


def _page_hooks(line):
    """(check, say, priority) for the running script: check() raises when a newer run of the session
    replaces this one; say(text) writes the status line `line` (None: clears it once written)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    from ui.presenter import priority

    ctx, shown = get_script_run_ctx(), [None]

    def check() -> None:
        if ctx is not None:
            ctx.yield_check()

    def say(text: str | None) -> None:
        if line is None or text == shown[0]:
            return
        line.info(text, icon=":material/hourglass_top:") if text else line.empty()
        shown[0] = text

    return check, say, priority()
