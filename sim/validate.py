"""Checks for configuration values: a bad one raises ValueError naming the field and its allowed range."""

from __future__ import annotations

import math

import numpy as np


def check_number(name: str, value, low, high, *, integer: bool = False, low_open: bool = False) -> None:
    """`value` must be a number (an integer if `integer`) in [low, high], or (low, high] if `low_open`.

    NaN, infinities and booleans are refused. Integers are compared exactly (no float rounding), so a
    bound such as 2**63 - 1 is itself allowed.
    """
    allowed = f"{'(' if low_open else '['}{low}, {high}]"
    kinds = (int, np.integer) if integer else (int, float, np.integer, np.floating)
    ok = not isinstance(value, (bool, np.bool_)) and isinstance(value, kinds)
    if not ok or (isinstance(value, (float, np.floating)) and not math.isfinite(value)):
        kind = "an integer" if integer else "a finite number"
        raise ValueError(f"{name} must be {kind} in {allowed}, got {shown(value)}")
    if not (low <= value <= high) or (low_open and value == low):
        raise ValueError(f"{name} must be in {allowed}, got {shown(value)}")


def check_choice(name: str, value, allowed: tuple) -> None:
    """`value` must be one of `allowed`."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {shown(value)}")


def shown(value, limit: int = 40) -> str:
    """repr(value) for a message, cut to `limit` characters: a refused value may be long."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def neutral(text: object, *, keep_newlines: bool = False, keep: str = "") -> str:
    """`text` with every character that is not printable written as a visible escape (\\u202e), so that text
    from outside shows as what it is: control characters, bidi overrides and isolates (U+202A-202E,
    U+2066-2069), U+0085, the line and paragraph separators U+2028/2029, zero-width and other format
    characters. A backslash stays as it is. With `keep_newlines`, "\\n" stays a line break (multi-line text);
    the characters of `keep` stay as they are too (a CSV cell keeps its tabs and line breaks: sim/export.py).
    >>> neutral("a\\u202eb\\x00")
    'a\\\\u202eb\\\\u0000'
    """
    kept = set(keep) | ({"\n"} if keep_newlines else set())
    out = []
    for ch in str(text):
        if ch.isprintable() or ch in kept:
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "".join(out)


def env_number(name: str, default: float, low: float, high: float, environ=None, *, integer: bool = False) -> float:
    """The number in environment variable `name` (`default` when unset or blank), in [low, high]; otherwise
    ValueError in one line naming the variable (a server or CLI set up wrong says so, never with a traceback
    from deep inside, and `inf` or `1e999` never reach an int())."""
    import os

    raw = (os.environ if environ is None else environ).get(name, "").strip()
    if not raw:
        return default
    try:
        x = float(raw)
    except ValueError:
        x = math.nan
    if not (math.isfinite(x) and low <= x <= high) or (integer and not x.is_integer()):
        bounds = [int(b) if float(b).is_integer() else b for b in (low, high)]
        what = "a whole number" if integer else "a number"
        raise ValueError(f"{name}={neutral(raw[:40])} is not {what} from {bounds[0]} to {bounds[1]}")
    return int(x) if integer else x
