"""The TinyLM page's side of the server's runs: the one registry, how often a page polls, the words for the line.

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


def queue_text(snap: dict) -> str | None:
    """What a waiting or starting run says, or None once it trains."""
    if snap["state"] == "queued" and snap["queue_position"] > 0:
        n = snap["queue_position"]
        ahead = "next in line" if n == 1 else f"place {n} in line ({n - 1} run{'s' if n > 2 else ''} ahead)"
        return f"Waiting for a free trainer: {ahead}."
    if snap["state"] in ("queued", "starting"):
        return "Starting the trainer…"
    return None


def left_text(snap: dict) -> str:
    """What a session that left a run reads while the run is still live."""
    n = snap["viewers"]
    if n == 0:
        return "You stopped this run: nobody else was watching it."
    return f"You left this run; it goes on for the {'other session' if n == 1 else f'{n} other sessions'} watching it."
