"""The lab's time limit, declared once: the CLI's --timeout and the server's GRPO_LAB_TIMEOUT accept the same range.

Below TIMEOUT_MIN no check can finish (forking a worker and importing the student's file take a few ms to
~0.1 s); above TIMEOUT_MAX a hanging student file would hold a worker for longer than a lesson can wait, and
values such as `inf` or 1e300 overflow the event loop's clock.
"""

from __future__ import annotations

import math

from sim.validate import neutral

TIMEOUT_MIN = 0.1  # seconds
TIMEOUT_MAX = 600.0  # seconds (10 minutes per task)


def parse_timeout(raw: str, name: str = "--timeout") -> float:
    """Seconds from the text `raw`, in [TIMEOUT_MIN, TIMEOUT_MAX]; ValueError (one line, naming `name`) otherwise."""
    text = str(raw).strip()
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and TIMEOUT_MIN <= seconds <= TIMEOUT_MAX):
        shown = neutral(text if len(text) <= 40 else text[:39] + "…")
        raise ValueError(f"{name}={shown} is not a number of seconds from {TIMEOUT_MIN:g} to {TIMEOUT_MAX:g}")
    return seconds
