"""The two sides of the pass@k debate (Chapter 15, "Does RL teach new reasoning?") as two TinyLM presets.

Both start from the same SFT checkpoint and differ in ONE switch, GRPOConfig.blind_spot_prompts: whether
GRPO's training prompts include the teacher's blind-spot problems (ripple carries, 45+57 = 102, which
SFT answers right about 2 % of the time).

  * "default": they are included. GRPO samples the rare right answer on those prompts, reinforces it, and
    since it follows the carry rule the model uses everywhere else it generalises to the held-out ripple
    carries: coverage widens (pass@64 up, fewer problems never solved): the "other side" (ProRL).
  * "chapter-lab": they are left out. The rare strategy is never rewarded; GRPO sharpens the model on the
    problems it already solves, entropy falls, and the 2 % answer fades with it: pass@1 rises, pass@64
    ends below SFT's and more problems are never solved, the curves cross: the chapter's lab (sharpening).

Measured, not tuned to the chapter's digits: scripts/bench_tinylm.py --preset NAME --seeds 5 --write-figures
records each preset in assets/ (sim/tinylm/figures.py reads them); docs/tinylm.md lists the other switches
tried and what each did.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    name: str
    changes: dict  # GRPOConfig fields that differ from the defaults
    title: str  # one line for a page or a table
    why: str  # the reason, in a student's words
    side: str  # what its recorded runs show (figures.side): "widened" or "narrowed"


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("default", {}, "GRPO trains on every training problem, blind spot included",
               "the rare right answer on the blind-spot prompts is rewarded, reinforced and generalises", "widened"),
        Preset("chapter-lab", {"blind_spot_prompts": False},
               "GRPO never sees a blind-spot problem (ripple carries left out of its training prompts)",
               "the rare right answer is never rewarded, so it fades as the entropy falls", "narrowed"),
    )
}  # fmt: skip
PRESET_NAMES = tuple(PRESETS)


def preset_changes(name: str) -> dict:
    """The GRPOConfig fields the preset sets (ValueError naming the presets for an unknown name)."""
    if name not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESET_NAMES)}, got {name!r}")
    return dict(PRESETS[name].changes)


def preset_config(name: str, **overrides):
    """The preset's GRPOConfig, with `overrides` (e.g. seed) on top."""
    from sim.tinylm.grpo_train import GRPOConfig  # here, so that reading the records (figures.py) needs no torch

    return GRPOConfig(**(preset_changes(name) | overrides))


def preset_of(cfg) -> str | None:
    """The name of the preset whose switch the GRPOConfig `cfg` has (every other field may differ), or None."""
    from sim.tinylm.grpo_train import GRPOConfig

    switches = {k for p in PRESETS.values() for k in p.changes}
    defaults = {f.name: f.default for f in dataclasses.fields(GRPOConfig)}
    for p in PRESETS.values():
        if all(getattr(cfg, k) == p.changes.get(k, defaults[k]) for k in switches):
            return p.name
    return None
