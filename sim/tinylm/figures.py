"""The TinyLM presets' stories over several GRPO seeds: what GRPO does at large k, with the spread.

`scripts/bench_tinylm.py --preset NAME --write-figures` runs story.run_story for seeds 0, 1, 2, ... and
writes the preset's record (PRESET_ASSETS: the default run in assets/data/tinylm_seeds.json, the chapter-lab
run in assets/data/tinylm_chapter_lab.json); the page and the static lesson read them through
`load_seed_figures(path)` / `load_preset_figures()`, and docs/tinylm.md quotes them. Runs are deterministic
(float64), so a record is what the code gives on any machine; tests/test_tinylm.py checks seed 0's row of each
against a fresh run.

A row holds the chapter's figures (ROW_FIELDS) and, in records written since the presets, the mean
pass@k curves and the never-solved prompts (CURVE_FIELDS, LIST_FIELDS) so that a page can draw them
without training.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from sim.paths import ASSETS
from sim.runtime.files import write_atomically
from sim.tinylm.presets import PRESET_NAMES

SEEDS_ASSET = ASSETS / "data" / "tinylm_seeds.json"  # the default preset's record (the name predates the presets)
PRESET_ASSETS = {"default": SEEDS_ASSET, "chapter-lab": ASSETS / "data" / "tinylm_chapter_lab.json"}
assert set(PRESET_ASSETS) == set(PRESET_NAMES)
ROW_FIELDS = ("seed", "pass_at_1_before", "pass_at_1_after", "pass_at_64_before", "pass_at_64_after",
              "never_solved_before", "never_solved_after", "crossover_k")  # fmt: skip
CURVE_FIELDS = ("pass_at_k_before", "pass_at_k_after")  # element k-1 = pass@k, k = 1..n (optional in a record)
LIST_FIELDS = ("never_solved_problems_before", "never_solved_problems_after")  # prompts "45+57=" (optional)


def seed_row(result: dict) -> dict:
    """One story result -> the figures the chapter quotes (pass@k at the largest k, here 64)."""
    return {
        "seed": result["config"]["grpo"]["seed"],
        "pass_at_1_before": result["pass_at_1_before"],
        "pass_at_1_after": result["pass_at_1_after"],
        "pass_at_64_before": result["pass_at_k_before"][-1],
        "pass_at_64_after": result["pass_at_k_after"][-1],
        "never_solved_before": len(result["never_solved_before"]),
        "never_solved_after": len(result["never_solved_after"]),
        "crossover_k": result["crossover_k"],
        "grpo_seconds": result["grpo_seconds"],
        "pass_at_k_before": result["pass_at_k_before"],
        "pass_at_k_after": result["pass_at_k_after"],
        "never_solved_problems_before": result["never_solved_before"],
        "never_solved_problems_after": result["never_solved_after"],
    }


RECORD_FIELDS = ROW_FIELDS + CURVE_FIELDS + LIST_FIELDS + ("ripple_carry_pass_at_1",)


def record_row(row: dict) -> dict:
    """The part of a bench row that a record keeps (no timings: a record does not depend on the machine)."""
    return {k: row[k] for k in RECORD_FIELDS if k in row}


def _spread(values, fmt: str) -> str:
    """'median (min–max)'."""
    return f"{statistics.median(values):{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"


def summarize(rows: list[dict]) -> str:
    """One sentence: medians with the range over seeds, and in how many seeds the curves crossed."""
    col = {k: [r[k] for r in rows] for k in ROW_FIELDS}
    crossed = [k for k in col["crossover_k"] if k is not None]
    cross = (f"the curves cross in {len(crossed)} of {len(rows)} seeds"
             + (f", at k = {min(crossed):.1f}–{max(crossed):.1f}" if crossed else ""))  # fmt: skip
    return (
        f"Over {len(rows)} GRPO seeds (median, range): pass@1 {_spread(col['pass_at_1_before'], '.3f')} → "
        f"{_spread(col['pass_at_1_after'], '.3f')}; pass@64 {_spread(col['pass_at_64_before'], '.3f')} → "
        f"{_spread(col['pass_at_64_after'], '.3f')}; never solved {_spread(col['never_solved_before'], 'd')} → "
        f"{_spread(col['never_solved_after'], 'd')}; {cross}. The SFT figures vary only through the evaluation's "
        f"samples (each seed draws its own)."
    )


def reading(rows: list[dict]) -> str:
    """What the figures say about coverage, in words that follow the numbers (the chapter's question)."""
    before = statistics.median(r["never_solved_before"] for r in rows)
    after = statistics.median(r["never_solved_after"] for r in rows)
    crossed = sum(r["crossover_k"] is not None for r in rows)
    wins_at_1 = all(r["pass_at_1_after"] > r["pass_at_1_before"] for r in rows)
    if after < before and crossed == 0 and wins_at_1:
        return ("Here GRPO widened coverage: it solves within 64 samples problems the SFT model never solved, and "
                "its pass@k is above SFT's at every k. Not the chapter's lab (0.983 vs 0.977, 5 vs 7 never solved), "
                "but the other side of the debate: RL can reinforce an answer the model produces only rarely, and "
                "here the rare answer is the rule the model already uses everywhere else.")  # fmt: skip
    if after > before or crossed == len(rows):
        return ("Here GRPO narrowed coverage, as in the chapter's lab: it wins at small k, and at large k the SFT "
                "model solves problems GRPO no longer does.")  # fmt: skip
    return "Here coverage at k = 64 barely moved; the seeds disagree on the direction."


def write_seed_figures(rows: list[dict], path: str | Path = SEEDS_ASSET, command: str = "",
                       preset: str = "default") -> dict:  # fmt: skip
    out = {"preset": preset, "command": command, "runs": rows, "summary": summarize(rows)}
    write_atomically({Path(path): (json.dumps(out, indent=1) + "\n").encode()})
    return out


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _valid_row(r) -> bool:
    if not isinstance(r, dict) or any(k not in r for k in ROW_FIELDS):
        return False
    nums = [r[k] for k in ROW_FIELDS if k != "crossover_k"] + ([] if r["crossover_k"] is None else [r["crossover_k"]])
    curves = [r[k] for k in CURVE_FIELDS + ("ripple_carry_pass_at_1",) if k in r]
    lists = [r[k] for k in LIST_FIELDS if k in r]
    return (all(_number(x) for x in nums)
            and all(isinstance(c, list) and c and all(_number(x) and 0 <= x <= 1 for x in c) for c in curves)
            and all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in lists))  # fmt: skip


def seed_curves(rows: list[dict]) -> dict | None:
    """Median, min and max over seeds of the pass@k curves before and after, if every row has them (same n). The
    median, as the captions' figures are medians: at k = 1 and 64 it is their median pass@1 and pass@64."""
    if not all(k in r for r in rows for k in CURVE_FIELDS):
        return None
    if len({len(r[k]) for r in rows for k in CURVE_FIELDS}) != 1:
        return None
    out = {}
    for k in CURVE_FIELDS:
        cols = list(zip(*(r[k] for r in rows), strict=True))
        out[k] = {"median": [statistics.median(c) for c in cols], "min": [min(c) for c in cols],
                  "max": [max(c) for c in cols]}  # fmt: skip
    return out


def side(rows: list[dict]) -> str:
    """Which side of the debate the runs show, judged on coverage at k = 64 (medians over the rows):
    "widened" when GRPO's pass@64 is higher or fewer problems are never solved (and neither says the opposite),
    "narrowed" when it is lower or more are never solved (and neither says the opposite), else "mixed"."""

    def change(key: str) -> float:
        return statistics.median(r[f"{key}_after"] for r in rows) - statistics.median(r[f"{key}_before"] for r in rows)

    wider = (change("pass_at_64"), -change("never_solved"))  # > 0: more solved within 64 samples
    if max(wider) > 0 and min(wider) >= 0:
        return "widened"
    if min(wider) < 0 and max(wider) <= 0:
        return "narrowed"
    return "mixed"


def load_seed_figures(path: str | Path = SEEDS_ASSET) -> dict | None:
    """The written figures, or None if the file is missing or not in this shape (the page then omits them).

    {"runs", "summary", "reading", "command"} as before the presets, plus "side" (side()) and "curves"
    (seed_curves(), None for an older record without curves)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list) or not data["runs"]:
        return None
    if not all(_valid_row(r) for r in data["runs"]):
        return None
    rows = data["runs"]
    return {"runs": rows, "summary": summarize(rows), "reading": reading(rows), "command": str(data.get("command", "")),
            "side": side(rows), "curves": seed_curves(rows), "preset": str(data.get("preset", "default"))}  # fmt: skip


RUN_ASSET = ASSETS / "data" / "tinylm_run.json"  # the default run's live metrics (scripts/record_tinylm_run.py)
RUN_METRICS = ("reward", "entropy", "kl", "frac_reward_zero_std")  # logged by sim's trainer (TRL names)


def write_run_record(steps: list[dict], result: dict, path: str | Path = RUN_ASSET, command: str = "") -> dict:
    """One run's metrics by iteration (None where a metric was not logged, e.g. kl between kl_every checks),
    the exact held-out pass@1 where checked ([iteration, value] pairs, iteration 0 included) and its pass@k curves."""
    out = {"command": command, "iterations": [int(m["iteration"]) for m in steps],
           "metrics": {k: [m.get(k) for m in steps] for k in RUN_METRICS},
           "pass_at_1": [[int(i), float(v)] for i, v in result["exact_pass_at_1"]],
           **{k: result[k] for k in CURVE_FIELDS}}
    write_atomically({Path(path): (json.dumps(out) + "\n").encode()})
    return out


def load_run_record(path: str | Path = RUN_ASSET) -> dict | None:
    """The recorded run (write_run_record's shape), or None if the file is missing or not in that shape."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    try:
        its, metrics = data["iterations"], data["metrics"]
        n = len(its)
        ok = (n > 0 and its == list(range(1, n + 1)) and set(metrics) == set(RUN_METRICS)
              and all(len(metrics[k]) == n and all(v is None or _number(v) for v in metrics[k]) for k in RUN_METRICS)
              and all(len(p) == 2 and 0 <= p[0] <= n and _number(p[1]) for p in data["pass_at_1"])
              and all(isinstance(data[k], list) and data[k] and all(_number(x) for x in data[k]) for k in CURVE_FIELDS))
    except (KeyError, TypeError):
        return None
    return data if ok else None


def load_preset_figures() -> dict[str, dict]:
    """Each preset's record that loads, by preset name (in PRESET_NAMES order)."""
    figs = {name: load_seed_figures(PRESET_ASSETS[name]) for name in PRESET_NAMES}
    return {name: f for name, f in figs.items() if f is not None}
