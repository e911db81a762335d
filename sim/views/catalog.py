"""Every view of the playground, declared once, in the app's order, with its page's icon (the view's own declaration,
sim/views/NAME.py, has its title, its line for the front page (`what`), its controls and its words); and every
exercise and lab task of the chapter with the view that works it. The app's navigation and home, a lesson's pages
and contents, and the tests read these lists. Views are imported on demand (TinyLM's imports torch)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Page:
    name: str  # sim/views/NAME.py's VIEW (MODULES says where else), pages/NAME.py, /NAME in the app, NAME.html
    icon: str  # the app's navigation


PAGES = (
    Page("one_group", ":material/group:"),
    Page("training", ":material/play_circle:"),
    Page("wasted", ":material/block:"),
    Page("std_scaling", ":material/straighten:"),
    Page("passk", ":material/target:"),
    Page("kl_clip", ":material/link:"),
    Page("tinylm", ":material/neurology:"),
    Page("lab", ":material/science:"),
    Page("your_run", ":material/monitoring:"),
    Page("your_prompts", ":material/dataset:"),
)
NAMES = tuple(p.name for p in PAGES)
MODULES = {"your_run": ("your_data", "RUN_VIEW"), "your_prompts": ("your_data", "PROMPTS_VIEW")}


@dataclass(frozen=True)
class Exercise:
    item: str  # the chapter's item
    task: str  # what the reader does
    page: str  # the view that works it
    question: bool = False  # the view asks it first with ?predict=1


EXERCISES = (
    Exercise("“A worked example first”: rewards 1, 0, 0, 1 and 1, 0, 0, 0", "compute the group advantages",
             "one_group"),
    Exercise("“From advantages to a loss”: token weights and the length bias", "weigh each token, per loss type",
             "one_group"),
    Exercise("“Groups that teach nothing”: p = 0.05 with G = 8 and G = 64", "predict how often a group gives signal",
             "wasted", True),
    Exercise("Exercise 15.4: std scaling", "predict the mean |A| of 1 correct in 8, then compare training",
             "std_scaling", True),
    Exercise("“Adding the KL leash”: k3 at π = 0.6, π_ref = 0.5", "predict k3 and its slope; why k3, by sampling",
             "kl_clip", True),
    Exercise("“Adding PPO's clip”: 0.40 → 0.50 with ε = 0.2", "predict whether the token is still pushed", "kl_clip",
             True),
    Exercise("“Does RL teach new reasoning?”: the two problems", "predict pass@64 after RL", "passk", True),
    Exercise("“Watching it train”: the 24 prompts", "predict when the hardest prompt starts to learn", "training",
             True),
    Exercise("Lab, Task 2: group advantages", "write group_advantages and run its checks", "lab"),
    Exercise("Lab, Task 3: the k3 estimator", "write k3_kl and run its checks", "lab"),
    Exercise("Lab, Task 4: the GRPO loss", "write grpo_loss and run its checks", "lab"),
    Exercise("Lab: TinyLM from about 50% to over 80%, and pass@k", "train it and watch pass@k at large k", "tinylm"),
    Exercise("“Groups that teach nothing”, the table, for your own prompts", "upload your base model's pass rates: "
             "dead groups for G = 2..64, the prompts that never teach", "your_prompts"),
    Exercise("The pass@k debate: “watch pass@k at large k and the policy's entropy”", "upload your run's log: "
             "entropy, zero-std groups and the other findings", "your_run"),
)


def page(name: str) -> Page:
    return PAGES[NAMES.index(name)]


def view(name: str):
    """The View named `name` (KeyError for another name)."""
    if name not in NAMES:
        raise KeyError(name)
    module, attr = MODULES.get(name, (name, "VIEW"))
    return getattr(importlib.import_module(f"sim.views.{module}"), attr)


def views(names=NAMES) -> list:
    return [view(n) for n in names]


# ---- the lists every test and benchmark reads (a new view is in them with no other change) ----

def browser_views() -> list[str]:
    """The views whose document the page computes, in both hosts (assets/js/views.js SHOW)."""
    return [v.name for v in views() if v.lesson == "page"]


def server_views() -> list[str]:
    """The views whose document the app's server computes for the setting (a visitor's file, the lab's checks)."""
    return [v.name for v in views() if v.server]


def lesson_views() -> list[str]:
    """The views a lesson has a page for (the others are listed on its contents page as the app's only)."""
    return [v.name for v in views() if v.lesson != "app"]


def question_views() -> list[str]:
    """The views that ask one of the chapter's exercises first (?predict=1)."""
    asked = {e.page for e in EXERCISES if e.question}
    return [n for n in NAMES if n in asked]
