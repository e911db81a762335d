"""sim/yourdata/datafile.py and the readers on it (runlog.py, plan.py): the hostile-file set, without a process.

Every refusal is a DataError whose text is one line naming the file and, where there is one, the line and the
field. Caps are checked before a parser runs; a formula cell is refused where a number belongs and neutralised
in a CSV the project writes (sim.export.csv_cell, OWASP's advice).
"""

from __future__ import annotations

import csv
import io
import json
import random

import numpy as np
import pytest

from sim.export import csv_cell, rows_csv
from sim.yourdata import datafile
from sim.yourdata.datafile import DataError, decode, nesting_depth, read_csv, read_json, read_path
from sim.yourdata.plan import load_pool
from sim.yourdata.runlog import load_run_log

FORMULAS = ["=cmd|' /C calc'!A0", "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0",
            "=HYPERLINK(\"http://x\",\"y\")", "\t=1+1"]


def refused(fn, *args, match: str) -> str:
    with pytest.raises(DataError) as e:
        fn(*args)
    text = str(e.value)
    assert "\n" not in text and match in text, text
    return text


def pool(text: str):
    return load_pool(text.encode(), "p.csv")


def runlog(text: str, name: str = "log.csv"):
    return load_run_log(text.encode(), name)


# ---- the file itself -----------------------------------------------------------------------------------------

def test_missing_directory_special_and_oversized_files(tmp_path):
    refused(read_path, tmp_path / "none.csv", match="none.csv: no such file")
    refused(read_path, tmp_path, match="is a directory")
    refused(read_path, "/dev/null", match="not a regular file")
    big = tmp_path / "big.csv"
    with open(big, "wb") as f:  # sparse: 20 MB + 1 byte, refused on its size before any byte is read
        f.truncate(datafile.MAX_BYTES + 1)
    refused(read_path, big, match="big.csv: 20,000,001 bytes is over the cap of 20,000,000 bytes (20 MB)")
    with open(big, "wb") as f:  # issue 37 row 15: 20,000,016 bytes, under 20 MiB, is over the one cap
        f.truncate(20_000_016)
    refused(read_path, big, match="20,000,016 bytes is over the cap of 20,000,000 bytes")
    with open(big, "wb") as f:  # exactly the cap: read (then parsed as any file)
        f.truncate(datafile.MAX_BYTES)
    assert len(read_path(big)) == 20_000_000
    (tmp_path / "empty.csv").write_bytes(b"")
    refused(read_path, tmp_path / "empty.csv", match="is empty")
    ok = tmp_path / "ok.csv"
    ok.write_bytes(b"a\n1\n")
    assert read_path(ok) == b"a\n1\n"


def test_unreadable_file_is_one_line(tmp_path, monkeypatch):
    path = tmp_path / "locked.csv"
    path.write_text("a\n1\n")

    def deny(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("builtins.open", deny)
    refused(read_path, path, match="locked.csv: cannot be read (Permission denied)")


@pytest.mark.parametrize("data, words", [
    (b"reward\n0.5\x00\n", "line 2 holds a NUL byte"),
    (b"\x1f\x8b\x08\x00rest", "gzip-compressed"),
    (b"PK\x03\x04rest", "a zip archive"),
    (b"\x80\x04\x95pickle", "a Python pickle"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    ("reward\n0.5\n".encode("utf-16"), "UTF-16"),
    (b"reward\n0.5\n\xff\xfe0.6\n", "line 3 is not UTF-8 text (byte 0xff)"),
])  # fmt: skip
def test_binary_and_wrongly_encoded_files(data, words):
    refused(decode, data, "f.csv", match=words)
    refused(load_run_log, data, "f.csv", match=words)
    refused(load_pool, data, "f.csv", match=words)


def test_a_utf8_byte_order_mark_is_fine():
    assert decode("\ufeffreward\n0.5\n".encode(), "f.csv") == "reward\n0.5\n"


# ---- CSV: caps first, then strict rows -------------------------------------------------------------------------

def test_a_million_columns_is_refused_on_the_first_lines_length():
    header = ",".join(f"c{i}" for i in range(10**6))
    text = refused(read_csv, header + "\n" + ",".join("1" * 10**6) + "\n", "wide.csv", match="line 1 is over")
    assert "131,072 characters" in text
    refused(read_csv, ",".join(f"c{i}" for i in range(1001)) + "\n", "w.csv", match="1,001 columns, over the cap")


def test_a_data_row_of_a_million_fields_names_its_line():
    refused(read_csv, "reward,loss\n0.5,0\n" + ",".join(["1"] * 10**6) + "\n", "w.csv",
            match="w.csv: line 3 has 1,000,000 fields, the header has 2")


def test_row_cap_is_checked_before_parsing():
    refused(read_csv, "a\n" + "\n" * datafile.MAX_LINES, "tall.csv", match="is over the cap of 1,000,000 rows")


def test_rows_are_counted_as_the_csv_reader_ends_lines(monkeypatch):
    """Issue 37 row 2: a \n header and \r row ends (4,950,000 rows in 19.8 MB) passed a cap that counted \n only,
    then took 35 s and 2.4 GB. Oracle: csv.reader's own rows, on random texts of \n, \r\n and lone \r."""
    rng = random.Random(3)
    for _ in range(300):
        ends = [rng.choice(["\n", "\r\n", "\r"]) for _ in range(rng.randrange(1, 30))]
        text = "".join(f"{i},{i}{e}" for i, e in enumerate(ends))
        rows = list(csv.reader(io.StringIO(text, newline="")))
        assert datafile.count_lines(text) == len(rows) == len(ends), repr(text)
    half = "x" * (datafile.MAX_HEADER_CHARS // 2 + 10)  # a row over MAX_HEADER_CHARS after a short header
    assert read_csv("a,b\r" + half + "," + half, "r.csv").rows == [[half, half]]  # \r ends line 1
    monkeypatch.setattr(csv, "reader", lambda *a, **k: pytest.fail("parsed before the cap"))
    tall = "correct,samples\n" + "1,2\r" * datafile.MAX_LINES
    refused(read_csv, tall, "cr.csv", match="cr.csv: 1,000,001 lines is over the cap of 1,000,000 rows")
    refused(load_pool, tall.encode(), "cr.csv", match="1,000,001 lines is over the cap")

@pytest.mark.parametrize("text, words", [
    ("reward;loss\n0.5;0\n", "separates its fields with ';'"),
    ("reward,reward\n1,2\n", "names the column reward twice"),
    ("reward,,loss\n1,2,3\n", "line 1, column 2 has no name"),
    ('reward,loss\n"0.5,0\n', "unexpected end of data"),
    ("\n", "has no column names"),
])  # fmt: skip
def test_malformed_csv(text, words):
    refused(read_csv, text, "m.csv", match=words)


@pytest.mark.parametrize("cell", ["1e999", "0x10", "1_000", "high", *FORMULAS])
def test_a_run_log_refuses_what_is_not_a_finite_number_with_its_line_and_field(cell):
    """What no framework writes is refused with its place; NaN, an infinity and an empty cell are a step's missing
    value (issue 42; tests/test_yourdata_formats.py)."""
    quoted = '"' + cell.replace('"', '""') + '"'
    text = refused(runlog, f"step,reward,loss\n1,0.5,0\n2,{quoted},0\n", match="log.csv line 3, field reward:")
    assert ("finite" in text or "too large" in text or "not a number" in text), text
    assert "\t" not in text and "\n" not in text  # the cell is shown escaped


@pytest.mark.parametrize("cell, words", [
    ("-3", "is negative; a count is 0 or more"), ("2.5", "is not a whole number"), ("nan", "not a finite number"),
    ("inf", "not a finite number"), ("", "is empty"), ("1e3", "is not a whole number"),
    ("9", "is more than samples = 8 (c > n)"), *[(f, "is not a number") for f in FORMULAS if f[0] != "-"],
    ("-2+3+cmd|' /C calc'!A0", "is not a number"),
])  # fmt: skip
def test_a_pool_refuses_bad_counts_with_line_and_field(cell, words):
    quoted = '"' + cell.replace('"', '""') + '"'
    text = refused(pool, f"prompt,correct,samples\na,1,8\nb,{quoted},8\n", match=words)
    assert text.startswith("p.csv line 3, field correct: "), text


@pytest.mark.parametrize("text, words", [
    ("correct,samples\n1,0\n", "line 2, field samples: 0 samples"),
    ("pass_rate\n0.5\n1.5\n", "line 3, field pass_rate: 1.5 is not a rate in [0, 1]"),
    ("pass_rate\n-0.1\n", "line 2, field pass_rate: -0.1 is not a rate in [0, 1]"),
    ("pass_rate\nNaN\n", "line 2, field pass_rate: NaN is not a finite number"),
    ("correct,samples\n1,2000000000\n", "over the cap of 1,000,000,000"),
    ("prompt,score\na,1\n", "needs the columns correct and samples, or pass_rate"),
    ("correct,samples\n", "has a header but no prompts"),
])  # fmt: skip
def test_pool_errors(text, words):
    refused(pool, text, match=words)


def test_unknown_columns_are_ignored_with_a_note_and_prompt_text_is_kept_verbatim():
    p = pool('prompt,correct,samples,difficulty,<b>x</b>\n"=cmd|\' /C calc\'!A0",1,8,hard,1\n**x**,0,8,easy,2\n')
    assert p.notes == ("columns ignored: difficulty, <b>x</b>",)
    assert p.ids == ("=cmd|' /C calc'!A0", "**x**") and p.lines.tolist() == [2, 3]
    assert pool("pass_rate,correct\n0.5,1\n").notes == ("correct ignored: it needs its partner column",)


def test_an_exported_prompt_table_neutralises_formula_cells():
    p = pool("prompt,correct,samples\n" + "".join(f'"{f.replace(chr(34), chr(34) * 2)}",1,8\n' for f in FORMULAS)
             + "37+48=,2,8\n")
    from sim.yourdata.plan import prompt_rows

    text = rows_csv(prompt_rows(p, 8))
    cells = [row[1] for row in csv.reader(io.StringIO(text))][1:]
    assert cells[:-1] == ["'" + f for f in FORMULAS] and cells[-1] == "37+48="  # a plain prompt is untouched
    assert all(not c.lstrip(" ").startswith(("=", "+", "-", "@", "\t")) for c in cells)
    assert csv_cell(-0.5) == -0.5 and csv_cell(None) is None and csv_cell("  =1") == "'  =1"


# ---- JSON: depth before parsing, strict values --------------------------------------------------------------

def test_deep_nesting_is_refused_before_json_parses(monkeypatch):
    calls = []
    monkeypatch.setattr(json, "loads", lambda *a, **k: calls.append(1))
    for text in ("[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000, "[" * 10**7):
        refused(read_json, text, "deep.json", match="nested more than 32 levels deep")
        refused(load_run_log, text.encode(), "deep.json", match="nested more than 32 levels deep")
    assert not calls


def _depth(x) -> int:
    if isinstance(x, dict):
        return 1 + max((_depth(v) for v in x.values()), default=0)
    if isinstance(x, list):
        return 1 + max((_depth(v) for v in x), default=0)
    return 0


def _random_json(rng: random.Random, depth: int):
    kind = rng.randrange(5) if depth < 6 else 4
    if kind == 0:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 1:
        return {rng.choice(["a", "[", "}{", '"', "\\"]) + str(i): _random_json(rng, depth + 1)
                for i in range(rng.randrange(4))}
    return rng.choice(["[[[", "]]}", '\\"[', "\\\\", "plain", 1, 2.5, None, True, '"{'])


def test_nesting_depth_matches_the_parsed_value_on_random_json(monkeypatch):
    """Oracle: the depth of the value json parses; strings full of brackets, quotes and backslashes do not
    count. A tiny chunk size makes every carry across chunks happen."""
    rng = random.Random(0)
    for chunk in (datafile._DEPTH_CHUNK, 3):
        monkeypatch.setattr(datafile, "_DEPTH_CHUNK", chunk)
        for _ in range(300):
            value = _random_json(rng, 0)
            text = json.dumps(value, indent=rng.choice([None, 1]))
            assert nesting_depth(text) == _depth(value), text


@pytest.mark.parametrize("text, words", [
    ('{"log_history": [{"step": 1, "reward": 0.5, "reward": 0.6}]}', "names the key reward twice"),
    ('{"log_history": [{"step": 1, "reward": 0.5}\n,]}', "line 2, column 2: not valid JSON"),
    ('{"log_history": {"step": 1}}', "log_history must be a list"),
    ('{"history": []}', "neither a trainer_state.json (no log_history), a list of log entries"),
    ('{"log_history": [{"step": "one", "reward": 0.5}]}', "log_history[0], line 1, field step"),
    ('{"log_history": [\n{"step": 1, "reward": 0.5},\n{"step": 2,\n "reward": "<b>high</b>"}]}',
     "log_history[1] (step 2), line 4, field reward: <b>high</b> is not a number"),
    ('{"log_history": [{"step": 1, "reward": true}]}', "field reward: True is not a number"),
    ('{"log_history": [{"step": 1, "epoch": 0.1}]}', "no step logs a metric these rules read"),
    ('{"log_history": [{"step": 1, "grad_norm": NaN}]}', "no step logs a metric these rules read"),
])  # fmt: skip
def test_json_logs_refused_with_line_and_field(text, words):
    refused(load_run_log, text.encode(), "trainer_state.json", match=words)


class _CountingTokens:
    """datafile._JSON_TOKEN, counting the tokens its finditer hands out."""

    def __init__(self, pattern):
        self.pattern, self.seen = pattern, 0

    def finditer(self, text):
        for m in self.pattern.finditer(text):
            self.seen += 1
            yield m


def test_a_bare_nan_is_found_in_one_pass_however_many_nan_strings_precede_it(monkeypatch):
    """Issue 37 row 1: "NaN" repeated inside a string, then one bare NaN. Finding the bare one rescanned the file for
    each "NaN" in the string (120 KB: over two minutes). Now the tokenizer steps over the string whole: the 120 KB
    file costs seven tokens, and the message names the line and the field. A run's log reads the bare NaN as that
    step's missing value (issue 42); a strict read_json still refuses it."""
    counting = _CountingTokens(datafile._JSON_TOKEN)
    monkeypatch.setattr(datafile, "_JSON_TOKEN", counting)
    text = '{"log_history":[{"step":1,"note":"' + "NaN" * 40_000 + '",\n"loss":NaN}]}'
    refused(read_json, text, "nan.json", match="nan.json: line 2, field loss: NaN is not a finite number")
    assert counting.seen == 7  # "log_history", "step", 1, "note", the string, "loss", NaN
    escaped = '{"a":"x\\"NaN\\\\","b":"\\\\","c":[1,\n-Infinity]}'  # escaped quotes and backslashes in strings
    refused(read_json, escaped, "e.json", match="line 2, field (a list item): -Infinity")
    with_reward = text.replace('"loss":NaN', '"loss":NaN,"reward":0.5')
    assert load_run_log(with_reward.encode(), "nan.json").gaps == {"loss": {"nan": [1]}}


def test_a_non_finite_value_is_named_wherever_it_sits():
    """Oracle: json.dumps writes the one NaN of a random log under a known key on a known line."""
    rng = random.Random(5)
    for _ in range(200):
        entries = [{"step": i + 1, "note": rng.choice(["NaN", '"NaN"', "\\", "[{", "Infinity"]) * rng.randrange(3),
                    "reward": 0.5} for i in range(rng.randrange(1, 6))]
        bad = rng.randrange(len(entries))
        key = rng.choice(["reward", "loss", "entropy"])
        entries[bad][key] = rng.choice([float("nan"), float("inf"), -float("inf")])
        text = json.dumps({"log_history": entries}, indent=rng.choice([None, 1]))
        line = next(i + 1 for i, ln in enumerate(text.split("\n")) if any(
            f'"{key}": {t}' in ln for t in ("NaN", "Infinity", "-Infinity")))
        refused(read_json, text, "r.json", match=f"line {line}, field {key}: ")


@pytest.mark.parametrize("value, words", [
    ("1e400", "field reward: 1e400 is too large for a number"),
    ("-1e999", "field reward: -1e999 is too large for a number"),
    ("1" * 30, "is too large a whole number (more than 18 digits)"),
    ("1" * 5000, "is too large a whole number"),  # past Python's 4,300-digit int limit: still one line
    ("1e308", "1e+308 is beyond ±1e+38: no metric a trainer logs is that large"),
    ("-3.5e38", "is beyond ±1e+38"),
])  # fmt: skip
def test_numbers_too_large_are_refused_in_json_as_in_csv(value, words):
    """Issue 37 row 5: 1e400 in a JSON log was read as infinity (the CSV path refused it); 1e308 passed and
    overflowed the rules' arithmetic."""
    text = '{"log_history": [{"step": 1, "reward": 0.5},\n {"step": 2, "reward": ' + value + "}]}"
    refused(load_run_log, text.encode(), "big.json", match=words)
    if "whole" not in words:
        refused(runlog, f"step,reward\n1,0.5\n2,{value}\n", match="line 3, field reward")


@pytest.mark.parametrize("field, value, words", [
    ("frac_reward_zero_std", 1.5, "1.5 is outside [0, 1]; frac_reward_zero_std is a share"),
    ("frac_reward_zero_std", -0.5, "-0.5 is outside [0, 1]"),
    ("clip_ratio/region_mean", 2, "2 is outside [0, 1]"),
    ("completions/clipped_ratio", 1.01, "is outside [0, 1]"),
    ("entropy", -0.1, "-0.1 is negative; entropy is never below 0"),
    ("reward_std", -1, "is negative"),
    ("grad_norm", -3, "is negative"),
    ("completions/mean_length", -2, "is negative"),
])  # fmt: skip
def test_out_of_range_shares_and_negative_spreads_are_refused(field, value, words):
    """Issue 37 row 15: frac_reward_zero_std 1.5 was judged ("50% of groups dead")."""
    state = {"log_history": [{"step": 1, "reward": 0.5, field: 0.2}, {"step": 2, "reward": 0.5, field: value}]}
    text = refused(load_run_log, json.dumps(state).encode(), "s.json", match=words)
    assert "log_history[1] (step 2)" in text and f"field {field}" in text
    refused(runlog, f"step,reward,{field}\n1,0.5,0.2\n2,0.5,{value}\n", match=f"log.csv line 3, field {field}")
    assert load_run_log(json.dumps({"log_history": [{"step": 1, field: 1.0}, {"step": 2, field: 0.0}]}).encode(),
                        "edge.json").metrics[field].tolist() == [1.0, 0.0]  # the ends of the range are fine


def test_a_json_string_holding_nan_is_not_a_nan_value():
    log = load_run_log(b'{"log_history": [{"step": 1, "reward": 0.5, "note": "NaN [[["}]}', "s.json")
    assert log.metrics["reward"].tolist() == [0.5] and "note" in log.notes[0]


def test_messages_escape_invisible_characters_and_cut_long_cells():
    cell = "\u202e" + "x" * 200
    text = refused(runlog, f"step,reward\n1,{cell}\n", match="field reward")
    assert "\u202e" not in text and "\\u202e" in text and len(text) < 160
    text = refused(pool, "prompt,correct,samples\na,\u2066=1+1,8\n", match="is not a number")
    assert "\\u2066" in text


def test_a_100k_prompt_pool_and_a_10k_step_log_parse():
    rng = np.random.default_rng(0)
    c = rng.integers(0, 65, size=100_000)
    p = pool("prompt,correct,samples\n" + "".join(f"q{i},{k},64\n" for i, k in enumerate(c)))
    assert p.rate.size == 100_000 and np.array_equal(p.correct, c)
    rows = "".join(f"{t},{0.5 + t / 40000:.6f},0.1,0.2\n" for t in range(1, 10_001))
    log = runlog("train/global_step,train/reward,train/frac_reward_zero_std,train/entropy\n" + rows)
    assert len(log.steps) == 10_000 and log.metrics["reward"][-1] == pytest.approx(0.75)


def test_a_label_from_a_file_leaves_nothing_to_interpret():
    """A chart's legend is the one place a file's text meets markup (Plotly reads <b>); everywhere else the pages
    show it as plain text (the renderer's textContent, st.text)."""
    from sim.yourdata.words import label

    # a label from a file in a Plotly legend: escaped, cut, invisible characters shown
    assert label("rewards/<b>f</b>/mean") == "rewards/&lt;b&gt;f&lt;/b&gt;/mean"
    assert label("\u202e" + "y" * 100) .startswith("\\u202e") and len(label("y" * 100)) == 40


def test_the_apps_upload_cap_is_the_readers_cap():
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 10**6 == datafile.MAX_BYTES == 20_000_000
    # Streamlit 1.67's uploader turns maxUploadSize into bytes with 1000 per unit (1024 on Windows only:
    # `st=l()?1024:1e3` in its utils bundle), and its server accepts up to maxUploadSize MiB + 1 MB: the browser's
    # cap is then 20,000,000 bytes, and ui/upload.py refuses anything above MAX_BYTES that a Windows browser lets
    # through, in the reader's words. This fails when Streamlit's conversion changes.
    import streamlit

    bundles = (Path(streamlit.__file__).parent / "static" / "static" / "js").glob("utils.*.js")
    assert any("?1024:1e3" in b.read_text(encoding="utf-8", errors="replace") for b in bundles)
    assert streamlit.__version__ == "1.67.0"
