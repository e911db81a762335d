"""Every view of the playground, in the app's order (sim/views/doc.py declares each): what a lesson builds, lists or
names app-only, and what the drift tests open in both hosts. Imported on demand (TinyLM's view imports torch)."""

from __future__ import annotations

import importlib

NAMES = ("one_group", "training", "wasted", "std_scaling", "passk", "kl_clip", "tinylm", "lab", "your_run",
         "your_prompts")
MODULES = {"your_run": ("your_data", "RUN_VIEW"), "your_prompts": ("your_data", "PROMPTS_VIEW")}


def view(name: str):
    """The View named `name` (KeyError for another name)."""
    if name not in NAMES:
        raise KeyError(name)
    module, attr = MODULES.get(name, (name, "VIEW"))
    return getattr(importlib.import_module(f"sim.views.{module}"), attr)


def views(names=NAMES) -> list:
    return [view(n) for n in names]
