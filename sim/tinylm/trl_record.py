"""A recorded TRL run of TinyLM's task (assets/data/tinylm_trl_run.json): its reward and pass@1 curves, for a page to
overlay on a live `--trainer sim` run. Plain JSON: reading it needs neither TRL nor transformers.

    python -m sim tinylm --trainer trl --json --out run.json     # a TRL run (requirements-trl.txt)
    python -m sim.tinylm.trl_record run.json                     # -> assets/data/tinylm_trl_run.json
    run = load_trl_run()                                         # the curves, or None if there is no record

The file is data from disk: `load_trl_run` checks every field's type, length and range and raises
TrlRecordError (one line) for anything else, so a broken file costs a message, never a wrong chart.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from sim.paths import ASSETS

ASSET = ASSETS / "data" / "tinylm_trl_run.json"
FORMAT, VERSION = "tinylm-trl-run", 1
MAX_BYTES = 4 * 2**20
RECORD = "python -m sim tinylm --trainer trl --json --out run.json && python -m sim.tinylm.trl_record run.json"


class TrlRecordError(ValueError):
    """The recorded TRL run is unreadable or malformed."""


def record(summary: dict) -> dict:
    """The asset's content from a `--trainer trl` summary: one reward per iteration (TRL's "reward" at the
    optimizer step that generated the iteration's batch: with mu > 1 TRL logs it on one step in mu), the exact
    held-out pass@1 curve, and what the run was."""
    grpo = summary["config"]["grpo"]
    mu, n = grpo["mu"], summary["iterations"]
    sums, counts = [0.0] * n, [0] * n
    for row in summary["trl_log"]:
        it = (row["step"] - 1) // mu  # optimizer steps 1..mu are iteration 1 (index 0)
        if it < n and row.get("reward") is not None:
            sums[it] += row["reward"]
            counts[it] += 1
    if 0 in counts:
        raise TrlRecordError(f"trl_log: iteration {counts.index(0) + 1} logs no reward")
    return {
        "format": FORMAT,
        "version": VERSION,
        "trainer": "trl",
        "iterations": list(range(1, n + 1)),
        "reward": [s / c for s, c in zip(sums, counts, strict=True)],
        "pass_at_1": [[int(it), float(p)] for it, p in summary["exact_pass_at_1"]],
        "pass_at_1_before": summary["pass_at_1_before"],
        "pass_at_1_after": summary["pass_at_1_after"],
        "pass_at_64_after": summary["pass_at_k_after"][-1],
        "eval_samples": summary["eval_samples"],
        "grpo_seconds": summary["grpo_seconds"],
        "num_processes": summary["num_processes"],
        "grpo_config": grpo,
        "trl_config": {k: v for k, v in summary["trl_config"].items() if k != "output_dir"},
        "regenerate": RECORD,
    }


def _numbers(name: str, xs, n: int | None = None, lo: float = 0.0, hi: float = 1.0) -> list[float]:
    if not isinstance(xs, list) or (n is not None and len(xs) != n):
        raise TrlRecordError(f"{name}: expected a list of {n if n is not None else 'some'} numbers")
    for x in xs:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or not lo <= x <= hi:
            raise TrlRecordError(f"{name}: every value must be a number in [{lo:g}, {hi:g}]")
    return [float(x) for x in xs]


def load_trl_run(path: str | Path = ASSET) -> dict | None:
    """The recorded TRL run's curves, or None if the file does not exist. Raises TrlRecordError if it is broken.

    Returns {"iterations": [1, ..., N] ints, "reward": N floats in [0, 1] (TRL's `reward`, mean over the
    iteration's optimizer steps), "pass_at_1": [[iteration, exact held-out pass@1], ...] from iteration 0 every
    eval_every iterations and at the end, "pass_at_1_after", "pass_at_64_after" (sampled, eval_samples per
    problem), "eval_samples", "grpo_seconds", "num_processes", "grpo_config" (sim's GRPOConfig fields) and
    "trl_config" (the trl.GRPOConfig arguments), "regenerate" (the command that rebuilds the file)}."""
    path = Path(path)
    if not path.exists():
        return None
    if path.stat().st_size > MAX_BYTES:
        raise TrlRecordError(f"{path.name}: larger than {MAX_BYTES >> 20} MB; rebuild it with `{RECORD}`")
    try:
        raw = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        why = type(e).__name__
        raise TrlRecordError(f"{path.name}: not readable JSON ({why}); rebuild it with `{RECORD}`") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or raw.get("version") != VERSION:
        raise TrlRecordError(f"{path.name}: not a {FORMAT} v{VERSION} file; rebuild it with `{RECORD}`")
    its = raw.get("iterations")
    if not isinstance(its, list) or its != list(range(1, len(its) + 1)):
        raise TrlRecordError(f"{path.name}: iterations must be 1, 2, ..., N")
    out: dict = {"iterations": its}
    for key in ("grpo_config", "trl_config"):  # shown, if at all, as plain text: never Markdown or HTML
        if not isinstance(raw.get(key), dict):
            raise TrlRecordError(f"{path.name}: {key} must be an object")
        out[key] = raw[key]
    for key in ("eval_samples", "num_processes"):
        out[key] = int(_numbers(key, [raw.get(key)], lo=1, hi=2**31)[0])
    out["grpo_seconds"] = _numbers("grpo_seconds", [raw.get("grpo_seconds")], hi=1e9)[0]
    out["regenerate"] = RECORD
    out["reward"] = _numbers("reward", raw.get("reward"), len(its))
    curve = raw.get("pass_at_1")
    if not isinstance(curve, list) or not curve or not all(isinstance(p, list) and len(p) == 2 for p in curve):
        raise TrlRecordError(f"{path.name}: pass_at_1 must be a list of [iteration, pass@1] pairs")
    _numbers("pass_at_1 iterations", [p[0] for p in curve], lo=0, hi=len(its))
    out["pass_at_1"] = [[int(p[0]), v] for p, v in zip(curve, _numbers("pass_at_1", [p[1] for p in curve]),
                                                       strict=True)]  # fmt: skip
    for key in ("pass_at_1_after", "pass_at_64_after"):
        out[key] = _numbers(key, [raw.get(key)])[0]
    return out


def main(argv: list[str]) -> int:
    """python -m sim.tinylm.trl_record RUN.json [OUT]: write the asset from a `--trainer trl --out` summary."""
    if len(argv) not in (1, 2):
        print("usage: python -m sim.tinylm.trl_record RUN.json [OUT]", file=sys.stderr)
        return 2
    try:
        summary = json.loads(Path(argv[0]).read_text())
        rec = record(summary)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"error: {argv[0]}: not a --trainer trl summary ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    out = Path(argv[1]) if len(argv) == 2 else ASSET
    from sim.runtime.files import write_atomically  # whole or not at all; the replaced file's mode kept

    try:
        write_atomically({out: (json.dumps(rec, indent=1) + "\n").encode()})
    except OSError as e:
        print(f"error: cannot write {out}: {e.strerror or e}", file=sys.stderr)
        return 2
    load_trl_run(out)  # what was written reads back
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
