"""pass@k: the sharpening toy's player charts and caption, for the app's page and a lesson."""

from __future__ import annotations

import numpy as np

from sim.player.spec import COLORS, Chart, Line
from sim.sharpen import SharpenHistory
from sim.toy import ToyConfig, expected_run

KS = np.arange(1, 65)  # k = 1..64, drawn on a log axis


def sharpen_charts(h: SharpenHistory) -> list[Chart]:
    """pass@1 and pass@k over training, and the policy's entropy over strategies."""
    return [
        Chart("pass@1 rises while pass@64 falls", [
            Line(h.pass_at_1, "pass@1", color=COLORS["main"], width=3),
            Line(h.pass_at_k, f"pass@{h.config.k_eval}", color=COLORS["bad"], width=3),
        ], y_title="pass@k", y_range=(0, 1.02)),
        Chart("Policy entropy over strategies", [Line(h.entropy, "entropy", color=COLORS["good"], width=3)],
              y_title="entropy (nats)"),
    ]  # fmt: skip


def sharpen_caption(h: SharpenHistory) -> str:
    """What the sharpening run did, with its numbers."""
    cross = h.crossover(KS)
    return (
        f"One set of strategy logits is shared by both problems. After {h.config.iterations} iterations p = "
        f"({h.p[-1, 0]:.2f}, {h.p[-1, 1]:.2f}) from ({h.p[0, 0]:.2f}, {h.p[0, 1]:.2f}); entropy "
        f"{h.entropy[0]:.2f} → {h.entropy[-1]:.2f} nats; pass@1 {h.pass_at_1[0]:.3f} → {h.pass_at_1[-1]:.3f}, "
        f"pass@64 {h.pass_at_k[0]:.3f} → {h.pass_at_k[-1]:.3f}"
        + (f"; the curves cross at k ≈ {cross:.1f}." if cross is not None else "; the curves do not cross in this run.")
        + " Watch pass@k at large k and the entropy, not just pass@1."
    )


def toy_p_before_after(T: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """p_j of the 24-prompt toy (chapter defaults) at iteration 0 and T, exact expected run: (P,), (P,)."""
    h = expected_run(ToyConfig(iterations=T))
    return h.p[0, 0], h.p[-1, 0]
