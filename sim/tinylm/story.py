"""The TinyLM story, written once: an SFT model -> GRPO against the verifier -> pass@k before and after.

Chapter 15, "Does RL teach new reasoning?": GRPO raises pass@1; watch pass@k at large k and the problems
never solved to see whether it also widened (or narrowed) what the model can solve at all.

    result = run_story(StoryConfig())                    # the shipped SFT checkpoint, default GRPO
    result["pass_at_k_after"][0], len(result["never_solved_after"])

Both the command line (cli.py) and the page's background job (job.py) call `run_story`; the job only adds
threads, a queue and sharing. A StoryConfig is frozen and hashable: the job registry keys runs by it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from sim.settings import setting, validate
from sim.tinylm.checkpoint import ASSET, REGENERATE, load_checkpoint, save_checkpoint
from sim.tinylm.data import prompt_text, split
from sim.tinylm.evaluate import compare, passk_eval
from sim.tinylm.grpo_train import GRPOConfig, GRPOTrainer
from sim.tinylm.memory import check_run
from sim.tinylm.model import TinyLM
from sim.tinylm.sft import SFTConfig, train_sft

KS = (1, 2, 4, 8, 16, 32, 64)  # the k values a table shows (the result holds every k from 1 to n)


@dataclass(frozen=True)
class StoryConfig:
    URL_PREFIX = "tl_"  # as GRPOConfig's
    grpo: GRPOConfig = field(default_factory=GRPOConfig)  # the GRPO run
    eval_samples: int = setting(64, "n, samples per held-out problem for pass@k (the chapter: 64)", lo=1, hi=1024,
                                integer=True, key="eval", label="Samples per held-out problem")
    from_scratch: bool = setting(False, "train SFT first (sft below) instead of loading the checkpoint")
    sft: SFTConfig = field(default_factory=SFTConfig)  # used only with from_scratch
    checkpoint: str = str(ASSET)  # the SFT model to start from unless from_scratch

    def __post_init__(self):
        validate(self)

    def to_dict(self) -> dict:
        d = asdict(self)
        if not self.from_scratch:
            d.pop("sft")
        return d


def never_solved(problems: np.ndarray, correct: np.ndarray) -> list[str]:
    """The problems with no correct sample, as prompts ("37+48="): the one representation (count = len)."""
    return [prompt_text(a, b) for (a, b), c in zip(problems, correct, strict=True) if c == 0]


def starting_model(cfg: StoryConfig, *, save_sft: str | Path | None = None, stop=None) -> tuple[TinyLM, dict | None]:
    """The SFT model: trained (cfg.from_scratch or save_sft, then saved there) or loaded. Raises CheckpointError.

    Returns (model, sft summary or None when loaded)."""
    if not (cfg.from_scratch or save_sft):
        return load_checkpoint(cfg.checkpoint)[0], None
    sft = train_sft(cfg.sft, stop=stop)
    summary = {"steps": sft.steps, "pass_at_1_exact": sft.pass_at_1, "seconds": sft.seconds}
    if save_sft:
        save_checkpoint(sft.model, save_sft, {
            "sft_config": cfg.sft.to_dict(), "seed": cfg.sft.seed, "steps": sft.steps,
            "pass_at_1_exact": sft.pass_at_1, "sft_seconds": round(sft.seconds, 1), "regenerate": REGENERATE,
        })  # fmt: skip
    return sft.model, summary


def run_story(
    cfg: StoryConfig = StoryConfig(),
    *,
    on_stage: Callable[[str], None] | None = None,
    on_step: Callable[[GRPOTrainer, dict], None] | None = None,
    stop=None,
    save_sft: str | Path | None = None,
) -> dict | None:
    """SFT model -> GRPO -> pass@k of both on the 300 held-out problems. Returns a JSON-able dict, or None
    if `stop` (a threading.Event) was set before the end.

    on_stage(name) is called as each stage begins: "sft" (only when training it), "grpo", "eval".
    on_step(trainer, metrics) after every GRPO iteration (it may block, e.g. to pause).
    Raises CheckpointError (bad or missing checkpoint) or ValueError (MemoryCapError: run too large).

    The result: pass_at_k_before / _after are the mean pass@k curves, element k-1 = pass@k for k = 1..n;
    never_solved_before / _after the held-out prompts with no correct sample in n; crossover_k where the
    curves cross (None if they do not); sft (steps, exact pass@1, seconds) when SFT was trained; timings.
    """
    check_run(cfg.grpo.prompts_per_iter, cfg.grpo.group_size, cfg.sft.model, cfg.eval_samples)
    notify = on_stage or (lambda stage: None)
    t0 = time.perf_counter()
    if cfg.from_scratch or save_sft:
        notify("sft")
    model, sft = starting_model(cfg, save_sft=save_sft, stop=stop)
    if stop is not None and stop.is_set():
        return None
    notify("grpo")
    t1 = time.perf_counter()
    trainer = GRPOTrainer(model, cfg.grpo)
    for metrics in trainer.steps(stop=stop):
        if on_step is not None:
            on_step(trainer, metrics)
    if stop is not None and stop.is_set():
        return None
    trainer.policy.eval()
    notify("eval")
    t2 = time.perf_counter()
    _, heldout = split()
    # Both models draw from the same random stream (common random numbers): with 0 GRPO iterations the two
    # evaluations are identical, so a difference between the curves is the models', not the sampling's.
    # (With independent streams the same model's two evaluations differ by ~0.003 at pass@64 and +-1
    # never-solved problem, and their curves can "cross".)
    n, seed = cfg.eval_samples, cfg.grpo.seed
    before = passk_eval(model, heldout, n=n, seed=seed, rng=cfg.grpo.rng)
    after = passk_eval(trainer.policy, heldout, n=n, seed=seed, rng=cfg.grpo.rng)
    t3 = time.perf_counter()
    return {
        "pass_at_1_before": before["pass_at_1"],
        "pass_at_1_after": after["pass_at_1"],
        "pass_at_k_before": before["pass_at_k"].tolist(),
        "pass_at_k_after": after["pass_at_k"].tolist(),
        "never_solved_before": never_solved(heldout, before["correct"]),
        "never_solved_after": never_solved(heldout, after["correct"]),
        "crossover_k": compare(before, after)["crossover_k"],
        "exact_pass_at_1": [list(p) for p in trainer.pass_at_1],  # (iteration, held-out pass@1) every eval_every
        "sft": sft,
        "grpo_seconds": t2 - t1,
        "eval_seconds": t3 - t2,
        "wall_seconds": t3 - t0,
        "iterations": trainer.iteration,
        "eval_samples": n,
        "heldout_problems": len(heldout),
        "config": cfg.to_dict(),
    }
