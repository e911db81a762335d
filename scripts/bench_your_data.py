"""Benchmark of reading a visitor's files (sim/yourdata: datafile.py, runlog.py, plan.py, diagnose.py, reader.py).

    OMP_NUM_THREADS=1 python scripts/bench_your_data.py            # 9 repeats of each (a few minutes)
    OMP_NUM_THREADS=1 python scripts/bench_your_data.py --quick    # 3 repeats
    OMP_NUM_THREADS=1 python scripts/bench_your_data.py --check    # each figure beside its target; exit 1 beyond 2x
    OMP_NUM_THREADS=1 python scripts/bench_your_data.py --write-docs  # also rewrite its docs/benchmarks.md section
    python scripts/bench_your_data.py --tiny                       # small files, 1 repeat (the test's)
    OMP_NUM_THREADS=1 python scripts/bench_your_data.py --class    # the app: ten 20 MB uploads beside a student
    OMP_NUM_THREADS=1 python scripts/bench_your_data.py --row1     # issue 43 row 1's log: python -m sim diagnose
    OMP_NUM_THREADS=1 python scripts/bench_your_data.py --class --row1  # ... ten of them uploaded to Your run
    OMP_NUM_THREADS=1 python scripts/bench_your_data.py --fairness # issue 43 row 3: a small file beside three large

--row1 builds issue 43 row 1's hostile log (a trainer_state.json where step i logs its own reward function,
rewards/f<i>/mean and /std) at 1 MB and at the size cap, and runs `python -m sim diagnose FILE` (and `--json`) on
each under /usr/bin/time: wall seconds and the peak memory (maximum RSS), median of 3; with --baseline DIR the
same at 1 MB, once, from another checkout (main's code, `git archive`d into DIR) for the before in the same run.

--fairness (issue 43 row 3): three visitors' 20 MB pools read at once through the upload path, and a fourth
visitor's 21 KB pool (the example) sent just after: how long the small one takes, with the file workers as they are
(reader.FilePools) and with one worker, first come first served (as before), in the same run; median of 3.

Files, built in memory as the tools write them:
  * a 10,000-step trainer_state.json (json.dumps(indent=2, sort_keys=True), the keys a TRL 1.16.0 GRPOTrainer run
    logs per step, taken from assets/data/examples/tinylm_trl_trainer_state.json), the same log as a W&B-style CSV
    (`train/` prefixes), and a 10,000-step verl file-logger JSONL (tests/fixtures/runlogs.py's names);
  * a 100,000-prompt CSV, `prompt,correct,samples`, 64 samples per prompt, and a 20 MB one at the row cap
    (999,990 prompts, ids `prompt-000001`, 19.85 MB);
  * hostile files: a CSV header of 10^6 columns, 200,000 nested JSON brackets, and issue 37's 120 KB log whose one
    bare NaN follows 40,000 "NaN"s inside a string (read since issue 42: the NaN is that step's missing value).
Prints medians over repeats of wall and process CPU seconds (CPU time is the steadier figure on a shared
machine) for parsing (bytes -> arrays) and for the analysis after it (diagnose, plan), the same files through the
upload path (sim/yourdata/reader.py's worker process: send, parse, reply) and through the command line
(`python -m sim diagnose|plan FILE`, a process: its imports included), and the load average.
Targets (--check): parsing a 10,000-step log under 1 s, a 100,000-prompt CSV under 2 s, each refusal under 0.5 s,
the 20 MB pool through the upload path under 10 s.

--class starts `streamlit run app.py` (XSRF off, for this client), then an uploader tab sends the 20 MB pool to Your
prompts ten times (Streamlit's upload protocol, scripts/st_client.py's Tab plus the file messages) while a student
tab opens Wasted groups once a second (its settings compute in the browser: opening a page is what a student asks
of the server): it reports the server's memory (its process, and the file worker's
PSS) before, after each upload, once the uploader has left, and after Streamlit's session TTL (120 s; its store
drops an expired session when next touched, so a visitor then opens a page), and the student's page loads (median,
max) while the uploads run against the same student alone. Bounded: ten uploads, each at most 120 s, the whole at most
15 min.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from scripts import benchdoc  # noqa: E402
from scripts.benchdoc import Report, add_arguments  # noqa: E402
from sim.yourdata.datafile import MAX_BYTES, DataError  # noqa: E402
from sim.yourdata.diagnose import diagnose  # noqa: E402
from sim.yourdata.plan import load_pool, plan  # noqa: E402
from sim.yourdata.reader import file_pool, read_upload  # noqa: E402
from sim.yourdata.runlog import load_run_log  # noqa: E402
from tests.fixtures.runlogs import verl_lines  # noqa: E402

EXAMPLE = ROOT / "assets" / "data" / "examples" / "tinylm_trl_trainer_state.json"
LABELS = {"log_10k_json_parse": "parse a 10,000-step trainer_state.json", "log_10k_csv_parse": "parse the same log as "
          "a W&B CSV", "log_10k_diagnose": "diagnose it (every rule)", "pool_100k_parse": "parse a 100,000-prompt CSV",
          "pool_100k_plan": "plan it (G = 2..64, pass@k, the toy's quantiles)",
          "refuse_1e6_columns": "refuse a 10^6-column CSV", "refuse_deep_json": "refuse 200,000 nested brackets",
          "log_10k_verl_parse": "parse a 10,000-step verl JSONL", "read_nan_120k": "read issue 37's 120 KB NaN log",
          "pool_20mb_parse": "parse a 20 MB pool CSV (999,990 prompts)",
          "pool_20mb_upload": "the same through the upload path (a worker process)",
          "read_nan_120k_upload": "the 120 KB NaN log through the upload path",
          "cli_plan_20mb": "python -m sim plan on the 20 MB pool (a process)",
          "cli_diagnose_nan_120k": "python -m sim diagnose on the 120 KB NaN log (a process)"}
TARGETS = {"log_10k_json_parse": 1.0, "log_10k_csv_parse": 1.0, "pool_100k_parse": 2.0, "refuse_1e6_columns": 0.5,
           "refuse_deep_json": 0.5, "log_10k_verl_parse": 1.0, "read_nan_120k": 0.5, "pool_20mb_upload": 10.0,
           "read_nan_120k_upload": 0.5}


def trainer_state(steps: int) -> bytes:
    """A trainer_state.json of `steps` steps with the example run's keys, as transformers writes it."""
    keys = sorted(k for k in json.loads(EXAMPLE.read_text())["log_history"][0] if k != "step")
    rng = np.random.default_rng(0)
    values = rng.random((steps, len(keys)))  # (T, K)
    history = [{"step": t + 1, **{k: float(v) for k, v in zip(keys, row, strict=True)}}
               for t, row in enumerate(values)]
    history.append({"step": steps, "train_runtime": 1.0, "train_loss": 0.0})
    return (json.dumps({"global_step": steps, "log_history": history}, indent=2, sort_keys=True) + "\n").encode()


def log_csv(state: bytes) -> bytes:
    rows = [r for r in json.loads(state)["log_history"] if "reward" in r]
    keys = [k for k in rows[0] if k != "step"]
    lines = ["train/global_step," + ",".join(f"train/{k}" for k in keys)]
    lines += [f"{r['step']}," + ",".join(repr(r[k]) for k in keys) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def nan_log(kb: int = 120) -> bytes:
    """Issue 37 row 1: "NaN" repeated inside a string, then one bare NaN (now that step's missing value, issue 42:
    the log is read, not refused)."""
    return ('{"log_history":[{"step":1,"note":"' + "NaN" * (kb * 1024 // 3) + '","loss":NaN,"reward":0.5}]}').encode()


def pool_20mb(prompts: int = 999_990) -> bytes:
    """A pool CSV near both caps: 999,990 rows (the cap is 1,000,000) of about 20 bytes."""
    c = np.random.default_rng(3).integers(0, 65, size=prompts)
    data = ("prompt,correct,samples\n" + "".join(f"prompt-{i:06d},{k},64\n" for i, k in enumerate(c))).encode()
    assert len(data) <= MAX_BYTES, len(data)  # 19.85 MB at 999,990 prompts: under the cap, as an upload must be
    return data


def pool_csv(prompts: int) -> bytes:
    c = np.random.default_rng(1).binomial(64, np.random.default_rng(2).beta(0.6, 0.6, size=prompts))
    return ("prompt,correct,samples\n" + "".join(f"{i % 97}+{i % 89}=,{k},64\n" for i, k in enumerate(c))).encode()


def row1_log(nbytes: int) -> bytes:
    """Issue 43 row 1: a trainer_state.json where each step logs its own reward function (rewards/f<i>/mean and
    /std at step i), grown to about nbytes."""
    parts, size, i = [], 40, 0
    while size < nbytes - 200:
        i += 1
        entry = (f'{{"step": {i}, "reward": 0.5, "reward_std": 0.5, "rewards/f{i}/mean": 0.5, '
                 f'"rewards/f{i}/std": 0.5, "loss": 0.0}}')
        parts.append(entry)
        size += len(entry) + 2
    return (f'{{"global_step": {i}, "log_history": [' + ", ".join(parts) + "]}\n").encode()


def run_row1(repeats: int, baseline: str | None) -> dict:
    """`python -m sim diagnose` (and --json) on the row-1 log at 1 MB and at the cap, under /usr/bin/time."""
    import os
    import re
    import subprocess
    import tempfile

    out = {}
    with tempfile.TemporaryDirectory() as d:
        for label, nbytes in (("1mb", 1_000_000), ("cap", MAX_BYTES)):
            path = Path(d) / f"row1_{label}.json"
            path.write_bytes(row1_log(nbytes))
            roots = [("now", ROOT)] + ([("baseline", Path(baseline))] if baseline and label == "1mb" else [])
            for who, root in roots:
                for flag in ([], ["--json"]):
                    walls, peaks, rc, printed = [], [], None, 0
                    for _ in range(repeats if who == "now" else 1):  # the baseline: minutes a run, once
                        env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
                        t = time.perf_counter()
                        res = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "sim", "diagnose",
                                              str(path), *flag], capture_output=True, env=env, cwd=root,
                                             timeout=900)
                        walls.append(time.perf_counter() - t)
                        peak = re.search(rb"Maximum resident set size \(kbytes\): (\d+)", res.stderr)
                        peaks.append(int(peak.group(1)) / 1024 if peak else float("nan"))
                        rc, printed = res.returncode, len(res.stdout)
                    out[f"{who}_{label}{'_json' if flag else ''}"] = {
                        "bytes": path.stat().st_size, "wall_s": round(statistics.median(walls), 2),
                        "peak_mb": round(statistics.median(peaks), 1), "exit": rc, "printed_bytes": printed,
                        "said": res.stderr.decode(errors="replace").strip().splitlines()[0][:160]
                        if rc else ""}
    return out


def run_fairness(repeats: int, big: bytes) -> dict:
    """Issue 43 row 3: a small upload sent while three large ones wait, with FilePools and with one worker."""
    import threading

    from sim.runtime.procs import Pool
    from sim.yourdata.reader import FilePools

    small = (ROOT / "assets" / "data" / "examples" / "tinylm_prompts.csv").read_bytes()
    out = {"large_bytes": len(big), "small_bytes": len(small)}
    for label, make in (("two_workers_fair", FilePools), ("one_worker_fifo", lambda: Pool(1, name="reading"))):
        pools = make()
        try:
            read_upload(pools, "pool", small, "warm.csv")  # the workers started
            if hasattr(pools, "big"):
                read_upload(pools.big, "pool", small, "warm.csv")
            small_s, large_s = [], []
            for _ in range(repeats):
                started = time.perf_counter()
                threads = [threading.Thread(target=read_upload, args=(pools, "pool", big, f"big{i}.csv"),
                                            kwargs={"who": f"visitor{i}"}) for i in range(3)]
                for t in threads:
                    t.start()
                time.sleep(0.2)  # the three are in line (one reading) when the fourth visitor sends theirs
                t0 = time.perf_counter()
                read_upload(pools, "pool", small, "example.csv", who="visitor3")
                small_s.append(time.perf_counter() - t0)
                for t in threads:
                    t.join()
                large_s.append(time.perf_counter() - started)
            out[label] = {"small_s": round(statistics.median(small_s), 2),
                          "three_large_s": round(statistics.median(large_s), 2)}
        finally:
            pools.close()
    return out


def measure(fn, repeats: int) -> dict:
    wall, cpu, _ = benchdoc.measure(fn, repeats)
    return {"wall_s": round(wall, 4), "cpu_s": round(cpu, 4)}


def refused(data: bytes, name: str):
    def run():
        try:
            load_run_log(data, name)
        except DataError:
            return
        raise AssertionError(f"{name} was not refused")

    return run


def cli(args: list[str], repeats: int) -> dict:
    """`python -m sim ARGS` as a process, its wall time (imports included), median over repeats."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    walls = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sim", *args], capture_output=True, env=env, cwd=ROOT, timeout=300)
        walls.append(time.perf_counter() - t)
    return {"wall_s": round(statistics.median(walls), 4), "cpu_s": None}


def upload_path(pool, kind: str, data: bytes, name: str):
    def run():
        try:
            read_upload(pool, kind, data, name)
        except DataError:
            pass

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 9")
    parser.add_argument("--tiny", action="store_true", help="100 steps, 1,000 prompts, 1 repeat (checks that the "
                        "script runs; its figures mean little)")
    parser.add_argument("--class", dest="klass", action="store_true", help="the app: ten 20 MB uploads while a "
                        "student opens pages (with --tiny: two uploads of a small pool)")
    parser.add_argument("--row1", action="store_true", help="issue 43 row 1's log (each step its own reward "
                        "function): diagnose at 1 MB and at the cap; with --class, ten uploads of it to Your run")
    parser.add_argument("--fairness", action="store_true", help="issue 43 row 3: a 21 KB upload beside three 20 MB "
                        "ones, with the file workers as they are and with one worker (as before)")
    parser.add_argument("--baseline", metavar="DIR", help="with --row1: another checkout's code (e.g. main's, "
                        "git archive'd) measured at 1 MB beside this one")
    add_arguments(parser)
    args = parser.parse_args(argv)
    if args.klass and args.row1:
        print(json.dumps(run_class(uploads=2 if args.tiny else 10, data=row1_log(1_000_000), page="your_run",
                                   key="run_upload", name="row1_{i}.json", refused=True)))
        return 0
    if args.row1:
        print(json.dumps(run_row1(1 if args.tiny else 3, args.baseline)))
        return 0
    if args.fairness:
        print(json.dumps(run_fairness(1 if args.tiny else 3, pool_20mb(20_000 if args.tiny else 999_990))))
        return 0
    if args.klass:
        print(json.dumps(run_class(uploads=2 if args.tiny else 10, data=pool_20mb(20_000 if args.tiny else 999_990))))
        return 0
    repeats = 1 if args.tiny else 3 if args.quick else 9
    state = trainer_state(100 if args.tiny else 10_000)
    csv_log, pool = log_csv(state), pool_csv(1000 if args.tiny else 100_000)
    wide = (",".join(f"c{i}" for i in range(10**6)) + "\n").encode()
    deep = b"[" * 200_000 + b"]" * 200_000
    verl = verl_lines(steps=100 if args.tiny else 10_000).encode()
    big_pool = pool_20mb(20_000 if args.tiny else 999_990)
    nan = nan_log(3 if args.tiny else 120)
    log = load_run_log(state, "trainer_state.json")
    parsed_pool = load_pool(pool, "pool.csv")
    print(f"verl JSONL {len(verl) / 1e6:.1f} MB, 20 MB pool {len(big_pool):,} bytes, NaN log {len(nan):,} bytes")
    print(f"files: trainer_state.json {len(state) / 2**20:.1f} MB ({len(log.steps):,} steps x {len(log.metrics)} "
          f"metrics), W&B CSV {len(csv_log) / 2**20:.1f} MB, pool CSV {len(pool) / 2**20:.1f} MB "
          f"({parsed_pool.rate.size:,} prompts), {len(wide) / 2**20:.1f} MB header, {len(deep) / 2**20:.1f} MB of "
          "brackets")
    figures = {
        "log_10k_json_parse": measure(lambda: load_run_log(state, "trainer_state.json"), repeats),
        "log_10k_csv_parse": measure(lambda: load_run_log(csv_log, "wandb.csv"), repeats),
        "log_10k_diagnose": measure(lambda: diagnose(log), repeats),
        "pool_100k_parse": measure(lambda: load_pool(pool, "pool.csv"), repeats),
        "pool_100k_plan": measure(lambda: plan(parsed_pool), repeats),
        "refuse_1e6_columns": measure(refused(wide, "wide.csv"), repeats),
        "refuse_deep_json": measure(refused(deep, "deep.json"), repeats),
        "log_10k_verl_parse": measure(lambda: load_run_log(verl, "metrics.jsonl"), repeats),
        "read_nan_120k": measure(lambda: load_run_log(nan, "nan.json"), repeats),
        "pool_20mb_parse": measure(lambda: load_pool(big_pool, "pool20.csv"), max(1, repeats // 3)),
    }
    workers = file_pool()
    try:
        figures["pool_20mb_upload"] = measure(upload_path(workers, "pool", big_pool, "pool20.csv"),
                                              max(1, repeats // 3))
        figures["read_nan_120k_upload"] = measure(upload_path(workers, "run", nan, "nan.json"), repeats)
    finally:
        workers.close()
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "pool20.csv").write_bytes(big_pool)
        (Path(d) / "nan.json").write_bytes(nan)
        figures["cli_plan_20mb"] = cli(["plan", str(Path(d) / "pool20.csv")], max(1, repeats // 3))
        figures["cli_diagnose_nan_120k"] = cli(["diagnose", str(Path(d) / "nan.json")], max(1, repeats // 3))
    print(json.dumps({"repeats": repeats, **figures}))
    report = Report("your-data", "Reading a visitor's files (sim/yourdata/datafile.py, runlog, plan, diagnose)")
    for name, f in figures.items():
        target = TARGETS.get(name)
        report.add(f"{LABELS[name]} (wall, median)", round(f["wall_s"] * 1000), "ms",
                   target=None if target is None else target * 1000)
    report.note(f"Medians of {repeats} repeats (the 20 MB pool and the command lines: {max(1, repeats // 3)}); files "
                "built in memory as TRL, W&B, verl and a pool CSV write them. The upload path is a worker process "
                "(sim/yourdata/reader.py): the bytes sent down a pipe, parsed, the arrays sent back. The command "
                "lines include Python's start and their imports (plan also runs the toy on the pool's quantiles).")
    return report.finish(args)


# ---- --class: the app, ten uploads beside a student ----------------------------------------------------------

SESSION_TTL_S = 120  # Streamlit 1.67's server.disconnectedSessionTTL default


def run_class(uploads: int, data: bytes, budget_s: float = 900.0, page: str = "your_prompts",
              key: str = "prompts_upload", name: str = "pool{i}.csv", refused: bool = False) -> dict:
    """Start app.py, measure a student alone, then beside `uploads` uploads of `data` to `page` (Your prompts; with
    --row1 Your run, where the file is refused: `refused`); the server's memory throughout. See the module's
    docstring."""
    import asyncio
    import tempfile

    from tests.fixtures.serve import start_server

    log = tempfile.TemporaryFile()
    server = start_server(log=log, env={"STREAMLIT_SERVER_ENABLE_XSRF_PROTECTION": "false"}, timeout=120)
    try:
        return asyncio.run(asyncio.wait_for(_class(server.url, server.pid, uploads, data, _rss_mb, _workers_pss_mb,
                                                   page, key, name, refused), budget_s))
    finally:
        server.stop()


async def _class(url: str, pid: int, uploads: int, data: bytes, rss_mb, workers_pss_mb, page: str = "your_prompts",
                 key: str = "prompts_upload", name: str = "pool{i}.csv", refused: bool = False) -> dict:
    import asyncio

    out = {"uploads": uploads, "bytes": len(data), "page": page, "rss_start_mb": round(rss_mb(pid), 1)}
    alone = await _student(url, 20.0)
    uploader = await _open(url, page, upload=True)
    out |= {"rss_before_mb": round(rss_mb(pid), 1), "worker_pss_before_mb": round(workers_pss_mb(pid), 1)}
    during: list[float] = []
    task = asyncio.create_task(_student(url, None, during))
    after, took = [], []
    for i in range(uploads):
        t = time.monotonic()
        sent = await uploader.upload(key, name.format(i=i), data)
        errors = [e for e in uploader.stats.errors if not (refused and e.startswith("error on the page"))]
        if not await uploader.wait_full_run(sent, 120.0) or errors:
            raise RuntimeError(f"upload {i} failed: {errors or 'no answer in 120 s'}")
        if refused:
            out["said"] = uploader.stats.errors[-1][:200] if uploader.stats.errors else ""
        took.append(round(time.monotonic() - t, 2))
        after.append(round(rss_mb(pid), 1))
    task.cancel()
    await uploader.close()
    await asyncio.sleep(5.0)
    leaving = round(rss_mb(pid), 1)
    await asyncio.sleep(SESSION_TTL_S + 20.0)  # Streamlit drops a closed tab's session (its upload, its state) after
    visitor = await _open(url, page)  # its TTL, lazily: when the session store is next touched (a visitor;
    #                                            Your prompts also hands the freed memory back, ui/upload.py)
    await visitor.close()
    await asyncio.sleep(5.0)
    out |= {"upload_to_page_s": took, "rss_after_each_mb": after, "rss_after_leaving_mb": leaving,
            "rss_after_session_ttl_and_a_visit_mb": round(rss_mb(pid), 1),
            "worker_pss_after_mb": round(workers_pss_mb(pid), 1),
            "student_alone_s": _stats(alone), "student_during_uploads_s": _stats(during),
            "load_avg_after": round(__import__("os").getloadavg()[0], 2)}
    return out


def _stats(xs: list[float]) -> dict:
    return {"n": len(xs), "median": round(statistics.median(xs), 3) if xs else None,
            "max": round(max(xs), 3) if xs else None}


async def _open(url: str, page: str, upload: bool = False):
    tab = (_uploader_tab() if upload else __import__("scripts.st_client", fromlist=["Tab"]).Tab)(url, page)
    t = time.monotonic()
    await tab.open(60.0)
    if not await tab.wait_full_run(t, 120.0):
        raise RuntimeError(f"/{page} did not load")
    return tab


async def _student(url: str, seconds: float | None, into: list[float] | None = None) -> list[float]:
    """Open Wasted groups in a fresh tab once a second (the views compute in the browser: what a student costs the
    server is opening a page) and time each page to its first finished script run. seconds=None: until
    cancelled."""
    import asyncio

    got = [] if into is None else into
    end = None if seconds is None else time.monotonic() + seconds
    while end is None or time.monotonic() < end:
        t = time.monotonic()
        tab = await _open(url, "wasted")
        got.append(time.monotonic() - t)
        await tab.close()
        await asyncio.sleep(1.0)
    return got


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def _workers_pss_mb(pid: int) -> float:
    """PSS (/proc/PID/smaps_rollup) of every process below `pid` (the file worker, its fork server): PSS, not RSS,
    because the workers share the fork server's preloaded pages."""
    import os

    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    children.setdefault(int(f.read().rsplit(")", 1)[1].split()[1]), []).append(int(name))
            except (OSError, IndexError, ValueError):
                continue
    total, todo = 0.0, [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            todo.append(child)
            try:
                with open(f"/proc/{child}/smaps_rollup") as f:
                    total += next(int(line.split()[1]) for line in f if line.startswith("Pss:")) / 1024
            except (OSError, StopIteration):
                continue
    return total


def _uploader_tab():
    """scripts/st_client.py's Tab with Streamlit 1.67's upload: ask the server for an upload URL (BackMsg
    file_urls_request, answered by file_urls_response), PUT the file as multipart form data, then rerun with the
    uploader's state naming it (file_uploader_state_value), as the frontend's FileUploader does."""
    import asyncio
    import uuid

    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    from scripts.st_client import Tab

    class UploadTab(Tab):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.session_id, self._urls, self._previous = "", {}, None

        def _handle(self, raw: bytes, now: float) -> None:
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session" and msg.new_session.HasField("initialize"):
                self.session_id = msg.new_session.initialize.session_id
            if kind == "file_urls_response":
                fut = self._urls.pop(msg.file_urls_response.response_id, None)
                if fut is not None and not fut.done():
                    fut.set_result(msg.file_urls_response)
                return
            super()._handle(raw, now)

        async def upload(self, key: str, name: str, data: bytes) -> float:
            w = self.widget(key)
            back, rid = BackMsg(), uuid.uuid4().hex
            back.file_urls_request.request_id = rid
            back.file_urls_request.file_names.append(name)
            back.file_urls_request.session_id = self.session_id
            self._urls[rid] = asyncio.get_running_loop().create_future()
            await self._ws.send(back.SerializeToString())
            urls = (await asyncio.wait_for(self._urls[rid], 30.0)).file_urls[0]
            await asyncio.to_thread(_put, self.base_url + urls.upload_url, name, data)
            if self._previous is not None:  # a single-file uploader deletes the file it replaces, as the browser does
                await asyncio.to_thread(_delete, self.base_url + self._previous)
            self._previous = urls.delete_url
            state = WidgetState(id=w.id)
            info = state.file_uploader_state_value.uploaded_file_info.add()
            info.file_id, info.name, info.size = urls.file_id, name, len(data)
            info.file_urls.CopyFrom(urls)
            self.states[w.id] = state
            return await self._send_rerun()

    return UploadTab


def _delete(url: str) -> None:
    import urllib.request

    req = urllib.request.Request(url, method="DELETE")
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=30) as r:
        r.read()


def _put(url: str, name: str, data: bytes) -> None:
    import urllib.request

    boundary = "----bench" + str(time.monotonic_ns())
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n"
            "Content-Type: text/csv\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    req = urllib.request.Request(url, data=body, method="PUT",
                                 headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=120) as r:
        r.read()


if __name__ == "__main__":
    sys.exit(main())
