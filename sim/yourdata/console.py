"""A run's console output, as people save and publish it (nohup.out, a Slurm .out, a notebook's cell): the lines a
trainer prints per logged step, read strictly; every other line (progress bars, warnings, config dumps) is noise.

    rows = console_rows(text, "train.log")      # None when no line looks like a logged step

Two line shapes, read from the trainers' own code:
  * transformers' Trainer prints each log as a Python dict, `{'loss': 0.0, 'grad_norm': 0.1, 'reward': 0.5, ...,
    'epoch': 0.05}` (Trainer.log -> the console callback's print), values as numbers, `nan` or `inf`, or, in
    recent releases, as strings ('0.03119'). No step is printed: rows are numbered 1, 2, ... ("logged steps").
  * verl's console logger prints one line per training step, `step:12 - actor/entropy:0.5 - critic/score/mean:0.25
    - ...` (verl/utils/tracking.py), often behind Ray's `(TaskRunner pid=...)` prefix and ANSI colour codes, numbers
    sometimes as `np.float64(0.25)`.
Nothing here evaluates anything: each line is matched by one regular expression, pair by pair; a value that is not
a number (text, a list) is kept as text and refused later only if its key is a metric the rules read.
"""

from __future__ import annotations

import re

from sim.yourdata.datafile import MAX_LINES, DataError, file_label

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_STRING = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
# one `'key': value` pair of a printed dict: a quoted key, then a number, nan/inf, a quoted string, True/False/None
_PAIR = re.compile(rf"\s*({_STRING})\s*:\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf)|{_STRING}"
                   r"|True|False|None)\s*(,|\})")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_VERL = re.compile(r"(?:^|\s)step:(\d{1,10}) - (.*)$")
_NUMPY = re.compile(r"np\.(?:float|int)\d*\((.*)\)")
MAX_DICT = 200_000  # characters of one printed dict (a log line is a few kilobytes)


def _value(token: str):
    """A printed value: a float (nan and inf included), None, or text (a quoted string not a number, a bool)."""
    if token in ("True", "False"):
        return token
    if token == "None":
        return None
    if token[0] in "'\"":
        inner = token[1:-1]
        return float(inner) if _NUMBER.fullmatch(inner.strip()) else inner
    return float(token)


def _dict_line(line: str) -> dict | None:
    """The dict transformers printed on this line (after any progress bar), or None when the line holds none."""
    start = line.find("{'")
    if start < 0:
        start = line.find('{"')
    end = line.rfind("}")
    if start < 0 or end < start or end - start > MAX_DICT:
        return None
    body, out, pos = line[start + 1: end + 1], {}, 0
    while pos < len(body):
        m = _PAIR.match(body, pos)
        if m is None:
            return None  # not a flat dict of scalars: noise (a config dump, a dict in a warning)
        out[m.group(1)[1:-1]] = _value(m.group(2))
        pos = m.end()
        if m.group(3) == "}":
            return out if pos == len(body) else None
    return None


def _verl_line(line: str) -> tuple[int, dict] | None:
    m = _VERL.search(line)
    if m is None:
        return None
    out = {}
    for part in m.group(2).split(" - "):
        key, sep, raw = part.partition(":")
        if not sep or not key.strip():
            continue
        raw = raw.strip()
        inner = _NUMPY.fullmatch(raw)
        raw = inner.group(1) if inner else raw
        out[key.strip()] = float(raw) if _NUMBER.fullmatch(raw) else (None if raw == "None" else raw)
    return int(m.group(1)), out


def console_rows(text: str, name: str):
    """(rows, steps, where, source, notes) of a console log: verl's step lines if it has any, else transformers'
    printed dicts; None when neither is there (not a console log)."""
    label = file_label(name)
    lines = _ANSI.sub("", text).replace("\r", "\n").split("\n")
    if len(lines) > 4 * MAX_LINES:
        raise DataError(f"{label}: {len(lines):,} lines is over the cap of {4 * MAX_LINES:,} lines")
    verl = [(i + 1, hit) for i, line in enumerate(lines) if " - " in line and (hit := _verl_line(line))]
    if verl:
        rows = [r for _, (_, r) in verl]
        steps = [s for _, (s, _) in verl]
        where = [f"{label} line {i}" for i, _ in verl]
        return rows, steps, where, "verl console", [f"verl's console: {len(rows):,} step lines read; other lines "
                                                    "(start-up, warnings) are not part of the log"]
    found = [(i + 1, d) for i, line in enumerate(lines) if "{" in line and (d := _dict_line(line))]
    if not found:
        return None
    rows = [d for _, d in found]
    where = [f"{label} line {i}" for i, _ in found]
    note = (f"transformers' console: {len(rows):,} printed logs read, numbered 1, 2, ... (a console prints no step; "
            "multiply by logging_steps for the optimizer step)")
    return rows, [None] * len(rows), where, "console", [note]
