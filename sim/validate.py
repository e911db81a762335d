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
