"""The lesson's exercise views built from tables: One group (the worked example) and KL and clipping (the
chapter's k3 check and its clip example). Each entry is computed at build time by sim/views and sim/kl_clip,
the functions the app's pages call."""

from __future__ import annotations

import numpy as np

from sim.grpo import LOSS_TYPE_LABELS, LOSS_TYPES
from sim.kl_clip import CHAPTER_P_NEW, CHAPTER_P_OLD, clip_example, kl_check, kl_estimators
from sim.lesson.charts import kl_rows, one_group_rows
from sim.lesson.figures import rows_json
from sim.lesson.views import View, _dim
from sim.passk import crossover_k, mean_pass_at_k_known_p, pass_at_k_known_p
from sim.sharpen import CHAPTER_P_AFTER, CHAPTER_P_BEFORE, sharpening_summary
from sim.views.one_group import GROUPS, one_group_words, parse_group
from sim.views.passk import KS, toy_p_before_after

SCALE_NAMES = {"group": "group std (chapter)", "none": "nothing (mean only)"}


def one_group_entry(group: str, scale: str, loss: str) -> dict:
    words = one_group_words(parse_group(group), scale=scale, loss_type=loss)
    return {"payload": None, "predict": None, **words, "figures": rows_json(one_group_rows(parse_group(group), scale))}


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
        what="The worked example: each answer's advantage (chart), per-token weights for every loss type, the length "
             "bias and the first-token credit, for the chapter's groups.",
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
    question = {"question": f"The policy gives a token probability {pi:.2f}, the reference {pi_ref:.2f}. What is its "
                            "k3?",
                "answer": round(chk["k3"], 4), "tolerance": 0.002, "fmt": "{:.4f}",
                "explain": "k3 = u − log u − 1 with u = π_ref / π."}
    pushed, stopped = "still pushed", "no gradient: clipped"
    outcome = "is clipped: no more gradient on the next inner step" if ex["clipped"] else "is still pushed"
    clip_question = {  # pages/kl_clip.py's choice
        "kind": "choice", "options": [pushed, stopped], "answer": stopped if ex["clipped"] else pushed,
        "question": f"After one inner step a token's probability went {CHAPTER_P_OLD:.2f} → {CHAPTER_P_NEW:.2f}; its "
                    f"advantage is positive and ε = {eps:.2f}. On the next inner step, is the token still pushed up?",
        "explain": f"Token probability {CHAPTER_P_OLD:.2f} → {CHAPTER_P_NEW:.2f}: ratio {ex['ratio']:.3f}; with A > 0 "
                   f"and ε = {eps:.2f} the token {outcome}. (Chapter: 0.40 → 0.50 gives 1.25 > 1.2.)"}
    return {"payload": None, "above": above, "below": below, "predict": [question, clip_question],
            "tables": [table], "figures": rows_json(kl_rows(pi, pi_ref, eps))}


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
        what="The k3 check (π = 0.6 vs π_ref = 0.5), k1/k2/k3 against u, PPO's clip and the gradient weight of six "
             "objectives against the ratio, and the chapter's clipped token 0.40 → 0.50.",
    )  # fmt: skip


PROBLEM_KS = (1, 2, 4, 8, 16, 32, 64)


def _passk_rows(curves: dict[str, np.ndarray]) -> list[list[str]]:
    return [[str(k), *(f"{float(c[k - 1]):.3f}" for c in curves.values())] for k in PROBLEM_KS]


def problems_entry() -> dict:
    """The chapter's two problems (A 0.6 -> 0.98, B 0.05 -> 0.01) and the 24-prompt toy at iteration 0 and 200:
    the numbers pages/passk.py shows, by sim.sharpen.sharpening_summary and sim.passk."""
    s = sharpening_summary()
    (a0, b0), (a1, b1) = CHAPTER_P_BEFORE, CHAPTER_P_AFTER
    ks = KS
    problems = {"A before": pass_at_k_known_p(a0, ks), "A after": pass_at_k_known_p(a1, ks),
                "B before": pass_at_k_known_p(b0, ks), "B after": pass_at_k_known_p(b1, ks),
                "mean before": mean_pass_at_k_known_p(CHAPTER_P_BEFORE, ks),
                "mean after": mean_pass_at_k_known_p(CHAPTER_P_AFTER, ks)}
    p0, pT = toy_p_before_after()
    toy = {"iteration 0": mean_pass_at_k_known_p(p0, ks), "iteration 200": mean_pass_at_k_known_p(pT, ks)}
    cross = crossover_k(ks, toy["iteration 200"], toy["iteration 0"])
    above = (f"Problem A: p = {a0} → {a1}; problem B (a rare strategy): p = {b0} → {b1}. Averaged over the two "
             f"problems, pass@1 rises {s['pass@1_before']:.3f} → {s['pass@1_after']:.3f}, and pass@64 falls "
             f"{s['pass@64_before']:.3f} → {s['pass@64_after']:.3f}: A is solved within 64 tries either way "
             f"(pass@64 {problems['A before'][-1]:.3f} → {problems['A after'][-1]:.3f}), while B's pass@64 collapses "
             f"from {problems['B before'][-1]:.3f} to {problems['B after'][-1]:.3f}. The curves cross near k = "
             f"{s['crossover_k']:.1f}. RL sharpened the common strategy, and the rare one that cracked B faded.")
    below = (f"The 24-prompt toy: pass@1 {toy['iteration 0'][0]:.3f} → {toy['iteration 200'][0]:.3f}, pass@64 "
             f"{toy['iteration 0'][-1]:.3f} → {toy['iteration 200'][-1]:.3f}: "
             + (f"the curves cross at k ≈ {cross:.1f}." if cross is not None else
                "no crossing. In this toy a shared skill lifts every prompt, so coverage grows too. Sharpening needs "
                "a policy that can lose a rare way of solving, as in the sharpening toy."))
    question = {"question": f"Before RL the mean pass@64 is {s['pass@64_before']:.3f}. What is it after RL?",
                "answer": round(s["pass@64_after"], 3), "tolerance": 0.03, "fmt": "{:.3f}",
                "explain": f"The curves cross near k = {s['crossover_k']:.1f}."}
    tables = [{"title": "pass@k of problems A and B before and after RL, and their mean", "columns": ["k", *problems],
               "rows": _passk_rows(problems)},
              {"title": "The 24-prompt toy: mean pass@k at iteration 0 and 200 (exact expected run)",
               "columns": ["k", *toy], "rows": _passk_rows(toy)}]
    return {"payload": None, "above": above, "below": below, "predict": question, "tables": tables}


def problems_view() -> View:
    return View(
        "passk_problems", "pass@k: the chapter's two problems",
        "Chapter 15, “Does RL teach new reasoning?”: a toy example of how RL can sharpen and narrow coverage. "
        "pass@k = 1 − (1 − p)^k for a problem solved with probability p.",
        [], [({}, problems_entry)],
        what="Problems A (0.6 → 0.98) and B (0.05 → 0.01): pass@1 rises, pass@64 falls; the 24-prompt toy "
             "before and after.",
    )  # fmt: skip
