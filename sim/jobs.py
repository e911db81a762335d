"""The pages' computations as jobs a worker process can run (sim/procs.py), and their results rebuilt.

A worker's reply is decoded by a restricted unpickler (arrays and plain data only), so a job returns the
fields of its result without the config, and the caller, who sent the config, rebuilds the object:

    fields = toy_run(cfg)                    # in the worker: {"p": array, ..., "metrics": {...}}
    run = rebuild(toy_run, cfg, fields)      # in the server: ToyHistory(config=cfg, **fields)

Each job is one engine call; the server's queue (ui/work.py) decides where and when it runs, and computes
the same job in its own thread when it has no workers (AppTest), so both paths rebuild through here.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sim.sharpen import SharpenConfig, SharpenHistory, train
from sim.toy import ToyConfig, ToyHistory, expected_run, run_toy
from sim.views.passk import toy_p_before_after
from sim.views.std_scaling import std_comparison


def _fields(result) -> dict:
    """A result dataclass's fields except its config (the caller has it)."""
    return {f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.name != "config"}


def toy_run(cfg: ToyConfig) -> dict:
    """run_toy(cfg): S seeds of the 24-prompt toy (Training dynamics)."""
    return _fields(run_toy(cfg))


def expected_key(cfg: ToyConfig) -> ToyConfig:
    """The config that names cfg's expected run: it draws nothing, so the seed and the band do not enter
    (a class trying 200 seeds shares one expected run)."""
    return dataclasses.replace(cfg, seed=0, n_seeds=1)


def toy_expected(cfg: ToyConfig, table: tuple | None = None) -> dict:
    """expected_run(cfg) for cfg = expected_key(...), optionally with an advantage table
    ((A_correct...), (A_wrong...)) for k = 0..G."""
    adv = None if table is None else (np.asarray(table[0]), np.asarray(table[1]))
    return _fields(expected_run(cfg, advantage_table=adv))


def std_runs(with_std: ToyConfig) -> dict:
    """Std scaling's three runs (sim/views/std_scaling.py): already plain data."""
    return std_comparison(with_std)


def before_after(T: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """p_j of the toy at iteration 0 and T (pass@k's toy before/after)."""
    return toy_p_before_after(T)


def sharpen_run(cfg: SharpenConfig) -> dict:
    """The sharpening toy's run (pass@k)."""
    return _fields(train(cfg))


_REBUILD = {toy_run: ToyHistory, toy_expected: ToyHistory, sharpen_run: SharpenHistory}


def rebuild(job, args: tuple, value):
    """The result object of job(*args) from the plain value it returned (the config is args[0])."""
    cls = _REBUILD.get(job)
    return value if cls is None else cls(config=args[0], **value)


def nbytes(value) -> int:
    """Bytes of the arrays in a job's value (the server's cache is bounded by them)."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, dict):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(nbytes(v) for v in value)
    return 0


def lesson_zip(view_names: str | None = None, task=None) -> bytes:
    """The default lesson (sim/lesson) as the bytes of grpo-lesson.zip, built in a temporary folder;
    view_names: only these views (comma-separated, as the CLI's --views). With a sim.procs Task,
    task.emit((settings done, of all)) after each setting."""
    import io
    import tempfile
    import zipfile
    from pathlib import Path

    from sim.lesson.build import build
    from sim.lesson.cli import build_parser, views_for
    from sim.lesson.views import default_views

    views = default_views() if view_names is None else views_for(build_parser().parse_args(
        ["build", "unused", "--views", view_names]))
    sizes = [len(v.entries) for v in views]
    before = {v.name: sum(sizes[:i]) for i, v in enumerate(views)}

    def say(view: str, done: int, total: int) -> None:
        if task is not None:
            task.emit((before.get(view, 0) + done, sum(sizes)))

    buf = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="grpo-lesson-") as tmp:
        out = Path(tmp) / "grpo-lesson"
        build(out, views, say=say)
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
            for f in sorted(out.rglob("*")):
                if f.is_file():
                    z.write(f, f"grpo-lesson/{f.relative_to(out)}")
    return buf.getvalue()
