"""The default TinyLM story over several GRPO seeds: what GRPO does at large k, with the spread.

`scripts/bench_tinylm.py --write-figures` runs story.run_story for seeds 0, 1, 2, ... and writes
assets/tinylm_seeds.json; the page and the README show it. Runs are deterministic (float64), so the file
is what the code gives on any machine; tests/test_tinylm.py checks seed 0's row against a fresh run.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

from sim.files import write_atomically

SEEDS_ASSET = Path(__file__).resolve().parents[2] / "assets" / "tinylm_seeds.json"
ROW_FIELDS = ("seed", "pass_at_1_before", "pass_at_1_after", "pass_at_64_before", "pass_at_64_after",
              "never_solved_before", "never_solved_after", "crossover_k")  # fmt: skip


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
    }


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


def write_seed_figures(rows: list[dict], path: str | Path = SEEDS_ASSET, command: str = "") -> dict:
    out = {"command": command, "runs": rows, "summary": summarize(rows)}
    write_atomically({Path(path): (json.dumps(out, indent=1) + "\n").encode()})
    return out


def _valid_row(r) -> bool:
    if not isinstance(r, dict) or any(k not in r for k in ROW_FIELDS):
        return False
    nums = [r[k] for k in ROW_FIELDS if k != "crossover_k"] + ([] if r["crossover_k"] is None else [r["crossover_k"]])
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in nums)


def load_seed_figures(path: str | Path = SEEDS_ASSET) -> dict | None:
    """The written figures, or None if the file is missing or not in this shape (the page then omits them)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list) or not data["runs"]:
        return None
    if not all(_valid_row(r) for r in data["runs"]):
        return None
    rows = data["runs"]
    return {"runs": rows, "summary": summarize(rows), "reading": reading(rows), "command": str(data.get("command", ""))}
