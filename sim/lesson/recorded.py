"""TinyLM's recorded default run replayed in the lesson's player: the live metrics sim's trainer logged
(assets/tinylm_run.json, scripts/record_tinylm_run.py) and the presets' pass@k before/after over seeds
(assets/tinylm_*.json through sim.tinylm.figures.load_preset_figures)."""

from __future__ import annotations

import numpy as np

from sim.lesson.views import View
from sim.player import build_payload
from sim.player.spec import COLORS, Chart, Line

PASSK_KS = (1, 2, 4, 8, 16, 32, 64)
NEVER = ("never_solved_problems_before", "never_solved_problems_after")  # optional in a record


def _series(values) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values])  # a gap where it was not logged


def held(checks: list, T: int) -> np.ndarray:
    """(T+1,) the value at the last check at or before each iteration (checks: [iteration, value] in order;
    NaN before the first): a metric logged every few iterations, drawn as steps."""
    out = np.full(T + 1, np.nan)
    for (i, v), nxt in zip(checks, [c[0] for c in checks[1:]] + [T + 1], strict=True):
        out[int(i) : int(nxt)] = v
    return out


def run_charts(record: dict) -> list[Chart]:
    m, T = record["metrics"], len(record["iterations"])
    every = record["pass_at_1"][1][0] - record["pass_at_1"][0][0] if len(record["pass_at_1"]) > 1 else T
    return [
        Chart("Mean reward of the sampled answers", [Line(_series(m["reward"]), "reward", x0=1, color=COLORS["main"])],
              y_title="reward", y_range=(0, 1)),
        Chart(f"Held-out pass@1 (exact, checked every {every} iterations)",
              [Line(held(record["pass_at_1"], T), "pass@1 at the last check", color=COLORS["good"], width=3)],
              y_title="pass@1", y_range=(0, 1)),
        Chart("Groups with zero reward std (no gradient)",
              [Line(_series(m["frac_reward_zero_std"]), "frac_reward_zero_std", x0=1, color=COLORS["grey"])],
              y_title="share of groups", y_range=(0, 1)),
        Chart("Entropy and KL to the reference", [
            Line(_series(m["entropy"]), "entropy", x0=1, color=COLORS["pin"]),
            Line(held([[i, v] for i, v in zip(record["iterations"], m["kl"], strict=True) if v is not None], T),
                 "kl (at the last check)", color=COLORS["bad"]),
        ], y_title="nats"),
    ]  # fmt: skip


def run_entry(record: dict, presets: dict[str, dict]) -> dict:
    T = len(record["iterations"])
    p1 = record["pass_at_1"]
    b, a = record["pass_at_k_before"], record["pass_at_k_after"]
    above = (f"The shipped default run (sim's trainer, seed 0), recorded with {record['command']}: {T} GRPO "
             f"iterations; held-out pass@1 {p1[0][1]:.3f} at the start, {p1[-1][1]:.3f} at iteration {p1[-1][0]}. "
             "Press Play to replay its live metrics; nothing is trained in your browser.")
    ks = [k for k in PASSK_KS if k <= min(len(b), len(a))]
    rows = [[str(k), f"{b[k - 1]:.3f}", f"{a[k - 1]:.3f}"] for k in ks]
    tables = [{"title": "This run: held-out pass@k before (SFT) and after GRPO", "columns": ["k", "SFT", "GRPO"],
               "rows": rows}]
    for name, fig in presets.items():
        if fig["curves"] is None:
            continue
        cb, ca = fig["curves"]["pass_at_k_before"]["mean"], fig["curves"]["pass_at_k_after"]["mean"]
        tables.append({"title": f"Preset {name}: mean pass@k over {len(fig['runs'])} GRPO seeds (recorded)",
                       "columns": ["k", "SFT", "GRPO"],
                       "rows": [[str(k), f"{cb[k - 1]:.3f}", f"{ca[k - 1]:.3f}"] for k in ks if k <= len(cb)],
                       "caption": fig["summary"]})
    for name, fig in presets.items():
        runs = [r for r in fig["runs"] if all(k in r for k in NEVER)]
        if runs:
            tables.append({"title": f"Preset {name}: held-out problems never solved in the samples, by GRPO seed",
                           "columns": ["seed", "SFT", "GRPO"],
                           "rows": [[str(r["seed"]), *(", ".join(r[k]) or "none" for k in NEVER)] for r in runs]})
    payload = build_payload("tinylm_run", T=T, columns=2, charts=run_charts(record))
    return {"payload": payload, "above": above, "below": "", "predict": None, "tables": tables}


def tinylm_run_view() -> View | None:
    """None when assets/tinylm_run.json is missing or not in its shape."""
    from sim.tinylm.figures import load_preset_figures, load_run_record

    record = load_run_record()
    if record is None:
        return None
    presets = load_preset_figures()
    return View(
        "tinylm_run", "TinyLM: the default run replayed (recorded)",
        "A small transformer learns two-digit addition by SFT, then GRPO trains it against an exact-match verifier. "
        "This is the app's default TinyLM run as sim's trainer logged it, replayed in the player.",
        [], [({}, lambda: run_entry(record, presets))], recorded=True,
        what="The default TinyLM run's reward, held-out pass@1, zero-std groups, entropy and KL in the player; "
             "pass@k before and after and the problems never solved, for both presets (recorded).",
    )  # fmt: skip
