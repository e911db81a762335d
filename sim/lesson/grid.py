"""The grid of settings a lesson precomputes: its dimensions by URL key, validated by sim/settings.py.

    grid = parse_grid(["G=8,16", "lr=0.1,0.2"])     # replaces G, adds lr, keeps beta and scale
    combos = settings_of(grid)                       # [{"G": 8, "beta": 0.0, "scale": "group", "lr": 0.1}, ...]
"""

from __future__ import annotations

import itertools
import math
import re

from sim.settings import settings
from sim.toy import ToyConfig
from sim.views.training import BETAS, CONTROLS, page_config

DEFAULT_GRID = {"G": (2, 4, 8, 16, 32, 64), "beta": BETAS, "scale": ("group", "batch", "none")}
MAX_SETTINGS = 400  # default cap on Training dynamics settings
MAX_MB = 40.0  # default cap on the lesson's data, MB on disk (Plotly.js and the pages come on top)
MAX_EXACT = 2**53  # the largest whole number the page's JavaScript tells apart from its neighbours
DECIMAL = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")  # what a number in a lesson may look like


def parse_value(key: str, text: str):
    """One grid value from the command line, typed and checked by the declaration of its config field."""
    field, _ = CONTROLS[key]
    spec = settings(ToyConfig)[field]
    text = text.strip()
    if spec.kind == "choice":
        value = next((c for c in spec.choices if str(c) == text), text)
    elif spec.kind == "flag":
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"{key} must be true or false, got {text[:40]!r}")
        value = text.lower() in ("true", "1")
    else:
        value = _number(key, text, spec)
    spec.check(key, value)
    return value


def _number(key: str, text: str, spec) -> int | float:
    """A decimal number (no 0x10, 1_000, inf or nan), an integer field's read exactly (9007199254740993 is not
    rounded to ...992 by a float); a whole number past 2^53 is refused: the page's JavaScript could not tell it
    from its neighbour, so its link would show another setting."""
    if not DECIMAL.fullmatch(text):
        raise ValueError(f"{key} must be {spec.describe()} written in decimal, got {text[:40]!r}")
    if spec.integer and re.fullmatch(r"[+-]?\d+", text):
        value = int(text)
    else:
        number = float(text)
        value = int(number) if spec.integer and number.is_integer() else number
    if isinstance(value, int) and abs(value) > MAX_EXACT:
        raise ValueError(f"{key}={text[:40]}: a lesson's whole numbers must be at most 2^53 = {MAX_EXACT} "
                         "(its page's JavaScript could not tell a larger one from its neighbour)")
    return value


def parse_grid(items: list[str] | None) -> dict[str, tuple]:
    """The default grid with each NAME=v1,v2,... replacing or adding a dimension. ValueError names the problem."""
    grid = dict(DEFAULT_GRID)
    for item in items or ():
        name, sep, values = item.partition("=")
        name = name.strip()
        if not sep or not values.strip():
            raise ValueError(f"--grid wants NAME=v1,v2,..., got {item[:40]!r}")
        if name not in CONTROLS:
            raise ValueError(f"--grid: unknown setting {name[:40]!r}; one of {', '.join(CONTROLS)}")
        typed = tuple(dict.fromkeys(parse_value(name, v) for v in values.split(",") if v.strip()))
        if not typed:
            raise ValueError(f"--grid {name}: no values")
        grid[name] = tuple(sorted(typed)) if all(isinstance(v, (int, float)) for v in typed) else typed
    return grid


def check_count(grid: dict[str, tuple], max_settings: int) -> int:
    """The number of combinations (the product of the dimensions' sizes), refused over `max_settings` before
    any combination exists: a grid of 100 x 100 x 10 values is a count here, not a million dicts."""
    n = math.prod(len(values) for values in grid.values())
    if n > max_settings:
        sizes = " x ".join(f"{len(v)} {k}" for k, v in grid.items())
        raise ValueError(f"the grid has {n} settings ({sizes}), over the cap of {max_settings} (--max-settings)")
    return n


def settings_of(grid: dict[str, tuple]) -> list[dict]:
    """Every combination of the grid's values, as {URL key: value}, in grid order."""
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(grid[k] for k in keys))]


def estimate_bytes(cfg: ToyConfig) -> int:
    """Bytes of one Training dynamics setting's data, from its shapes (checked against real files in the tests):
    per iteration, the bars' p_j (float32) and their colours (1 byte) for each prompt, and 11 float32 lines,
    base64 (4/3), plus about 3 kB of chart text."""
    n = cfg.iterations + 1
    return int(math.ceil(4 / 3 * n * (cfg.n_prompts * 5 + 11 * 4))) + 3000


def check_size(combos: list[dict], *, max_settings: int, max_mb: float) -> tuple[list[ToyConfig], int]:
    """The config of each combination (every one validated before anything is computed) and the data's
    estimated bytes; ValueError if a setting is refused or the grid is over a cap, with the size it would have."""
    if len(combos) > max_settings:
        raise ValueError(f"the grid has {len(combos)} settings, over the cap of {max_settings} (--max-settings)")
    cfgs = []
    for values in combos:
        try:
            cfgs.append(page_config(values))
        except ValueError as e:
            raise ValueError(f"setting {values}: {e}") from None
    total = sum(estimate_bytes(c) for c in cfgs)
    if total > max_mb * 1e6:
        raise ValueError(f"the grid's data would be about {total / 1e6:.0f} MB ({len(cfgs)} settings), over the cap "
                         f"of {max_mb:g} MB (--max-mb)")
    return cfgs, total
