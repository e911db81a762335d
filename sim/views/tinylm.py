"""TinyLM, declared once (sim/views/doc.py): GRPO on a small transformer that learns two-digit addition.

The page is the renderer's, in both hosts (assets/js/tinylm_views.js): the reader's own run, trained in the browser
(assets/js/tinylm_run.js, proved equal to sim/tinylm; in the app also on the server, ui/tinylm_api.py), then both
presets as recorded over seeds and the default run replayed. Its controls are the trainer's settings, each a declared
setting (a link carries them as every page's do); what sim adds is `data`: the records the page draws, read from
assets/data (sim/tinylm/figures.py, trl_record.py) and the presets' words (sim/tinylm/presets.py).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from sim.settings import setting, validate
from sim.tinylm.figures import CURVE_FIELDS, LIST_FIELDS, ROW_FIELDS, load_preset_figures, load_run_record
from sim.tinylm.grpo_train import GRPOConfig
from sim.tinylm.presets import PRESET_NAMES, PRESETS
from sim.tinylm.story import StoryConfig
from sim.views.controls import Choice, Flag, Num
from sim.views.doc import Text, View


@dataclass(frozen=True)
class Page:
    """The page's own settings: the preset, and the recorded TRL run beside the live charts."""

    preset: str = setting("default", "The two sides of the pass@k debate, one switch apart: " + "; ".join(
        f"{n}: {p.title}" for n, p in PRESETS.items()), choices=PRESET_NAMES, key="tl_preset", label="Preset")
    trl: bool = setting(False, "TRL's own GRPOTrainer on the same task from the same SFT checkpoint, recorded: its "
                        "reward and held-out pass@1 beside your run's", key="tl_trl",
                        label="Overlay the recorded TRL run")

    def __post_init__(self):
        validate(self)


PRESET = Choice.of(Page, "preset", labels={"default": "blind spot among GRPO's prompts",
                                           "chapter-lab": "blind spot left out"})
SETTINGS = (  # the trainer's settings
    PRESET,
    Num.of(GRPOConfig, "iterations", lo=1, hi=600),
    Num.of(GRPOConfig, "prompts_per_iter", hi=64),
    Num.of(GRPOConfig, "group_size", hi=32),
    Choice.of(GRPOConfig, "lr", options=(1e-4, 3e-4, 5e-4, 1e-3, 2e-3),
              help="AdamW, after a short warmup, decayed linearly to 0"),
    Choice.of(GRPOConfig, "beta", options=(0.0, 0.001, 0.01, 0.04, 0.1),
              labels={0.0: "TRL default", 0.001: "R1-Zero", 0.04: "DeepSeekMath"}),
    Num.of(GRPOConfig, "mu", hi=4),
    Choice.of(GRPOConfig, "scale"),
    Choice.of(GRPOConfig, "baseline"),
    Choice.of(GRPOConfig, "loss_type"),
    Choice.of(GRPOConfig, "importance_sampling_level", labels={"sequence": "GSPO"}),
    Choice.of(GRPOConfig, "clip_eps", options=(3e-4, 0.1, 0.2, 0.28), labels={3e-4: "GSPO", 0.2: "TRL default"},
              help="matters only when μ > 1 (off-policy ratios)"),
    Num.of(GRPOConfig, "seed", hi=9999),
    Choice.of(StoryConfig, "eval_samples", options=(4, 8, 16, 32, 64)),
)
CONTROLS = (*SETTINGS, Flag.of(Page, "trl"))
RECORD_KEYS = ROW_FIELDS + CURVE_FIELDS + LIST_FIELDS  # what the page reads of each recorded run


@functools.cache
def data() -> dict:
    """What the page draws besides the trainer: each preset's runs over seeds (their figures, curves, problems never
    solved; the median curves, the side they show, the summary), the default run's record for the replay, the
    recorded TRL run (reward and held-out pass@1; None where its file cannot be read), and each preset's title, reason
    and side. Plain JSON, read once: the records do not change while the process runs."""
    from sim.tinylm.trl_record import TrlRecordError, load_trl_run

    figures = {name: {"runs": [{k: r[k] for k in RECORD_KEYS if k in r} for r in fig["runs"]],
                      "curves": fig["curves"], "side": fig["side"], "summary": fig["summary"]}
               for name, fig in load_preset_figures().items() if fig["curves"] is not None}  # fmt: skip
    try:
        trl = load_trl_run()
    except TrlRecordError:
        trl = None
    return {"figures": figures, "run": load_run_record(),
            "trl": None if trl is None else {k: trl[k] for k in ("iterations", "reward", "pass_at_1")},
            "presets": {n: {"title": p.title, "why": p.why, "side": p.side} for n, p in PRESETS.items()}}


VIEW = View(
    "tinylm", "TinyLM: GRPO on a real model",
    intro=Text("A two-layer transformer learned two-digit addition by supervised fine-tuning on an imperfect teacher "
               "and stopped at about half right (pass@1 ≈ 0.5 at temperature 1). The teacher writes a near miss (off "
               "by 1 or 10) for 30 % of problems, and has a blind spot: when a carry ripples through the tens into "
               "the hundreds (45+57 = 102) it nearly always forgets the last carry and writes 02. So the model's most "
               "likely answer is usually right, a sample often is not, and a few problems it almost never gets right. "
               "GRPO samples a group of answers per prompt, scores them with the exact-match verifier and pushes up "
               "the answers that beat their group."),
    fold_intro=True, controls=CONTROLS, data=data, trainer=True,
    what="GRPO on a small transformer, trained in your browser from the shipped SFT checkpoint (pass@1 about 0.5 → "
         "0.85 in under a minute), and both sides of the pass@k debate recorded over 5 seeds with the default run "
         "replayed.",
)  # fmt: skip
