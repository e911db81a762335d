"""A background training job for a UI: SFT checkpoint -> GRPO -> pass@k, in a worker thread.

No Streamlit here. A page keeps a TrainingJob in its session, calls `snapshot()` to draw (which also
counts as a heartbeat) and `stop()` / `pause()` / `resume()` from buttons. The worker thread:

  * waits for a slot: at most MAX_CONCURRENT jobs train at once in this process (a module-level
    BoundedSemaphore); waiting jobs see their place in line;
  * runs with torch threads = 1;
  * stops when told, or by itself when nobody has polled it for `heartbeat_s` seconds (tab closed).
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from pathlib import Path

import torch

from sim.tinylm.checkpoint import ASSET, CheckpointError, load_checkpoint
from sim.tinylm.data import split
from sim.tinylm.evaluate import compare, passk_eval
from sim.tinylm.grpo_train import GRPOConfig, GRPOTrainer
from sim.tinylm.sft import SFTConfig, train_sft

MAX_CONCURRENT = int(os.environ.get("TINYLM_MAX_JOBS", os.cpu_count() or 1))  # one training per core
_slots = threading.BoundedSemaphore(MAX_CONCURRENT)
_queue: list[TrainingJob] = []  # jobs waiting for a slot, oldest first
_queue_lock = threading.Lock()


class TrainingJob:
    """One SFT->GRPO->eval run in a daemon thread; all shared state behind `lock`."""

    def __init__(
        self,
        cfg: GRPOConfig,
        *,
        eval_samples: int = 64,
        checkpoint: str | Path = ASSET,
        from_scratch: bool = False,
        heartbeat_s: float = 30.0,
    ):
        if not 1 <= eval_samples <= 1024:
            raise ValueError(f"eval_samples must be in [1, 1024], got {eval_samples}")
        self.cfg, self.eval_samples = cfg, eval_samples
        self.checkpoint, self.from_scratch, self.heartbeat_s = Path(checkpoint), from_scratch, heartbeat_s
        self.lock = threading.Lock()
        self.stop_event, self.pause_event = threading.Event(), threading.Event()
        self._seen = time.monotonic()
        self._p = {"state": "queued", "iteration": 0, "history": [], "pass_at_1": [], "groups": [],
                   "result": None, "error": None, "checkpoint_error": False}  # fmt: skip
        self.thread = threading.Thread(target=self._run, name="tinylm-job", daemon=True)

    # ---- called from the UI -------------------------------------------------------------
    def start(self) -> TrainingJob:
        with _queue_lock:
            _queue.append(self)
        self.thread.start()
        return self

    def snapshot(self) -> dict:
        """A copy of the progress (lists copied), plus the place in line while queued. Also a heartbeat."""
        self._seen = time.monotonic()
        with self.lock:
            snap = {k: (list(v) if isinstance(v, list) else v) for k, v in self._p.items()}
        with _queue_lock:
            snap["queue_position"] = _queue.index(self) + 1 if self in _queue else 0
        snap["paused"] = self.pause_event.is_set()
        snap["iterations"] = self.cfg.iterations
        return snap

    def stop(self) -> None:
        self.stop_event.set()

    def pause(self) -> None:
        self.pause_event.set()

    def resume(self) -> None:
        self.pause_event.clear()

    @property
    def running(self) -> bool:
        return self.thread.is_alive()

    # ---- the worker ---------------------------------------------------------------------
    def _set(self, **kw) -> None:
        with self.lock:
            self._p.update(kw)

    def _abandoned(self) -> bool:
        if time.monotonic() - self._seen > self.heartbeat_s:
            self.stop_event.set()
        return self.stop_event.is_set()

    def _run(self) -> None:
        got = False
        try:
            while not (got := _slots.acquire(timeout=0.1)):
                if self._abandoned():
                    self._set(state="stopped")
                    return
            with _queue_lock:
                _queue.remove(self)
            torch.set_num_threads(1)
            self._train()
        except CheckpointError as e:
            self._set(state="error", error=str(e), checkpoint_error=True)
        except Exception as e:  # a UI must show a message, not a dead thread
            self._set(state="error", error=f"{type(e).__name__}: {e}", trace=traceback.format_exc())
        finally:
            with _queue_lock:
                if self in _queue:
                    _queue.remove(self)
            if got:
                _slots.release()

    def _train(self) -> None:
        if self.from_scratch:
            self._set(state="sft")
            model = train_sft(SFTConfig(threads=1), stop=self.stop_event).model
        else:
            model, _ = load_checkpoint(self.checkpoint)
        self._set(state="grpo")
        trainer = GRPOTrainer(model, self.cfg)
        self._set(pass_at_1=list(trainer.pass_at_1))
        for m in trainer.steps(stop=self.stop_event):
            with self.lock:
                self._p["iteration"] = m["iteration"]
                self._p["history"].append(m)
                self._p["pass_at_1"] = list(trainer.pass_at_1)
                self._p["groups"] = trainer.latest_groups
            # Paused: wait here, not inside the trainer, so that a closed tab (no more polls) still ends
            # the job and frees its slot.
            while self.pause_event.is_set() and not self._abandoned():
                self.stop_event.wait(0.05)
            if self._abandoned():
                break
        if self.stop_event.is_set():
            self._set(state="stopped")
            return
        self._set(state="eval")
        _, heldout = split()
        before = passk_eval(model, heldout, n=self.eval_samples, seed=self.cfg.seed)
        after = passk_eval(trainer.policy, heldout, n=self.eval_samples, seed=self.cfg.seed + 1)
        never_b = [f"{a}+{b}=" for (a, b), c in zip(heldout, before["correct"], strict=True) if c == 0]
        never_a = [f"{a}+{b}=" for (a, b), c in zip(heldout, after["correct"], strict=True) if c == 0]
        result = {
            "ks": list(range(1, self.eval_samples + 1)),
            "pass_at_k_before": before["pass_at_k"].tolist(),
            "pass_at_k_after": after["pass_at_k"].tolist(),
            "never_solved_before": never_b,
            "never_solved_after": never_a,
            "crossover_k": compare(before, after)["crossover_k"],
        }
        self._set(state="done", result=result)
