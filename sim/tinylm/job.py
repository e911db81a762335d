"""TinyLM runs for a UI: a worker process per run, a queue, and one shared run per setting.

No Streamlit here. The story itself (SFT model -> GRPO -> pass@k) is story.run_story; this module only
runs it in worker processes and shares the runs:

  * `REGISTRY.join(cfg, viewer)` returns the run for that StoryConfig (seed included), starting it if
    nobody has: 60 students pressing Start on the same settings watch one training, not a queue of 60.
    Runs are deterministic (float64, fixed seeds), so a shared run is exactly what each would have got.
  * A finished run is kept (at most MAX_FINISHED of them and FINISHED_BYTES in all, least recently used
    dropped first) and replays at once: joining it gives the whole history and the pass@k result.
  * At most MAX_CONCURRENT runs train at once (one per core, torch on one thread each); the others wait
    in line and see their place.
  * Each run trains in its own process (multiprocessing "forkserver", sim.tinylm.story preloaded), and a
    thread of the server reads its progress from a pipe. Not a thread of the server: a Streamlit server is
    one process, and a training thread shares the GIL with every session's reruns. Measured with 60
    headless students on one shared run: with a thread the run took ~100 s instead of ~26 s alone.
  * Every session that watches a run polls `snapshot(viewer)`, which is its heartbeat. A run stops
    when no session has polled it for `heartbeat_s` seconds (all tabs closed), or at once when its last
    viewer presses Stop.

Pause and Stop when a run is shared: a run belongs to nobody, so no student can stop or freeze it for the
others. Stop means "leave": the session detaches, and the run is cancelled only when nobody watches it.
Pause works only for a sole viewer; when a second session joins a paused run it resumes, because a
shared run never waits on one student. (The alternatives, controls for whoever started the run or a
vote, would let the first student in a class pause everyone else's screen.)
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import threading
import time
from collections import OrderedDict

import torch

from sim.tinylm.checkpoint import CheckpointError
from sim.tinylm.memory import MiB
from sim.tinylm.story import StoryConfig, run_story

MAX_CONCURRENT = int(os.environ.get("TINYLM_MAX_JOBS", os.cpu_count() or 1))  # one training per core
MAX_FINISHED = 64  # finished runs kept for replay
FINISHED_BYTES = 64 * MiB  # and their total size (history + result, measured as JSON)
_slots = threading.BoundedSemaphore(MAX_CONCURRENT)
_queue: list[TrainingJob] = []  # jobs waiting for a slot, oldest first
_queue_lock = threading.Lock()
_serials = itertools.count(1)
_CTX = multiprocessing.get_context("forkserver")  # a clean fork (no server threads), torch imported once
# The fork server imports torch and the story once; each run's process is then a fork of it (~0.1 s).
# (A server started as `streamlit run` also has each worker import streamlit's CLI script, multiprocessing's
# rule for a __main__ without a module name: ~0.6 s more per run. Starting the fork server early from a page
# run made a 60-student class wait ~50 s for its first chart, for reasons not understood: not done.)
_CTX.set_forkserver_preload(["sim.tinylm.story"])
RERUNS_PER_S = 10.0  # what one server spends on polls of a shared run, whatever the number of viewers
HEARTBEAT_S = 30.0  # a run nobody has polled for this long is abandoned (all its tabs closed)


def poll_interval(viewers: int) -> float:
    """Seconds between a page's polls of a run watched by `viewers` sessions: 0.5 s for a few, then slower so
    that all of them together poll about RERUNS_PER_S times a second (60 viewers: every 6 s), but at least
    every HEARTBEAT_S / 3 so that a watching session is never taken for a closed tab.

    Why: a Streamlit server is one process, and every poll (a fragment rerun drawing eight charts, ~25 ms)
    holds the same GIL as the training thread. Measured with 60 headless students polling every 0.5 s, the
    server spent all its time redrawing and the shared run did not finish in 400 s.
    """
    return min(max(0.5, viewers / RERUNS_PER_S), HEARTBEAT_S / 3)  # polls stay well inside the heartbeat


def _work(cfg: StoryConfig, conn, stop, pause) -> None:
    """The worker process: run the story, sending ("stage", name), ("step", metrics, pass_at_1, groups)
    and finally ("done", result), ("stopped",) or ("error", message, is_checkpoint_error)."""
    torch.set_num_threads(1)

    def on_step(trainer, metrics: dict) -> None:
        conn.send(("step", metrics, list(trainer.pass_at_1), trainer.latest_groups))
        while pause.is_set() and not stop.is_set():  # paused: wait between iterations
            stop.wait(0.05)

    try:
        result = run_story(cfg, on_stage=lambda stage: conn.send(("stage", stage)), on_step=on_step, stop=stop)
        conn.send(("stopped",) if result is None else ("done", result))
    except CheckpointError as e:
        conn.send(("error", str(e), True))
    except ValueError as e:  # a run over the memory cap
        conn.send(("error", str(e), False))
    except Exception as e:  # a UI must show a message, not a dead worker
        conn.send(("error", f"TinyLM run failed: {type(e).__name__}: {e}", False))
    finally:
        conn.close()


class TrainingJob:
    """One story run in a daemon thread, watched by one or more sessions; shared state behind `lock`."""

    def __init__(self, cfg: StoryConfig, *, heartbeat_s: float = HEARTBEAT_S):
        self.cfg, self.heartbeat_s = cfg, heartbeat_s
        self.lock = threading.Lock()
        self.stop_event, self.pause_event = _CTX.Event(), _CTX.Event()  # seen by the worker process too
        self._viewers: dict[str, float] = {}  # session id -> last poll (time.monotonic)
        self._p = {"state": "queued", "iteration": 0, "history": [], "pass_at_1": [], "groups": [],
                   "result": None, "error": None, "checkpoint_error": False}  # fmt: skip
        self.nbytes = 0  # size of the finished run (set when done)
        self.serial = next(_serials)  # a name for caches: never reused, unlike id()
        self.thread = threading.Thread(target=self._run, name="tinylm-job", daemon=True)

    # ---- called from the UI (any thread) -------------------------------------------------
    def start(self) -> TrainingJob:
        with _queue_lock:
            _queue.append(self)
        self.thread.start()
        return self

    def attach(self, viewer: str) -> bool:
        """Add a watching session; False if the run is already being cancelled (start a new one then)."""
        with self.lock:
            if self.stop_event.is_set():
                return False
            self._viewers[viewer] = time.monotonic()
            if len(self._active()) > 1:
                self.pause_event.clear()  # a shared run never waits on one student
            return True

    def snapshot(self, viewer: str | None = None) -> dict:
        """A copy of the progress (lists copied), place in line, viewers. Also `viewer`'s heartbeat."""
        with self.lock:
            if viewer is not None and viewer in self._viewers:
                self._viewers[viewer] = time.monotonic()
            snap = {k: (list(v) if isinstance(v, list) else v) for k, v in self._p.items()}
            snap["viewers"] = len(self._active())
        with _queue_lock:
            snap["queue_position"] = _queue.index(self) + 1 if self in _queue else 0
        snap["paused"] = self.pause_event.is_set()
        snap["iterations"] = self.cfg.grpo.iterations
        return snap

    def can_pause(self, viewer: str) -> bool:
        """Only a run's sole viewer may pause it."""
        with self.lock:
            return self.running and set(self._active()) <= {viewer}

    def pause(self, viewer: str) -> bool:
        if not self.can_pause(viewer):
            return False
        self.pause_event.set()
        return True

    def resume(self, viewer: str) -> None:
        self.pause_event.clear()

    def leave(self, viewer: str) -> None:
        """The session stops watching; the run is cancelled when that leaves nobody."""
        with self.lock:
            self._viewers.pop(viewer, None)
            if not self._active():
                self.stop_event.set()

    def cancel(self) -> None:
        self.stop_event.set()

    @property
    def running(self) -> bool:
        return self.thread.is_alive()

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
        with self.lock:
            if not self._active():
                self.stop_event.set()
        return self.stop_event.is_set()

    def _receive(self, msg: tuple) -> bool:
        """Apply one message from the worker; True when it was the last."""
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
        return kind in ("done", "stopped", "error")

    def _run(self) -> None:
        got = False
        try:
            while not (got := _slots.acquire(timeout=0.1)):
                if self._abandoned():
                    self._set(state="stopped")
                    return
            with _queue_lock:
                _queue.remove(self)
            self._supervise()
        except Exception as e:  # e.g. the worker could not start
            self._set(state="error", error=f"TinyLM run failed: {type(e).__name__}: {e}")
        finally:
            with _queue_lock:
                if self in _queue:
                    _queue.remove(self)
            if got:
                _slots.release()

    def _supervise(self) -> None:
        """Start the worker process and relay its messages; end it if nobody watches any more."""
        receive, send = _CTX.Pipe(duplex=False)
        proc = _CTX.Process(target=_work, args=(self.cfg, send, self.stop_event, self.pause_event), daemon=True)
        proc.start()
        send.close()
        stopped_at = None
        try:
            while True:
                if receive.poll(0.1):
                    try:
                        if self._receive(receive.recv()):
                            return
                    except EOFError:  # the worker died without a word (killed, out of memory)
                        self._set(state="error", error="TinyLM run failed: the training process ended unexpectedly")
                        return
                if self._abandoned():
                    stopped_at = stopped_at or time.monotonic()
                    if time.monotonic() - stopped_at > 2.0:  # e.g. busy evaluating: no need to wait for it
                        self._set(state="stopped")
                        return
        finally:
            receive.close()
            proc.join(timeout=1.0)
            if proc.is_alive():
                proc.kill()
                proc.join()


class JobRegistry:
    """Runs by StoryConfig: join one, leave it, replay finished ones. Thread-safe."""

    def __init__(self, *, max_finished: int = MAX_FINISHED, finished_bytes: int = FINISHED_BYTES,
                 heartbeat_s: float = HEARTBEAT_S):  # fmt: skip
        self.max_finished, self.finished_bytes, self.heartbeat_s = max_finished, finished_bytes, heartbeat_s
        self._jobs: OrderedDict[StoryConfig, TrainingJob] = OrderedDict()  # least recently joined first
        self._lock = threading.Lock()

    def join(self, cfg: StoryConfig, viewer: str) -> TrainingJob:
        """The run for `cfg`, watched by `viewer`: the live or finished one if there is one, else a new one."""
        with self._lock:
            self._forget_dead()
            job = self._jobs.get(cfg)
            if job is None or not job.attach(viewer):
                job = TrainingJob(cfg, heartbeat_s=self.heartbeat_s)
                job.attach(viewer)
                self._jobs[cfg] = job
                job.start()
            self._jobs.move_to_end(cfg)
            self._evict()
            return job

    def find(self, cfg: StoryConfig) -> TrainingJob | None:
        with self._lock:
            return self._jobs.get(cfg)

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)

    def _forget_dead(self) -> None:
        """Stopped or failed runs are not kept: the next Start on those settings tries again."""
        for cfg, job in list(self._jobs.items()):
            if not job.running and job.state in ("stopped", "error"):
                del self._jobs[cfg]

    def _evict(self) -> None:
        done = [(cfg, job) for cfg, job in self._jobs.items() if job.state == "done"]  # oldest first
        total = sum(job.nbytes for _, job in done)
        while done and (len(done) > self.max_finished or total > self.finished_bytes):
            cfg, job = done.pop(0)
            total -= job.nbytes
            del self._jobs[cfg]


REGISTRY = JobRegistry()  # the process-wide registry (one Streamlit server = one process)
