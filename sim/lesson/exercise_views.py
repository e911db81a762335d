"""The lesson's exercise views built from tables: One group (the worked example) and KL and clipping (the
chapter's k3 check and its clip example). Each entry is computed at build time by sim/views and sim/kl_clip,
the functions the app's pages call."""

from __future__ import annotations

from sim.grpo import LOSS_TYPE_LABELS, LOSS_TYPES
from sim.kl_clip import CHAPTER_P_NEW, CHAPTER_P_OLD, clip_example, kl_check, kl_estimators
from sim.lesson.views import View, _dim
from sim.views.one_group import GROUPS, one_group_words, parse_group

SCALE_NAMES = {"group": "group std (chapter)", "none": "nothing (mean only)"}


def one_group_entry(group: str, scale: str, loss: str) -> dict:
    words = one_group_words(parse_group(group), scale=scale, loss_type=loss)
    return {"payload": None, "predict": None, **words}


def one_group_view() -> View:
    combos = [{"rewards": g, "scale": s, "loss": lt} for g in GROUPS for s in SCALE_NAMES for lt in LOSS_TYPES]
    return View(
        "one_group", "One group",
        "Take one prompt, x = 37+48=, sample G answers and check each. GRPO compares every answer with its "
        "siblings: the group mean is a free Monte Carlo estimate of the value V(x), so no critic is needed. It "
        "opens on the chapter's group: answers 85, 75, 815, 85 with rewards 1, 0, 0, 1. "
        "Advantage A = (r − mean(r)) / (std(r) + ε).",
        [_dim("rewards", "Rewards of the group", tuple(GROUPS), GROUPS.get),
         _dim("scale", "Divide the advantages by", tuple(SCALE_NAMES), SCALE_NAMES.get),
         _dim("loss", "Loss type", LOSS_TYPES, LOSS_TYPE_LABELS.get)],
        [(v, (lambda v=v: one_group_entry(v["rewards"], v["scale"], v["loss"]))) for v in combos],
        defaults={"rewards": "1,0,0,1", "scale": "group", "loss": "grpo"},
        what="The worked example: advantages, per-token weights for every loss type, the length bias and the "
             "first-token credit, for the chapter's groups.",
    )  # fmt: skip


KL_PIS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
KL_REFS = (0.3, 0.5, 0.7)
CLIP_EPS = (0.1, 0.2, 0.3)


def kl_entry(pi: float, pi_ref: float, eps: float) -> dict:
    chk = kl_check(pi, pi_ref)
    us = (0.25, 0.5, 0.8, 1.0, 1.25, 2.0, 4.0)
    est = kl_estimators(us)
    ex = clip_example(CHAPTER_P_OLD, CHAPTER_P_NEW, 1.0, eps)
    above = (f"π = {pi:.2f}, π_ref = {pi_ref:.2f}: u = π_ref / π = {chk['u']:.3f}, k3 = u − log u − 1 = "
             f"{chk['k3']:.4f}, d k3 / d log π = 1 − u = {chk['dk3_dlogp']:.3f}, k1 = {chk['k1']:.4f}, k2 = "
             f"{chk['k2']:.4f}. Chapter check: π = 0.6, π_ref = 0.5 gives u = 0.833, k3 = 0.0157 and slope 0.167.")
    below = (f"PPO's clip, the chapter's token {CHAPTER_P_OLD:.2f} → {CHAPTER_P_NEW:.2f} with A > 0 and ε = {eps:.2f}: "
             f"ratio ρ = {ex['ratio']:.3f}, slope d s / d ρ = {ex['slope']:.3f}: "
             + ("clipped, no more gradient on the next inner step." if ex["clipped"] else "still pushed up."))
    table = {"title": "k1, k2, k3 per token against u = π_ref / π", "columns": ["u", "k1", "k2", "k3"],
             "rows": [[f"{u:g}", f"{a:+.4f}", f"{b:+.4f}", f"{c:+.4f}"]
                      for u, a, b, c in zip(us, est["k1"], est["k2"], est["k3"], strict=True)],
             "caption": "k3 is never negative and zero exactly when π = π_ref; k1 can be negative for a single "
                        "token; k2 is biased."}
    return {"payload": None, "above": above, "below": below, "predict": None, "tables": [table]}


def kl_view() -> View:
    combos = [{"pi": p, "pi_ref": r, "eps": e} for p in KL_PIS for r in KL_REFS for e in CLIP_EPS]
    return View(
        "kl_clip", "KL and clipping",
        "GRPO keeps the policy near a reference with β·k3, k3 = u − log u − 1 with u = π_ref / π per token, and "
        "near the sampling policy with PPO's clip on the ratio ρ = π / π_old.",
        [_dim("pi", "KL check: policy probability π", KL_PIS, lambda x: f"{x:.2f}"),
         _dim("pi_ref", "KL check: reference probability π_ref", KL_REFS, lambda x: f"{x:.2f}"),
         _dim("eps", "Clip ε", CLIP_EPS, lambda x: f"{x:.2f}")],
        [(v, (lambda v=v: kl_entry(v["pi"], v["pi_ref"], v["eps"]))) for v in combos],
        defaults={"pi": 0.6, "pi_ref": 0.5, "eps": 0.2},
        what="The k3 check (π = 0.6 vs π_ref = 0.5), k1/k2/k3 against u, and the chapter's clipped token 0.40 → 0.50.",
    )  # fmt: skip
