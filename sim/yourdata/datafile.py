"""Reading a file from outside (a run's log, a pool of prompts): capped, strictly parsed, one-line errors.

    data = read_path("run.csv")                  # bytes; DataError: missing, a directory, unreadable, too big
    text = decode(data, "run.csv")               # str; DataError: binary, compressed, UTF-16, bad UTF-8 (its line)
    table = read_csv(text, "run.csv")            # Table(header, rows, lines); row and column caps first
    obj = read_json(text, "run.json")            # nesting depth checked before json parses; NaN refused (or kept)

Every refusal is a DataError (a ValueError) whose text is one line naming the file, the line and the field, with
the refused cell cut to 40 characters and its invisible characters escaped (sim.validate.neutral). The caps are
checked on the bytes before any parser runs: MAX_BYTES, MAX_LINES (line ends counted as the CSV reader counts
them: \n, \r\n and a lone \r), MAX_COLUMNS and MAX_HEADER_CHARS (the first line measured), MAX_DEPTH (brackets
counted outside strings, in bounded chunks). Where a JSON value is refused (NaN, an infinity, a number too large
for a float), one linear pass over the text finds its line and field.

Nothing here evaluates, imports or executes anything from a file; a formula cell such as `=cmd|' /C calc'!A0`
is refused where a number is expected and kept as inert text elsewhere. A CSV this project writes neutralises
such cells (sim.export.csv_cell).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim.validate import neutral

MAX_BYTES = 20_000_000  # 20 MB, decimal: the app's upload cap too (.streamlit/config.toml server.maxUploadSize = 20,
#                         which Streamlit's uploader reads as 20 x 1000 x 1000 bytes; ui/upload.py checks it again)
MAX_LINES = 1_000_000  # rows of a CSV, counted as the CSV reader ends lines (\n, \r\n, \r) before parsing
MAX_COLUMNS = 1000
MAX_HEADER_CHARS = 128 * 1024  # a first line longer than this is refused before the CSV reader sees it
MAX_DEPTH = 32  # JSON nesting (trainer_state.json is 4 deep)
SHOWN = 40  # characters of a refused cell or a name repeated in a message
_DEPTH_CHUNK = 1 << 20  # bytes scanned at once by the depth check (bounded memory)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_WHOLE = re.compile(r"\d+(?:\.0*)?")
NONFINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)  # as a cell or a console value
_LINE_END = re.compile(r"[\r\n]")
# numbers a float may not hold (an exponent of 100 or more, 309 digits), from a number's start, possessive: linear
_HUGE = re.compile(r"(?<![\w.+-])-?(?:\d++(?:\.\d++)?[eE]\+?\d{3,}|\d{309,}(?:\.\d++)?(?:[eE][+-]?\d++)?)")
MAX_INT_DIGITS = 18  # a JSON integer longer than this is refused (a step fits; float() of 10^400 would overflow)
# one JSON token at a time, strings first: a string is skipped whole (an escaped quote included), so a "NaN" inside
# one is never taken for the value; linear in the text's length (the unrolled loop never backtracks)
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|-?Infinity|NaN|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')


class DataError(ValueError):
    """A file refused: str() is one line saying where and why."""


def cell_text(value: object, limit: int = SHOWN) -> str:
    """A piece of the file for a message: cut to `limit` characters, invisible characters escaped."""
    text = str(value)
    return neutral(text if len(text) <= limit else text[: limit - 1] + "…")


def file_label(name: object) -> str:
    """A file's name for a message: only its last part, escaped and cut."""
    return cell_text(Path(str(name)).name or str(name), 60)


# ---- bytes ------------------------------------------------------------------------------------------------

def read_path(path, max_bytes: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file at `path`, refused before reading when it is missing, not a regular file
    or larger than max_bytes."""
    label = file_label(path)
    try:
        st = os.stat(path)
    except OSError as e:
        missing = isinstance(e, FileNotFoundError)
        raise DataError(f"{label}: " + ("no such file" if missing else
                                        f"cannot be read ({e.strerror or type(e).__name__})")) from None
    if stat.S_ISDIR(st.st_mode):
        raise DataError(f"{label}: is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise DataError(f"{label}: is not a regular file (a device, a pipe or a socket)")
    check_size(st.st_size, label, max_bytes)
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)  # a file that grew since stat() is still capped
    except OSError as e:
        raise DataError(f"{label}: cannot be read ({e.strerror or type(e).__name__})") from None
    check_size(len(data), label, max_bytes)
    return data


def check_size(size: int, label: str, max_bytes: int = MAX_BYTES) -> None:
    if size > max_bytes:
        raise DataError(f"{label}: {size:,} bytes is over the cap of {max_bytes:,} bytes ({cap_text(max_bytes)})")
    if size == 0:
        raise DataError(f"{label}: is empty")


def cap_text(max_bytes: int = MAX_BYTES) -> str:
    """The cap in words: '20 MB' (decimal megabytes, as the uploader counts them)."""
    return f"{max_bytes / 1e6:g} MB"


def count_lines(text: str) -> int:
    """Line ends as csv.reader on io.StringIO(text, newline="") finds them: \n, \r\n and a lone \r each end a
    line (three passes of str.count, no parsing). A file with a \n header and \r row ends is counted in full."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


_MAGIC = {b"\x1f\x8b": "gzip-compressed", b"PK\x03\x04": "a zip archive", b"%PDF": "a PDF",
          b"\x89PNG": "a PNG image", b"\x93NUMPY": "a numpy array", b"\x80": "a Python pickle"}


def decode(data: bytes, name: str) -> str:
    """`data` as text: UTF-8 (a byte-order mark allowed), refused when binary (a NUL byte, a known binary
    signature), UTF-16/32, or not valid UTF-8 (the message names the line)."""
    label = file_label(name)
    if data[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff") or data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise DataError(f"{label}: is UTF-16 or UTF-32 text; save it as UTF-8")
    for magic, what in _MAGIC.items():
        if data.startswith(magic):
            raise DataError(f"{label}: is {what}, not a CSV or JSON text file")
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + 1
        raise DataError(f"{label}: line {line} holds a NUL byte: a binary file, not a CSV or JSON text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DataError(f"{label}: line {line} is not UTF-8 text (byte 0x{data[e.start]:02x}); save the file as "
                        "UTF-8") from None


# ---- CSV --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Table:
    """A CSV's header (names stripped of spaces) and rows (cells as text), with each row's line number."""

    name: str  # the file's label, for messages
    header: tuple[str, ...]
    rows: list[list[str]]
    lines: list[int]  # (R,) the line each row ends on, as a text editor numbers them

    def column(self, field: str) -> list[str]:
        i = self.header.index(field)
        return [row[i] for row in self.rows]

    def where(self, row: int, field: str) -> str:
        return f"{self.name} line {self.lines[row]}, field {cell_text(field)}"


def read_csv(text: str, name: str, *, max_lines: int = MAX_LINES, max_columns: int = MAX_COLUMNS) -> Table:
    """A comma-separated table with a header row. Refused before parsing: more than max_lines lines, a first
    line over MAX_HEADER_CHARS characters or with more than max_columns fields. Refused while parsing: a row
    whose number of fields differs from the header's, an unterminated quote, an unnamed or repeated column.
    Blank lines are skipped."""
    label = file_label(name)
    if (lines := count_lines(text)) > max_lines:
        raise DataError(f"{label}: {lines:,} lines is over the cap of {max_lines:,} rows")
    end = _LINE_END.search(text, 0, MAX_HEADER_CHARS + 1)
    first = text[: len(text) if end is None else end.start()]
    if len(first) > MAX_HEADER_CHARS:
        raise DataError(f"{label}: line 1 is over {MAX_HEADER_CHARS:,} characters long; a header of at most "
                        f"{max_columns:,} columns is expected")
    if first.count(",") + 1 > max_columns:
        raise DataError(f"{label}: line 1 has {first.count(',') + 1:,} columns, over the cap of {max_columns:,}")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if not header or not any(h.strip() for h in header):
            raise DataError(f"{label}: line 1 has no column names (a header row is expected)")
        names = tuple(h.strip() for h in header)
        if len(names) == 1 and (sep := _other_separator(first)):
            raise DataError(f"{label}: line 1 separates its fields with {sep!r}; save the file with commas")
        for i, h in enumerate(names):
            if not h:
                raise DataError(f"{label}: line 1, column {i + 1} has no name")
            if h in names[:i]:
                raise DataError(f"{label}: line 1 names the column {cell_text(h)} twice")
        rows, where = [], []
        for row in reader:
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(names):
                raise DataError(f"{label}: line {reader.line_num} has {len(row):,} fields, the header has "
                                f"{len(names):,}")
            rows.append(row)
            where.append(reader.line_num)
    except csv.Error as e:
        raise DataError(f"{label}: line {reader.line_num}: {cell_text(e, 80)}") from None
    return Table(label, names, rows, where)


def _other_separator(line: str) -> str | None:
    return next((sep for sep in (";", "\t", "|") if sep in line), None)


def number_cells(table: Table, field: str, *, empty_ok: bool = False) -> np.ndarray:
    """(R,) the column `field` as finite floats (an empty cell is NaN when empty_ok: a metric not logged at
    that step). Refused: text, NaN, infinities, numbers too large for a float; the message names the line."""
    cells = [c.strip(" ") for c in table.column(field)]
    present = [c for c in cells if c]
    if (empty_ok or len(present) == len(cells)) and _all_match(_NUMBER, present):  # one regex pass over the column
        out = np.array([float(c) if c else np.nan for c in cells], dtype=float)  # (R,)
        if np.isfinite(out[~np.isnan(out)]).all():
            return out
    for i, c in enumerate(cells):  # the slow path, only to name the first bad cell
        check_number(c, table.where(i, field), empty_ok=empty_ok)
    raise AssertionError("unreachable: a bad cell was not found")  # pragma: no cover


def _all_match(pattern: re.Pattern, cells: list[str]) -> bool:
    return not cells or re.fullmatch(f"(?:{pattern.pattern}\n)*{pattern.pattern}", "\n".join(cells)) is not None


def check_number(cell: str, where: str, *, empty_ok: bool = False) -> float:
    """One cell as a finite float, or DataError naming `where`."""
    if not cell:
        if empty_ok:
            return float("nan")
        raise DataError(f"{where}: is empty; a number is expected")
    if NONFINITE.fullmatch(cell):
        raise DataError(f"{where}: {cell_text(cell)} is not a finite number (NaN and infinities are refused)")
    if not _NUMBER.fullmatch(cell):
        raise DataError(f"{where}: {cell_text(cell)} is not a number")
    x = float(cell)
    if not np.isfinite(x):
        raise DataError(f"{where}: {cell_text(cell)} is too large for a number")
    return x


def count_cells(table: Table, field: str, *, hi: int) -> np.ndarray:
    """(R,) the column `field` as whole numbers in [0, hi] (int64), written "12" or "12.0". Refused: negative,
    fractional, NaN, text, over hi; the message names the line."""
    cells = [c.strip(" ") for c in table.column(field)]
    if all(len(c) <= 15 for c in cells) and _all_match(_WHOLE, cells):  # 15 digits: exact as a float
        out = np.array([float(c) for c in cells], dtype=float).astype(np.int64)  # (R,)
        if out.size == 0 or out.max() <= hi:
            return out
    for i, c in enumerate(cells):
        where = table.where(i, field)
        x = check_number(c, where)
        if x < 0:
            raise DataError(f"{where}: {cell_text(c)} is negative; a count is 0 or more")
        if x != int(x) or not _WHOLE.fullmatch(c):
            raise DataError(f"{where}: {cell_text(c)} is not a whole number")
        if x > hi:
            raise DataError(f"{where}: {cell_text(c)} is over the cap of {hi:,}")
    raise AssertionError("unreachable: a bad cell was not found")  # pragma: no cover


# ---- JSON -------------------------------------------------------------------------------------------------

def read_json(text: str, name: str, *, max_depth: int = MAX_DEPTH, nonfinite: bool = False) -> object:
    """The JSON value in `text`. Refused before parsing: nesting deeper than max_depth (counted outside
    strings). Refused while parsing: bad syntax (its line and column), a number too large for a float (1e400) or an
    integer of more than MAX_INT_DIGITS digits (the line and the field), an object repeating a key, and NaN and
    infinities unless `nonfinite` (a run's log, where NaN is a diverged step's missing value: they become floats)."""
    label = file_label(name)
    _check_depth(text, label, max_depth)
    return _loads(text, label, nonfinite=nonfinite)


def read_json_lines(text: str, name: str, *, max_depth: int = MAX_DEPTH, nonfinite: bool = False) -> list:
    """JSON Lines: one value per non-blank line, as (line number, value), with read_json's refusals (a message
    names the file's line). The depth is checked once over the whole text, before any line is parsed."""
    label = file_label(name)
    if (lines := count_lines(text)) > MAX_LINES:
        raise DataError(f"{label}: {lines:,} lines is over the cap of {MAX_LINES:,} lines")
    _check_depth(text, label, max_depth)
    out = []
    for i, line in enumerate(text.split("\n")):
        if line.strip():
            out.append((i + 1, _loads(line, label, line_offset=i, nonfinite=nonfinite)))
    return out


def _check_depth(text: str, label: str, max_depth: int) -> None:
    if nesting_depth(text, stop=max_depth) > max_depth:
        raise DataError(f"{label}: nested more than {max_depth} levels deep; not a training log")


def _loads(text: str, label: str, *, line_offset: int = 0, nonfinite: bool = False) -> object:
    """json.loads with every refusal of read_json's, as one-line DataErrors (line numbers + line_offset)."""

    def constant(token: str):
        if nonfinite:
            return float(token)  # NaN, Infinity, -Infinity
        raise _Refused(token, "is not a finite number (NaN and infinities are refused)")

    def integer(token: str) -> int:
        if len(token.lstrip("-")) > MAX_INT_DIGITS:
            raise _Refused(token, f"is too large a whole number (more than {MAX_INT_DIGITS} digits)")
        return int(token)

    def pairs(items):
        out = dict(items)
        if len(out) != len(items):
            seen = set()
            key = next(k for k, _ in items if k in seen or seen.add(k))
            raise DataError(f"{label}: an object names the key {cell_text(key)} twice")
        return out

    try:
        value = json.loads(text, parse_constant=constant, parse_int=integer, object_pairs_hook=pairs)
        if _holds_infinity(value):  # 1e400 parsed as inf (a parse_float hook would cost a Python call per number)
            for m in _HUGE.finditer(text):  # only now, to name it: the first such number outside a string
                if float(m.group()) in (float("inf"), float("-inf")) and refused_place(text, m.group())[0]:
                    raise _Refused(m.group(), "is too large for a number")
        return value
    except json.JSONDecodeError as e:
        raise DataError(f"{label}: line {e.lineno + line_offset}, column {e.colno}: not valid JSON ({e.msg})") from None
    except _Refused as r:
        line, field = refused_place(text, r.token)
        raise DataError(f"{label}: line {line + line_offset}, field {cell_text(field)}: {cell_text(r.token)} "
                        f"{r.why}") from None
    except RecursionError:  # only if max_depth were set above the interpreter's limit
        raise DataError(f"{label}: nested too deep to read") from None


def _holds_infinity(value) -> bool:
    """Is any float in this parsed JSON value infinite? One walk, no recursion."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, dict | list):
            todo.extend(v.values() if isinstance(v, dict) else v)
        elif isinstance(v, float) and abs(v) == float("inf"):
            return True
    return False


class _Refused(Exception):
    def __init__(self, token: str, why: str):
        self.token, self.why = token, why


def refused_place(text: str, token: str) -> tuple[int, str]:
    """(line, field) of the first `token` (NaN, -Infinity, 1e400, ...) outside a string, in one pass over the
    text: the tokenizer steps over each string whole, so "NaN" inside a string costs nothing extra however often
    it repeats. json parses in the same order and stopped at the first such token, so the first found is its."""
    for m in _JSON_TOKEN.finditer(text):
        if m.group() == token:
            key = re.search(r'"((?:[^"\\]|\\.){0,200})"\s*:\s*$', text[max(0, m.start() - 300): m.start()])
            return text.count("\n", 0, m.start()) + 1, (key.group(1) if key else "(a list item)")
    return 0, "?"  # pragma: no cover  (json found it, so the scan does too)


def nesting_depth(text: str, *, stop: int | None = None) -> int:
    """How deep JSON brackets nest in `text`, counting only brackets outside strings; with `stop`, the count
    ends as soon as it passes stop (the caller only needs to know that). Linear time, memory bounded by
    _DEPTH_CHUNK whatever the file's size, no recursion."""
    return _scan(text.encode("utf-8"), stop=stop)[0]


_DELTA = np.zeros(256, dtype=np.int8)
_DELTA[[ord("["), ord("{")]] = 1
_DELTA[[ord("]"), ord("}")]] = -1
_DELTA.flags.writeable = False


def _scan(data: bytes, *, stop: int | None) -> tuple[int, bool]:
    """(max depth, ends inside a string) of JSON bytes, chunk by chunk, vectorised. A quote opens or closes a
    string unless an odd run of backslashes precedes it; brackets inside strings do not count."""
    depth = best = 0
    inside, run = False, 0  # carried over chunks: inside a string, backslashes ending the previous chunk
    for start in range(0, len(data), _DEPTH_CHUNK):
        a = np.frombuffer(data, dtype=np.uint8, count=min(_DEPTH_CHUNK, len(data) - start), offset=start)  # (C,)
        idx = np.arange(a.size)
        bs = a == 92
        last = np.maximum.accumulate(np.where(bs, -1, idx))  # last non-backslash at or before i
        before = np.empty(a.size, dtype=np.int64)  # backslashes just before i
        before[0] = run
        prev = last[:-1]
        before[1:] = np.where(prev >= 0, idx[1:] - 1 - prev, idx[1:] + run)
        quote = (a == 34) & (before % 2 == 0)  # (C,) quotes that open or close a string
        flips = np.cumsum(quote)
        in_str = ((flips - quote) % 2 == 1) ^ inside  # inside a string just before i (its opening quote excluded)
        delta = np.where(in_str | quote, 0, _DELTA[a]).astype(np.int64)
        level = depth + np.cumsum(delta)
        if level.size:
            best = max(best, int(level.max()))
            depth = int(level[-1])
        inside = bool(in_str[-1] ^ quote[-1]) if a.size else inside
        run = int(a.size - 1 - last[-1]) if last[-1] >= 0 else run + a.size
        if stop is not None and best > stop:
            break
    return best, inside


def shown_names(names: Sequence[str], limit: int = 8) -> str:
    """Column names for a note: the first `limit`, each cut and escaped, then how many more."""
    head = ", ".join(cell_text(n, 30) for n in names[:limit])
    return head + (f" and {len(names) - limit:,} more" if len(names) > limit else "")
