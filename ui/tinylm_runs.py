"""The TinyLM page's side of the server's runs: the one registry, how often a page polls, the words for the line and
for a pause (every sentence the page shows about them, written once here).

The registry is the server's single `sim.tinylm.job.TinyLMRuns` (`server.tinylm_registry`, ui/server.py).
`poll_interval` is a page concern, the rerun budget, so it lives here and not in sim/.
"""

from __future__ import annotations

from sim.tinylm.job import HEARTBEAT_S

RERUNS_PER_S = 10.0  # what one server spends on polls of a shared run, whatever the number of viewers


def poll_interval(viewers: int) -> float:
    """Seconds between a page's polls of a run watched by `viewers` sessions: 0.5 s for a few, then slower so
    that all of them together poll about RERUNS_PER_S times a second (60 viewers: every 6 s), but at least
    every HEARTBEAT_S / 3 so that a watching session is never taken for a closed tab.

    Why: a Streamlit server is one process, and every poll (a fragment rerun drawing eight charts, ~25 ms)
    holds the same GIL as the server's threads. Measured with 60 headless students polling every 0.5 s, the
    server spent all its time redrawing and the shared run did not finish in 400 s.
    """
    return min(max(0.5, viewers / RERUNS_PER_S), HEARTBEAT_S / 3)  # polls stay well inside the heartbeat


def _place(n: int) -> str:
    return "next in line" if n == 1 else f"place {n} in line ({n - 1} run{'s' if n > 2 else ''} ahead)"


def _duration(seconds: float) -> str:
    """10 minutes, 1 minute 30 s, 45 s: a limit or a time left, to the second."""
    m, s = divmod(int(round(seconds)), 60)
    return " ".join(p for p in (f"{m} minute{'s' if m != 1 else ''}" if m else "", f"{s} s" if s or not m else "") if p)


def queue_text(snap: dict) -> str | None:
    """What a waiting or starting run says (a new one, or a paused one waiting to resume), or None once it trains."""
    if snap.get("resuming"):
        return f"Waiting for a free trainer to resume: {_place(snap['queue_position'])}."
    if snap["state"] == "queued" and snap["queue_position"] > 0:
        return f"Waiting for a free trainer: {_place(snap['queue_position'])}."
    if snap["state"] in ("queued", "starting"):
        return "Starting the trainer…"
    return None


def left_text(snap: dict) -> str:
    """What a session that left a run reads while the run is still live."""
    n = snap["viewers"]
    if n == 0:
        return "You stopped this run: nobody else was watching it."
    return f"You left this run; it goes on for the {'other session' if n == 1 else f'{n} other sessions'} watching it."


def pause_text(snap: dict) -> str | None:
    """What a paused run says (its trainer given up, the time it has left), or one that a pause ended; else None."""
    if snap.get("stopped_because") == "pause limit":
        return f"This run was stopped after {_duration(snap['pause_limit_s'])} paused. Press Start to run it again."
    if snap.get("stopped_because") == "paused runs":
        return (f"This run was stopped: it had been paused the longest, and the server keeps at most "
                f"{snap['max_paused']} paused runs. Press Start to run it again.")
    if snap.get("paused") and not snap.get("resuming") and snap.get("pause_left_s") is not None:
        return (f"Paused: its trainer is free for the next run meanwhile. Resume within "
                f"{_duration(snap['pause_left_s'])}, or the run stops.")
    return None


def pause_rule(registry) -> str:
    """The page's one sentence on Pause, for its caption."""
    return (f"Pause gives the run's trainer to the next run in line (Resume waits for a free one); a run paused for "
            f"{_duration(registry.pause_limit_s)} is stopped, as is the one paused longest when more than "
            f"{registry.max_paused} are.")
