"""`python -m sim tinylm --trainer trl`: TinyLM's story trained by TRL's GRPOTrainer (sim/tinylm/trl_train.py), with
the checks that come before TRL is imported (the process count, a setting TRL cannot honour). The entry point for
several processes is sim/tinylm/trl_run.py:

    python -m sim tinylm --trainer trl --json                       # one process
    accelerate launch --num_processes 2 -m sim.tinylm.trl_run --json --out run.json   # data-parallel, CPU: gloo

This module imports neither TRL nor transformers until a run asks for them, so that the app and
`--trainer sim` never load them; without them `--trainer trl` exits 2 with one line saying what to install.
"""

from __future__ import annotations

import os
import tempfile
import warnings

INSTALL = "pip install -r requirements-trl.txt"
PACKAGES = ("trl", "transformers", "accelerate", "datasets", "tokenizers")  # what the TRL trainer imports


class MissingTRL(ValueError):
    """TRL or one of its dependencies is not installed (a usage error: exit 2)."""


class ProcessCountError(ValueError):
    """The run cannot split over this many processes (exit 2); every rank raises it, rank 0 says it."""

    def __init__(self, message: str, rank: int):
        super().__init__(message)
        self.rank = rank


def processes(environ=None) -> tuple[int, int]:
    """(number of processes, this process's rank) as `accelerate launch` (torchrun) sets them in WORLD_SIZE and
    RANK; (1, 0) for a plain run."""
    from sim.validate import env_number

    world = env_number("WORLD_SIZE", 1, 1, 4096, environ, integer=True)
    return world, env_number("RANK", 0, 0, world - 1, environ, integer=True)


def check_processes(cfg, environ=None) -> None:
    """ProcessCountError before TRL is imported (three imports of it take about 20 s) when the batch's P prompts
    do not split evenly over the processes (trl_train.loop_args needs P / N groups per process)."""
    world, rank = processes(environ)
    P = cfg.prompts_per_iter
    if P % world:
        raise ProcessCountError(f"--prompts ({P}) must be a multiple of the number of processes ({world}, "
                                f"WORLD_SIZE): e.g. --prompts {P - P % world or world}", rank)  # fmt: skip


TRL_EPS = 1e-4  # GRPOTrainer divides by std + 1e-4, a constant (trl/trainer/grpo_trainer.py)


def check_translatable(cfg) -> None:
    """ValueError (one line) for a setting GRPOTrainer cannot honour, rather than silently training another one.

    The std convention (ddof) is not refused: TRL always uses the sample std, sim's default is the population
    std, and the run's summary carries export's note saying so (`trl_notes`)."""
    if cfg.baseline != "mean":
        raise ValueError(f"--baseline {cfg.baseline}: TRL's GRPOTrainer always subtracts the group mean "
                         "(TRL has RLOOTrainer for leave-one-out); use --trainer sim")  # fmt: skip
    if cfg.eps != TRL_EPS:
        raise ValueError(f"--eps {cfg.eps:g}: TRL's GRPOTrainer adds a fixed {TRL_EPS:g} to the std; use --trainer sim")
    if cfg.rng != "torch":
        raise ValueError(f"--rng {cfg.rng}: TRL's GRPOTrainer samples with its own generator and prompt order; use "
                         "--trainer sim")


def load_trainer():
    """sim.tinylm.trl_train.run_trl_story, or MissingTRL naming what to install."""
    try:
        import trl  # noqa: F401  first: a missing TRL is reported before transformers takes seconds to import

        from sim.tinylm.trl_train import run_trl_story
    except ImportError as e:
        name = (e.name or "").split(".")[0]
        if name not in PACKAGES:
            raise
        raise MissingTRL(f"--trainer trl needs TRL, transformers and accelerate ({name} is not installed): "
                         f"{INSTALL}") from None  # fmt: skip
    return run_trl_story


def trl_story(cfg, *, save_sft=None, max_seconds=None, keep_trainer_state=None, diagnosis=None,
              quiet: bool = False) -> dict | None:  # fmt: skip
    """Train `cfg` (a StoryConfig) with TRL's GRPOTrainer; the summary (None on ranks > 0). Raises MissingTRL.
    keep_trainer_state: also write the run's trainer_state.json there (rank 0). diagnosis: keep `python -m sim
    diagnose`'s findings, updated while it trains, there (sim/yourdata/callback.py); each rule that fires prints a
    line on stderr unless quiet."""
    if max_seconds is not None and not max_seconds > 0:
        raise ValueError(f"--max-seconds must be > 0, got {max_seconds}")
    check_translatable(cfg.grpo)
    check_processes(cfg.grpo)  # before TRL's import, on every rank
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # TinyLM never needs the Hub; set before huggingface_hub loads
    run = load_trainer()
    from transformers.utils import logging

    logging.set_verbosity_error()  # TRL and transformers talk about defaults this run sets on purpose
    with warnings.catch_warnings(), tempfile.TemporaryDirectory(prefix="tinylm-trl-") as out:
        warnings.simplefilter("ignore", FutureWarning)
        echo = {"echo": None} if quiet else {}
        return run(cfg, output_dir=out, save_sft=save_sft, max_seconds=max_seconds,
                   keep_trainer_state=keep_trainer_state, diagnosis=diagnosis, **echo)
