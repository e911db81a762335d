"""Closed forms used by the exercise pages (Chapter 15, "Groups that teach nothing", Exercise 15.4)."""

from __future__ import annotations

import numpy as np


def p_no_signal(p, group_size):
    """Probability that a group of G answers all get the same 0/1 reward: p^G + (1 - p)^G.

    Such a group has zero advantages and gives no gradient. Chapter: p = 0.05 yields signal
    (1 - this) 34% of the time at G = 8 and 96% at G = 64. Broadcasts over p and G.
    """
    p = np.asarray(p, dtype=float)
    G = np.asarray(group_size, dtype=float)
    return p**G + (1.0 - p) ** G
