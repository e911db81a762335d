"""`python -m sim diagnose` while a run trains: a transformers TrainerCallback for TRL's GRPOTrainer.

    from sim.yourdata.callback import DiagnoseCallback
    trainer = GRPOTrainer(..., callbacks=[DiagnoseCallback("diagnosis.json")])
    trainer.train()       # stderr: "diagnose: step 140: [warn] Entropy falls 23%, ... (holds from step 110)"

Every `every` optimizer steps (and at the end) rank 0 reads the run's log as a checkpoint's trainer_state.json
holds it, applies the rules of sim/yourdata/diagnose.py through their public API (load_run_log, diagnose,
DiagnoseConfig, to_json), prints one line to stderr the first time each rule fires, and rewrites `path`
atomically: the trainer_state.json it read, plus a "diagnosis" object (the findings, as `python -m sim diagnose
--json` gives them, without the per-step arrays). The Your run page and `python -m sim diagnose` read that file
as they read any trainer_state.json. A check costs what diagnosing a file costs (0.1 s for 600 steps, 1.6 s for
10,000 on a loaded 2-core machine), so checks are spaced to take at most `max_share` of the run's time.

The callback also records the settings the rules need and a log does not say (G, beta, mu, how optimizer steps
relate to generations: `run_settings`) in the TrainerState, under stateful_callbacks["DiagnoseCallback"]
["attributes"]["run_settings"]; transformers then writes them into every checkpoint's trainer_state.json
(ExportableState). `python -m sim tinylm --trainer trl` puts the same dict in its --json summary.

Under `accelerate launch` every rank runs the callback and only the main process (state.is_world_process_zero)
reads, prints and writes. This module imports transformers (pip install -r requirements-trl.txt); nothing in the
app or in `--trainer sim` imports it.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

try:
    from transformers import TrainerCallback
    from transformers.trainer_callback import ExportableState
except ImportError as e:  # TRL and transformers are optional: say what to install
    raise ImportError(f"sim.yourdata.callback needs transformers ({e.name} is not installed): "
                      "pip install -r requirements-trl.txt") from e  # fmt: skip

from sim.runtime.files import check_writable, write_atomically
from sim.yourdata.diagnose import DiagnoseConfig, diagnose, to_json
from sim.yourdata.runlog import DataError, load_run_log

SCALES = {True: "group", False: "none"}  # older TRL releases took a bool for scale_rewards


def run_settings(args) -> dict:
    """What a GRPO run's log needs beside it to be read, from its TRL GRPOConfig (`args`): {} for a trainer that
    is not GRPO. The names are sim's where the rules use them (TRL's in brackets):

        group_size (num_generations), beta, mu (num_iterations), loss_type, scale (scale_rewards),
        prompts_per_generation: unique prompts in one generation batch (generation_batch_size / G),
        steps_per_generation, gradient_accumulation_steps, num_processes, logging_steps,
        optimizer_steps_per_generation = steps_per_generation * mu / gradient_accumulation_steps,
        step: "optimizer": what log_history's `step` counts.

    TRL logs one entry per `logging_steps` optimizer steps; with optimizer_steps_per_generation = k > 1 the
    rewards (reward, reward_std, frac_reward_zero_std, rewards/*) are logged on one step in k, at the step that
    generated them, and the loss metrics (clip_ratio, kl, entropy) on every step.

    >>> from types import SimpleNamespace as A
    >>> run_settings(A(num_generations=8, beta=0.0, num_iterations=2, loss_type="grpo", scale_rewards="group",
    ...                generation_batch_size=128, steps_per_generation=16, gradient_accumulation_steps=16,
    ...                world_size=1, logging_steps=1))["optimizer_steps_per_generation"]
    2
    """
    G = getattr(args, "num_generations", None)
    if not isinstance(G, int):
        return {}
    spg, ga, mu = args.steps_per_generation, args.gradient_accumulation_steps, args.num_iterations
    k = spg * mu / ga
    return {"group_size": G, "beta": float(args.beta), "mu": int(mu), "loss_type": str(args.loss_type),
            "scale": SCALES.get(args.scale_rewards, str(args.scale_rewards)),
            "prompts_per_generation": int(args.generation_batch_size // G), "steps_per_generation": int(spg),
            "gradient_accumulation_steps": int(ga), "num_processes": int(args.world_size),
            "logging_steps": args.logging_steps, "optimizer_steps_per_generation": int(k) if k == int(k) else k,
            "step": "optimizer"}  # fmt: skip


def to_stderr(line: str) -> None:
    """The default `echo`: one line on stderr, flushed."""
    print(line, file=sys.stderr, flush=True)  # stdout may be a --json summary


class DiagnoseCallback(TrainerCallback, ExportableState):
    """Apply `python -m sim diagnose`'s rules during training (see the module's docstring).

    path: where to keep the latest log and findings (None: print only); every: optimizer steps between checks;
    group_size: G for the rules (None: the run's num_generations); thresholds: DiagnoseConfig's other fields;
    report: the statuses that print a line ("warn"; add "info" for the expected facts such as "kl absent");
    max_share: the most of the run's time checks may take; echo: where lines go (None: nowhere).
    After training, `fired` maps each rule that fired (and "nonfinite:<metric>" for a NaN or infinite value) to
    [the step it first held, the step the check saw it]."""

    def __init__(self, path: str | Path | None = None, *, every: int = 10, group_size: int | None = None,
                 thresholds: dict | None = None, report: tuple[str, ...] | list[str] = ("warn",),
                 max_share: float = 0.05, echo: Callable[[str], None] | None = to_stderr):  # fmt: skip
        if not (isinstance(every, int) and every >= 1):
            raise ValueError(f"every must be a whole number of steps >= 1, got {every!r}")
        if not 0 < max_share <= 1:
            raise ValueError(f"max_share must be in (0, 1], got {max_share!r}")
        self.path = None if path is None else check_writable(path, "DiagnoseCallback path")
        self.every, self.report, self.max_share, self.echo = every, tuple(report), max_share, echo
        self.group_size, self.thresholds = group_size, dict(thresholds or {})
        self.config = DiagnoseConfig(group_size=group_size, **self.thresholds)  # ValueError naming a bad field
        self.run_settings: dict = {}
        self.fired: dict[str, list[int]] = {}
        self.diagnosis = None  # the latest sim.yourdata.diagnose.Diagnosis
        self.errors = 0  # checks whose log could not be read (said once)
        self._checked_step, self._next_time = 0, 0.0

    # ---- ExportableState: what a checkpoint's trainer_state.json keeps of this callback --------------------------

    def state(self) -> dict:
        return {"args": {"path": None if self.path is None else str(self.path), "every": self.every,
                         "group_size": self.group_size, "thresholds": self.thresholds,
                         "report": list(self.report), "max_share": self.max_share},
                "attributes": {"run_settings": self.run_settings, "fired": self.fired}}  # fmt: skip

    # ---- TrainerCallback ---------------------------------------------------------------------------------------

    def on_train_begin(self, args, state, control, **kwargs):
        self.run_settings = run_settings(args)
        if self.group_size is None and "group_size" in self.run_settings:
            self.config = dataclasses.replace(self.config, group_size=self.run_settings["group_size"])
        state.stateful_callbacks[type(self).__name__] = self.state()  # into trainer_state.json from step 0

    def on_log(self, args, state, control, logs=None, **kwargs):
        due = state.global_step - self._checked_step >= self.every and time.perf_counter() >= self._next_time
        if state.is_world_process_zero and due:
            self.check(state)

    def on_train_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero and state.global_step > 0:
            self.check(state)

    # ---- the check ---------------------------------------------------------------------------------------------

    def check(self, state) -> None:
        """Diagnose `state` (a transformers TrainerState) now: print what fired first, rewrite `path`."""
        t0 = time.perf_counter()
        step = state.global_step
        self._checked_step = step
        if not any("reward" in entry for entry in state.log_history):
            return  # no generation logged yet: nothing to read
        state.stateful_callbacks[type(self).__name__] = self.state()
        obj = dataclasses.asdict(state)  # what TrainerState.save_to_json writes (NaN included: the reader reads it)
        try:
            d = diagnose(load_run_log(json.dumps(obj).encode(), "trainer_state.json"), self.config)
        except DataError as e:  # the reader refused this log: say so once, keep training
            if not self.errors:
                self._say(f"diagnose: step {step}: cannot read this run's log: {e}")
            self.errors += 1
            return
        self.diagnosis = d
        obj["log_history"] = [self._finite(entry) for entry in obj["log_history"]]  # the file: valid JSON
        for f in d.findings:
            if f.status in self.report and f.key not in self.fired:
                first = f.steps[0] if f.steps else step
                self.fired[f.key] = [int(first), int(step)]
                self._say(f"diagnose: step {step}: [{f.status}] {f.title} (holds from step {first})")
        if self.path is not None:
            found = {k: v for k, v in to_json(d).items() if k not in ("steps", "metrics", "derived")}
            obj["stateful_callbacks"][type(self).__name__] = self.state()
            obj["diagnosis"] = {"at_step": step, "fired": self.fired, **found}
            write_atomically({self.path: (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode()})
        cost = time.perf_counter() - t0
        self._next_time = time.perf_counter() + cost * (1 / self.max_share - 1)

    def _finite(self, entry: dict) -> dict:
        """A log entry with NaN and infinities as null, each named in one line the first time: transformers logs a
        NaN grad_norm as NaN, which JSON has no value for; the file this callback writes stays valid JSON (the
        diagnosis in it was read from the NaN itself, and names it)."""
        out = {}
        for k, v in entry.items():
            if isinstance(v, float) and not math.isfinite(v):
                key = f"nonfinite:{k}"
                if key not in self.fired:
                    self.fired[key] = [int(entry.get("step", 0)), int(entry.get("step", 0))]
                    self._say(f"diagnose: step {entry.get('step')}: [warn] {k} is {v} (written as null, which the "
                              "rules skip)")
                v = None
            out[k] = v
        return out

    def _say(self, line: str) -> None:
        if self.echo is not None:
            self.echo(line)
