"""Training dynamics: GRPO on the chapter's 24-prompt toy, computed and played in the browser, in the app and in a
lesson alike. Declared here (its controls, presets and tools); its document is assets/js/views.js `training`, a live
part the engine computes (assets/js/engine.js, proved equal to sim/toy) and assets/js/toy_views.js turns into five
charts and their captions.

What the app adds: `lab_extras` ("Use my lab code": the student's group_advantages, tabulated for G, which the
browser trains the toy with) and `export` (the run's history as CSV, the settings as JSON, TRL's GRPOConfig,
computed by sim on a click).
"""

from __future__ import annotations

from sim.export import settings_json, toy_history_csv, trl_grpo_config, trl_snippet
from sim.toy import ToyConfig, check_table
from sim.views.controls import Choice, Flag, Num, build_config, check_values
from sim.views.doc import Note, Text, Verdict, View

BETAS = (0.0, 0.001, 0.01, 0.04, 0.1)  # the page's choices of β
BETA_LABELS = {0.0: "TRL default", 0.001: "R1-Zero", 0.04: "DeepSeekMath"}
# The page's controls, in the sidebar's order; their URL keys are the presets' keys.
CONTROLS = (
    Num.of(ToyConfig, "group_size", hi=64),
    Choice.of(ToyConfig, "beta", options=BETAS, labels=BETA_LABELS),
    Choice.of(ToyConfig, "scale"),
    Choice.of(ToyConfig, "baseline"),
    Num.of(ToyConfig, "lr", lo=0.05, hi=2.0, fmt="%.2f"),
    Num.of(ToyConfig, "lr_w", hi=2.0, default=ToyConfig().lr, fmt="%.2f",
           help="the chapter's toy moves w and u_j at the same rate; 0 switches the shared skill off"),
    Num.of(ToyConfig, "mu", hi=8, help="μ > 1 reuses the batch; then the clip matters"),
    Num.of(ToyConfig, "clip_eps", lo=0.05, hi=0.5, fmt="%.2f"),
    Choice.of(ToyConfig, "clip_eps_high", options=(None, 0.28, 5),
              labels={None: "= ε", 0.28: "DAPO clip-higher", 5: "CISPO's ε_max (TRL)"}),
    Choice.of(ToyConfig, "loss_type", help="with μ > 1: PPO's clip silences an answer whose ratio left the range; "
              "CISPO caps its weight and keeps its gradient"),
    Flag.of(ToyConfig, "dynamic_sampling"),
    Num.of(ToyConfig, "d_min", lo=-10.0, hi=10.0, fmt="%.1f"),
    Num.of(ToyConfig, "d_max", lo=-10.0, hi=15.0, fmt="%.1f"),
    Num.of(ToyConfig, "seed", hi=9999),
    Num.of(ToyConfig, "n_seeds", hi=64, default=16),
    Num.of(ToyConfig, "iterations", lo=50, hi=500),
)
PRESETS = {  # name -> the settings it changes, by URL key (the rest go back to their defaults)
    "Chapter defaults": {},
    "No shared skill (lr_w = 0)": {"lr_w": 0.0},
    "R1-Zero's KL (β = 0.001)": {"beta": 0.001},
    "Dr. GRPO (no std)": {"scale": "none"},
    "μ = 8, lr 2: the clip bites": {"mu": 8, "lr": 2.0},
    "… with clip-higher (DAPO)": {"mu": 8, "lr": 2.0, "eps_high": 0.28},
    "… with CISPO": {"mu": 8, "lr": 2.0, "loss": "cispo", "eps_high": 5},
}


def page_config(values: dict) -> ToyConfig:
    """The config the page runs for these URL values (keys of CONTROLS), the others at the page's defaults;
    ValueError for a key or a value the page's controls do not offer (check_values), before any work."""
    return build_config(ToyConfig, CONTROLS, check_values(CONTROLS, values))


HARD = 0.1  # the hardest prompt "starts to learn" once its p passes this


def lab_extras(values: dict, lab) -> dict:
    """"Use my lab code": the student's group_advantages tabulated for this G in the lab's sandbox, its verdict
    (`slots`), and the table the browser trains the toy with (right or wrong: a mistake shows in the run)."""
    cfg = build_config(ToyConfig, CONTROLS, values)  # every field checked by its declaration, the memory cap too
    if cfg.baseline != "mean" or cfg.scale == "batch" or cfg.ddof != 0:
        return {"table": None, "slots": {"top": [Note(
            "Your group_advantages is the chapter's (group mean, population std, optional std division): set the "
            "baseline to mean and the std to group or none to train the toy with it.")]}}
    tab = lab.advantage_table(cfg.group_size, scale_std=cfg.scale == "group", eps=cfg.eps)
    top = [Verdict(tab, f"group_advantages, tabulated for G = {cfg.group_size}", lab, "group_advantages")]
    if tab.student is None:
        return {"table": None, "slots": {"top": top}}
    try:
        a_c, a_w = check_table(cfg, (tab.student[:, 0], tab.student[:, 1]))
    except ValueError as e:
        return {"table": None, "slots": {"top": top + [Note("The toy cannot train with your advantages:", "error"),
                                                        Text(str(e))]}}
    return {"table": [a_c.tolist(), a_w.tolist()], "slots": {"top": top}}


def export(kind: str, values: dict) -> dict:
    """An export of this setting, on a click: "csv" (the run's history, the rows `python -m sim toy --out` writes),
    "json" (the settings) or "trl" (TRL's GRPOConfig for it)."""
    cfg = page_config(values)
    if kind == "csv":
        return {"filename": "grpo_toy_history.csv", "mime": "text/csv", "text": toy_history_csv(cfg), "show": False}
    if kind == "json":
        return {"filename": "grpo_settings.json", "mime": "application/json",
                "text": settings_json(values, page="training"), "show": False}
    if kind == "trl":
        return {"filename": "grpo_config.py", "mime": "text/x-python", "text": trl_snippet(trl_grpo_config(cfg)),
                "show": True}
    raise ValueError(f"not an export: {kind!r} (csv, json or trl)")


VIEW = View(
    "training", "Training dynamics",
    intro=Text("GRPO on a pool of prompts whose difficulty increases left to right. Prompt j is solved with "
               "probability p_j = σ(w + u_j − d_j): d_j a fixed difficulty, u_j the prompt's own parameter, w a shared "
               "skill every prompt's gradient moves (a stand-in for a network's shared weights). Each iteration "
               "samples G answers per prompt, computes group advantages and takes one policy-gradient step. Press "
               "Play: the charts replay the run in your browser.",
               md="GRPO on a pool of prompts whose difficulty increases left to right. Prompt $j$ is solved with "
                  "probability $p_j = \\sigma(w + u_j - d_j)$: $d_j$ a fixed difficulty, $u_j$ the prompt's own "
                  "parameter, $w$ a shared skill every prompt's gradient moves (a stand-in for a network's shared "
                  "weights). Each iteration samples $G$ answers per prompt, computes group advantages and takes one "
                  "policy-gradient step. Press Play: the charts replay the run in your browser."),
    controls=CONTROLS, presets=PRESETS, fold_intro=True, tools=("pin", "new_seed", "exports"),
    what="The 24-prompt toy in the player (Play / Pause / Step / Reset): accuracy over seeds, zero-gradient groups, "
         "each prompt's p_j, KL and entropy; presets; in the app also Pin, New seed and the exports.",
)  # fmt: skip
