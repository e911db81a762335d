"""TinyLM runs for a UI: a worker process per run, a first-come-first-served line, one shared run per setting.

No Streamlit here. The story itself (SFT model -> GRPO -> pass@k) is story.run_story; this module only
runs it in worker processes (sim.runtime.procs) and shares the runs. `TinyLMRuns` is the whole state, one object
(the server holds one; nothing here is a module-level variable):

  * `runs.join(cfg, viewer)` returns the run for that StoryConfig (seed included), starting it if nobody
    has: 60 students pressing Start on the same settings watch one training, not a queue of 60. Runs are
    deterministic (float64, fixed seeds), so a shared run is exactly what each would have got.
  * A finished run is kept (at most MAX_FINISHED of them and FINISHED_BYTES in all, least recently used
    dropped first) and replays at once: joining it gives the whole history and the pass@k result.
  * At most `max_concurrent` runs train at once (one per core, torch on one thread each); the others wait
    in line, first come first served, and see their place. When a slot frees, the first run in line that
    somebody still watches starts; one that nobody watches any more (all its tabs closed) is dropped.
  * A visitor (a session, `viewer`) watches one run: joining another leaves the one it watched (cancelled if
    nobody else watches it), and a run it started waits in line until the one it left has stopped. So one tab
    never has more than one run queued or training, however fast it presses Start (the registry's rule, not
    the page's).
  * Each run trains in its own process (sim.runtime.procs.Worker: forked from a fork server that imported the story
    once; a memory cap), and a thread of the server relays its progress. Not a thread of the server: a
    Streamlit server is one process, and a training thread shares the GIL with every session's reruns.
    Measured with 60 headless students on one shared run: with a thread the run took ~100 s, not ~26 s.
  * Every session that watches a run polls `snapshot(viewer)`, which is its heartbeat. A run stops
    when no session has polled it for `heartbeat_s` seconds (all tabs closed), or at once when its last
    viewer presses Stop.

Pause and Stop when a run is shared: a run belongs to nobody, so no student can stop or freeze it for the
others. Stop means "leave": the session detaches, and the run is cancelled only when nobody watches it.
Pause works only for a sole viewer; when a second session joins a paused run it resumes, because a
shared run never waits on one student. (The alternatives, controls for whoever started the run or a
vote, would let the first student in a class pause everyone else's screen.)

A paused run holds no trainer: its slot goes to the next run in line (two paused tabs held a 2-core server's slots,
and a third visitor waited for as long as they stayed open: issue 43). Its process keeps the model (about 130 MB), so
it is stopped after PAUSE_LIMIT_S paused, or when it has been paused longest of more than MAX_PAUSED runs. Resume
takes a free slot or waits in line for one, first come first served (the limit does not count meanwhile).
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections import OrderedDict, deque

import torch

from sim.runtime.procs import Worker
from sim.tinylm.checkpoint import CheckpointError
from sim.tinylm.memory import MEMORY_CAP_BYTES, MiB
from sim.tinylm.story import StoryConfig, run_story
from sim.validate import env_number

# one training per core; a bad TINYLM_MAX_JOBS (x, 2.5, 0) is one line naming it, not a traceback or a stuck line
MAX_CONCURRENT = env_number("TINYLM_MAX_JOBS", os.cpu_count() or 1, 1, 64, integer=True)
PAUSE_LIMIT_S = env_number("TINYLM_PAUSE_LIMIT_S", 600, 10, 86_400)  # a paused run is stopped after this long
MAX_PAUSED = env_number("TINYLM_MAX_PAUSED", 2 * MAX_CONCURRENT, 1, 256, integer=True)  # paused runs kept at once
MAX_FINISHED = 64  # finished runs kept for replay
FINISHED_BYTES = 64 * MiB  # and their total size (history + result, measured as JSON)
HEARTBEAT_S = 30.0  # a run nobody has polled for this long is abandoned (all its tabs closed)
WORKER_MEMORY_MB = MEMORY_CAP_BYTES // MiB + 512  # a run's cap (memory.py refuses larger runs) + slack
LIVE = ("queued", "starting", "sft", "grpo", "eval")  # states of a run that has not ended
_serials = itertools.count(1)  # names for caches, never reused (unlike id()); not state anyone reads


def _work(cfg: StoryConfig, task) -> tuple:
    """In the worker process: run the story, emitting ("stage", name) and ("step", metrics, pass_at_1,
    groups); return ("done", result), ("stopped",) or ("error", message, is_checkpoint_error)."""
    torch.set_num_threads(1)
    pause = task.flag("pause")

    def on_step(trainer, metrics: dict) -> None:
        task.emit(("step", metrics, list(trainer.pass_at_1), trainer.latest_groups))
        while pause.is_set() and not task.stop.is_set():  # paused: wait between iterations
            task.stop.wait(0.05)

    try:
        result = run_story(cfg, on_stage=lambda stage: task.emit(("stage", stage)), on_step=on_step,
                           stop=task.stop)  # fmt: skip
        return ("stopped",) if result is None else ("done", result)
    except CheckpointError as e:
        return ("error", str(e), True)
    except ValueError as e:  # a run over the memory cap
        return ("error", str(e), False)
    except Exception as e:  # a UI must show a message, not a dead worker
        return ("error", f"TinyLM run failed: {type(e).__name__}: {e}", False)


class TrainingJob:
    """One story run, watched by one or more sessions; its state behind `lock`. Started by its TinyLMRuns."""

    def __init__(self, cfg: StoryConfig, runs: TinyLMRuns, *, heartbeat_s: float = HEARTBEAT_S,
                 starter: str | None = None):
        self.cfg, self.runs, self.heartbeat_s = cfg, runs, heartbeat_s
        self.starter = starter  # the session whose Start created it
        self.lock = threading.Lock()
        self._stop = threading.Event()  # nobody watches: the run is being cancelled
        self._paused = False
        self._paused_at: float | None = None  # time.monotonic() of the Pause, while paused (not while resuming)
        self._stopped_because: str | None = None  # "pause limit" or "paused runs" when a pause ended the run
        self.started = False  # given a slot once (a run in line may be new, or paused and waiting to resume)
        self._worker = Worker(memory_mb=WORKER_MEMORY_MB, quiet=False, name="the TinyLM run")
        self._viewers: dict[str, float] = {}  # session id -> last poll (time.monotonic)
        self._p = {"state": "queued", "iteration": 0, "history": [], "pass_at_1": [], "groups": [],
                   "result": None, "error": None, "checkpoint_error": False}  # fmt: skip
        self.nbytes = 0  # size of the finished run (set when done)
        self.serial = next(_serials)
        self.thread = threading.Thread(target=self._run, name="tinylm-job", daemon=True)

    # ---- called from the UI (any thread) -------------------------------------------------
    def start(self) -> TrainingJob:
        """Train now (the caller, TinyLMRuns, holds the slot)."""
        self._set(state="starting")
        self.thread.start()
        return self

    def attach(self, viewer: str) -> bool:
        """Add a watching session; False if the run is already being cancelled (start a new one then)."""
        with self.lock:
            if self._stop.is_set():
                return False
            self._viewers[viewer] = time.monotonic()
            shared = len(self._active()) > 1
        if shared:
            self.resume(viewer)  # a shared run never waits on one student
        return True

    def snapshot(self, viewer: str | None = None) -> dict:
        """A copy of the progress (lists copied), place in line, viewers. Also `viewer`'s heartbeat."""
        with self.lock:
            if viewer is not None and viewer in self._viewers:
                self._viewers[viewer] = time.monotonic()
            snap = {k: (list(v) if isinstance(v, list) else v) for k, v in self._p.items()}
            snap["viewers"] = len(self._active())
            snap["paused"] = self._paused
            snap["pause_left_s"] = (None if self._paused_at is None else
                                    max(0.0, self.runs.pause_limit_s - (time.monotonic() - self._paused_at)))
            snap["stopped_because"] = self._stopped_because
            snap["pause_limit_s"], snap["max_paused"] = self.runs.pause_limit_s, self.runs.max_paused
        snap["queue_position"] = self.runs.place(self)  # 1, 2, ... while queued, else 0
        snap["resuming"] = self._paused and snap["queue_position"] > 0  # Resume pressed, waiting for a slot
        snap["iterations"] = self.cfg.grpo.iterations
        return snap

    def watched(self) -> bool:
        """Somebody polled within heartbeat_s and the run is not being cancelled."""
        with self.lock:
            return bool(self._active()) and not self._stop.is_set()

    def can_pause(self, viewer: str) -> bool:
        """Only the sole viewer of a run in its GRPO stage may pause it (the stage that stops between iterations:
        SFT and the evaluation would train on in a slot already given to the next run)."""
        with self.lock:
            return self._p["state"] == "grpo" and set(self._active()) <= {viewer}

    def pause(self, viewer: str) -> bool:
        """Freeze the run between iterations and give its trainer slot to the next run in line."""
        if not self.can_pause(viewer):
            return False
        with self.lock:
            self._paused, self._paused_at = True, time.monotonic()
        self._worker.signal("pause", True)
        self.runs.released(self)
        return True

    def resume(self, viewer: str) -> None:
        """Go on training: at once if a slot is free, else when one frees (the run waits in line, still paused)."""
        with self.lock:
            if not self._paused or self._paused_at is None:
                return
            self._paused_at = None
        self.runs.resume(self)

    def _unpause(self) -> None:  # the registry gave it a slot again (under the registry's lock: the job's inside)
        with self.lock:
            self._paused, self._paused_at = False, None
        self._worker.signal("pause", False)

    def _stop_paused(self, why: str) -> None:  # a pause ends the run: "pause limit" or "paused runs" (the page says)
        with self.lock:
            if self._paused and not self._stop.is_set():
                self._stopped_because = why
                self._stop.set()

    def paused_for(self) -> float | None:  # seconds since the Pause, while paused and not waiting to resume
        with self.lock:
            return None if self._paused_at is None else time.monotonic() - self._paused_at

    @property
    def paused(self) -> bool:
        return self._paused

    def leave(self, viewer: str) -> None:
        """The session stops watching; the run is cancelled when that leaves nobody."""
        with self.lock:
            self._viewers.pop(viewer, None)
            if self._active():
                return
            self._stop.set()
        self.runs.dequeue(self)

    @property
    def running(self) -> bool:
        """Queued, starting or training: not yet done, stopped or failed."""
        return self.state in LIVE

    @property
    def state(self) -> str:
        with self.lock:
            return self._p["state"]

    # ---- the worker ------------------------------------------------------------------------
    def _active(self) -> dict[str, float]:
        """Viewers that polled within heartbeat_s (call with the lock held)."""
        now = time.monotonic()
        return {v: t for v, t in self._viewers.items() if now - t <= self.heartbeat_s}

    def _set(self, **kw) -> None:
        with self.lock:
            self._p.update(kw)

    def _abandoned(self) -> bool:
        """Checked by the worker's call every 0.1 s: nobody watches, or a pause went past the limit."""
        if (self.paused_for() or 0.0) > self.runs.pause_limit_s:
            self._stop_paused("pause limit")
        with self.lock:
            if not self._active():
                self._stop.set()
            return self._stop.is_set()

    def _receive(self, msg: tuple) -> None:
        """Apply one message from the worker."""
        kind = msg[0]
        if kind == "stage":
            self._set(state=msg[1])
        elif kind == "step":
            metrics, pass_at_1, groups = msg[1:]
            with self.lock:
                self._p["iteration"] = metrics["iteration"]
                self._p["history"].append(metrics)
                self._p["pass_at_1"], self._p["groups"] = pass_at_1, groups
        elif kind == "done":
            result = msg[1]
            with self.lock:
                self._p["pass_at_1"] = [tuple(p) for p in result["exact_pass_at_1"]]
                self.nbytes = len(json.dumps(self._p["history"])) + len(json.dumps(result))
            self._set(state="done", result=result)
        elif kind == "stopped":
            self._set(state="stopped")
        elif kind == "error":
            self._set(state="error", error=msg[1], checkpoint_error=msg[2])

    def _run(self) -> None:
        try:
            reply = self._worker.call(_work, (self.cfg,), task=True, on_message=self._receive,
                                      cancelled=self._abandoned)  # fmt: skip
            if reply.ok:
                self._receive(reply.value)
            elif reply.kind == "cancelled":
                self._set(state="stopped")
            elif reply.kind == "crashed":
                self._set(state="error", error="TinyLM run failed: the training process ended unexpectedly")
            else:
                self._set(state="error", error=f"TinyLM run failed: {reply.message}")
        except Exception as e:  # e.g. a malformed message: the page must show a message
            self._set(state="error", error=f"TinyLM run failed: {type(e).__name__}: {e}")
        finally:
            self._worker.close()
            if self.state in LIVE:
                self._set(state="stopped")
            self.runs.ended(self)


class TinyLMRuns:
    """The server's TinyLM runs by StoryConfig: join one, leave it, replay finished ones, a line for the
    slots. Thread-safe; one lock for the registry and the line (a job's own lock is never held around it)."""

    def __init__(self, *, max_concurrent: int = MAX_CONCURRENT, max_finished: int = MAX_FINISHED,
                 finished_bytes: int = FINISHED_BYTES, heartbeat_s: float = HEARTBEAT_S,
                 pause_limit_s: float = PAUSE_LIMIT_S, max_paused: int = MAX_PAUSED):  # fmt: skip
        self.max_concurrent, self.max_finished = max_concurrent, max_finished
        self.finished_bytes, self.heartbeat_s = finished_bytes, heartbeat_s
        self.pause_limit_s, self.max_paused = pause_limit_s, max_paused
        self._jobs: OrderedDict[StoryConfig, TrainingJob] = OrderedDict()  # least recently joined first
        self._line: deque[TrainingJob] = deque()  # waiting for a slot, first come first served
        self._training: set[TrainingJob] = set()
        self._watching: dict[str, TrainingJob] = {}  # viewer -> the live run it joined last
        self._lock = threading.RLock()

    def join(self, cfg: StoryConfig, viewer: str) -> TrainingJob:
        """The run for `cfg`, watched by `viewer`: the live or finished one if there is one, else a new one.
        The run `viewer` watched before (other settings) is left first: one run per visitor."""
        with self._lock:
            self._forget_dead()
            job = self._jobs.get(cfg)
            old = self._watching.get(viewer)
            if old is not None and old is not job:
                old.leave(viewer)  # cancelled if nobody else watches it; a new run of viewer's waits for that
            if job is None or not job.attach(viewer):
                job = TrainingJob(cfg, self, heartbeat_s=self.heartbeat_s, starter=viewer)
                job.attach(viewer)
                self._jobs[cfg] = job
                self._line.append(job)
                self._dispatch()
            self._watching[viewer] = job
            self._jobs.move_to_end(cfg)
            self._evict()
            return job

    def runs_of(self, viewer: str) -> list[TrainingJob]:
        """The runs `viewer` started that are queued or training, the one it left while it stops included."""
        with self._lock:
            return [j for j in (*self._line, *self._training) if j.starter == viewer and j.running]

    def find(self, cfg: StoryConfig) -> TrainingJob | None:
        with self._lock:
            return self._jobs.get(cfg)

    def watched_by(self, viewer: str) -> TrainingJob | None:
        """The run `viewer` joined last (live or not), or None."""
        with self._lock:
            return self._watching.get(viewer)

    def waiting(self) -> int:
        """How many runs wait in line for a slot."""
        with self._lock:
            return len(self._line)

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)

    def place(self, job: TrainingJob) -> int:
        """1 for the first run in line, 2 for the next, ...; 0 when not waiting."""
        with self._lock:
            return self._line.index(job) + 1 if job in self._line else 0

    def dequeue(self, job: TrainingJob) -> None:
        """A waiting run nobody watches any more leaves the line at once."""
        with self._lock:
            if job in self._line:
                self._line.remove(job)
                job._set(state="stopped")

    def ended(self, job: TrainingJob) -> None:
        """A run's worker is gone: its slot goes to the next in line."""
        with self._lock:
            self._training.discard(job)
            if job in self._line:
                self._line.remove(job)
            self._dispatch()

    def released(self, job: TrainingJob) -> None:
        """A run was paused: its slot goes to the next in line (a run waiting to resume leaves the line); past
        max_paused paused runs, the one paused longest is stopped."""
        with self._lock:
            self._training.discard(job)
            if job in self._line:
                self._line.remove(job)
            self._dispatch()
            held = sorted((j for j in self._jobs.values() if j.running and j.paused_for() is not None),
                          key=lambda j: -(j.paused_for() or 0.0))  # paused longest first
        for j in held[:max(0, len(held) - self.max_paused)]:
            j._stop_paused("paused runs")

    def resume(self, job: TrainingJob) -> None:
        """A paused run goes on: in a free slot now, else at the end of the line."""
        with self._lock:
            if not job.running or job in self._training or job in self._line:
                return
            self._line.append(job)
            self._dispatch()

    def _dispatch(self) -> None:
        """Fill the free slots from the head of the line, skipping runs nobody watches (their tabs closed); a run
        whose visitor's previous run is still stopping keeps its place until that one has (ended() calls again)."""
        self._training = {job for job in self._training if job.running}
        stopping = {job.starter for job in self._training if not job.watched()} - {None}
        for job in list(self._line):
            if len(self._training) >= self.max_concurrent:
                break
            if not job.watched():
                self._line.remove(job)
                job._set(state="stopped")
            elif job.started:  # paused, waiting to resume
                self._line.remove(job)
                self._training.add(job)
                job._unpause()
            elif job.starter not in stopping:
                self._line.remove(job)
                self._training.add(job)
                job.started = True
                job.start()

    def _forget_dead(self) -> None:
        """Stopped or failed runs are not kept: the next Start on those settings tries again."""
        for cfg, job in list(self._jobs.items()):
            if job.state in ("stopped", "error"):
                del self._jobs[cfg]
        self._watching = {v: job for v, job in self._watching.items() if job.running}

    def _evict(self) -> None:
        done = [(cfg, job) for cfg, job in self._jobs.items() if job.state == "done"]  # oldest first
        total = sum(job.nbytes for _, job in done)
        while done and (len(done) > self.max_finished or total > self.finished_bytes):
            cfg, job = done.pop(0)
            total -= job.nbytes
            del self._jobs[cfg]
