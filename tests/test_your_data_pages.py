"""pages/your_run.py and pages/your_prompts.py under AppTest: the examples at the defaults, an upload read into
the session only, text from the file shown as plain text, bad files refused with one line, the link holding the
settings and never the file. Each page is the view's page (assets/js/page.js) with the document the server computes
for the setting the page reports (`report`, as the page's script does in a browser): the findings, charts and tables
arrive as the renderer's blocks, whose every text is plain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import charts, documents, live_requests, report, views, walk

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("full_error_details")]
ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ["<b>x</b>", "**x**", "[link](http://example.com)", "$x^2$", ":red[x]", "\u202eevil"]


def page(name: str, **values) -> AppTest:
    """The page opened, then the setting `values` (by URL key) reported as its script reports what it read from
    the link."""
    at = AppTest.from_file(str(ROOT / "pages" / name), default_timeout=90).run()
    assert not at.exception, at.exception
    assert not [v for v in views(at) if v.get("doc")]  # no document before the page says its setting
    return report(at, name.removesuffix(".py"), **values)


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader[0].set_value((name, data, "text/csv"))
    return at.run()


def texts(at: AppTest) -> list[str]:
    return [t.value for t in at.text]


def rendered(at: AppTest) -> str:
    """Everything the page renders as Markdown (markdown, captions, expanders' labels, alerts): user text must never
    be among it."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [e.label for e in at.expander]
    parts += [e.value for e in at.error] + [w.value for w in at.warning] + [i.value for i in at.info]
    return "\n".join(parts)


def blocks(at: AppTest, kind: str) -> list[dict]:
    """The page's document's blocks of one kind (folds opened)."""
    return [b for bs in documents(at) for b in walk(bs) if b["kind"] == kind]


def said(at: AppTest) -> str:
    """Every text of the page's document, as the renderer shows it (plain text)."""
    out = []
    for bs in documents(at):
        for b in walk(bs):
            out += [str(b.get(k)) for k in ("text", "title", "rule", "steps", "reading", "remedy", "summary")
                    if b.get(k)]
            out += [f"{label}: {value}" for label, value, *_ in b.get("items", [])]
    return "\n".join(out)


# ---- Your run -------------------------------------------------------------------------------------------

def test_your_run_at_its_defaults_diagnoses_the_shipped_trl_run():
    at = page("your_run.py")
    assert not at.exception and not at.error and not at.warning
    assert "File (trainer_state.json): tinylm_trl_trainer_state.json (the example)" in texts(at)
    body = said(at)
    assert "Entropy falls 87%" in body and "mostly all correct (too easy) at 362 of 600 optimizer steps" in body
    assert "No kl logged: β = 0" in body and "clip_ratio/region_mean is 0 at every step" in body
    assert "Steps: 600" in body and "Warnings: 0" in body and "G · window: 8 · 30" in body
    drawn = charts(at)["run_charts"]  # the one chart spec, each chart with its caption
    assert len(drawn) >= 7 and not at.get("plotly_chart") and not at.slider  # the controls are the page's own
    reward = next(c for c in drawn if c["title"] == "Reward")
    assert reward["x_title"] == "step" and "Reward 0.469 → 0.967" in reward["caption"] and "pass@1" in reward["caption"]
    assert [r["text"] for r in reward["reads"]] == ["0.469", "0.967"]  # read off its rolling mean
    assert [b.label for b in at.get("download_button")] == ["The diagnosis (JSON)"]


def log_csv(columns: list[str], rows: int = 40) -> bytes:
    head = "train/global_step,train/reward,train/reward_std,train/frac_reward_zero_std,train/entropy," + ",".join(
        f'"{c}"' for c in columns)
    lines = [f"{t},{0.3 + t / 100:.3f},0.46,0.2,{1 - t / 80:.4f}," + ",".join("1" for _ in columns)
             for t in range(1, rows + 1)]
    return (head + "\n" + "\n".join(lines) + "\n").encode()


def test_an_uploaded_log_replaces_the_example_and_its_text_stays_plain():
    at = upload(page("your_run.py"), "<b>run</b>.csv", log_csv(HOSTILE + ["rewards/**f**/mean"]))
    assert not at.exception and not at.error
    shown = "\n".join(texts(at))
    assert "File (CSV): <b>run</b>.csv" in shown
    for h in ("<b>x</b>", "**x**", "[link](http://example.com)", "$x^2$", ":red[x]", "\\u202eevil"):
        assert h in shown, h  # literally, in a plain-text element
    assert "Reward function: **f**" in said(at)  # a document's text: plain, never Markdown (its md is None)
    assert all(b.get("md") is None for b in blocks(at, "text"))
    body = rendered(at)
    for h in HOSTILE + ["**f**", "<b>run</b>"]:
        assert h not in body, h  # never where Markdown or HTML would be rendered
    assert "\u202e" not in shown  # the bidi override is escaped
    chart = next(c for c in charts(at)["run_charts"] if c["title"] == "Reward")
    assert all("<b>" not in t["name"] for t in chart["traces"])
    from sim.views.your_data import label

    assert label("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"  # a label from a file: Plotly draws the seven characters
    assert "Entropy falls" in said(at)  # 1 - t/80: from 0.9875 to 0.5125


@pytest.mark.parametrize("name", ["trl020_minesweeper_trainer_state.json", "verl_qwen32b_console.txt",
                                  "trl_console_rho1.00_seed42.log"])
def test_a_real_log_on_the_page_gives_the_clis_findings(name):
    """Issue 42: the page and the command line use the same rules; a real log uploaded on the page (read in the
    server's file worker) gives the findings `python -m sim diagnose FILE` gives, each with its rule."""
    from sim.yourdata.diagnose import diagnose
    from sim.yourdata.runlog import load_run_log

    data = (ROOT / "tests" / "fixtures" / "real_logs" / name).read_bytes()
    at = upload(page("your_run.py"), name, data)
    assert not at.exception and not at.error
    shown = {(b["status"], b["title"], b["rule"]) for b in blocks(at, "finding")}
    findings = diagnose(load_run_log(data, name)).findings
    assert shown == {(f.status, f.title, f.rule) for f in findings} and len(findings) > 5


def test_control_and_bidi_characters_in_a_functions_name_are_escaped_everywhere():
    """Issue 43 row 5: a reward function named with U+202E, ESC and BEL was shown raw in Your run's chart caption
    ("gnp.exe" read "exe.png"); the CLI escaped it. File text is escaped and cut wherever it is shown."""
    evil = "gnp\u202e.exe\x1b[31m\x07"
    rows = [{"step": t, "reward": 0.2 + t / 100, f"rewards/{evil}/mean": 0.2 + t / 100, "rewards/b/mean": 0.5}
            for t in range(1, 61)]
    at = upload(page("your_run.py"), "evil.json", json.dumps({"log_history": rows}).encode())
    assert not at.exception
    shown = [*texts(at), rendered(at), said(at), json.dumps(charts(at), ensure_ascii=False),
             json.dumps(documents(at), ensure_ascii=False)]
    for text in shown:
        assert not any(c in text for c in "\u202e\x1b\x07"), text[:200]
    assert "Reward functions: b, gnp\\u202e.exe\\u001b[31m\\u0007" in said(at).splitlines()  # said, escaped


def test_a_log_that_is_not_grpo_is_said_in_one_line():
    data = (ROOT / "tests" / "fixtures" / "real_logs" / "sft_trainer_state.json").read_bytes()
    at = upload(page("your_run.py"), "trainer_state.json", data)
    assert not at.exception and not charts(at) and not at.get("download_button")
    assert [(b["tone"], b["text"]) for b in blocks(at, "note")] == [("info", (
        "Not a GRPO run: a supervised or other Trainer run (grad_norm, learning_rate, loss; no reward of any kind). "
        "Nothing is judged."))]


def test_a_file_that_cannot_be_read_says_why_in_one_line():
    at = upload(page("your_run.py"), "bad.csv", b"step,reward\n1,0.5\n2,=cmd|' /C calc'!A0\n")
    assert not at.exception
    assert [e.value for e in at.error] == ["This file cannot be read:"]
    assert texts(at)[-1] == "bad.csv line 3, field reward: =cmd|' /C calc'!A0 is not a number"
    assert not charts(at) and not views(at)  # the page stops at the one line
    nested = upload(page("your_run.py"), "deep.json", b"[" * 100_000)
    assert "nested more than 32 levels deep" in texts(nested)[-1]


def test_the_group_size_is_the_pages_and_a_summary_that_disagrees_is_flagged():
    at = page("your_run.py", G=4, W=10)
    assert not at.warning and "at G = 4" in said(at) and "W = 10" in said(at)
    summary = {"trl_log": [{"step": t, "reward": 0.5, "frac_reward_zero_std": 0.1} for t in range(1, 11)],
               "config": {"grpo": {"group_size": 16, "beta": 0.0, "mu": 1}}}
    at = upload(page("your_run.py"), "run.json", json.dumps(summary).encode())
    assert [(b["tone"], b["text"]) for b in blocks(at, "note")][0] == ("warning", (
        "The file's config says G = 16; the rules use the page's G = 8. Set Group size G to 16."))
    at = report(at, "your_run", G=16)  # the reader moves the slider: said no more
    assert not any("config says" in b["text"] for b in blocks(at, "note"))


def test_a_setting_the_page_could_not_have_sent_is_refused_in_one_line():
    """The report is data from a browser, which anyone can rewrite: checked against the page's own controls
    (sim/views/controls.py check_values) before any work, and said in one line instead of a document."""
    at = page("your_run.py", G=10**6)
    assert not at.exception and not charts(at)
    (note,) = blocks(at, "note")
    assert note["tone"] == "error"
    assert "Group size G (G) = 1000000 is not a value of this page's control" in note["text"]


def test_the_file_lives_in_this_session_only_and_never_in_the_link():
    first = upload(page("your_run.py", G=4), "mine.csv", log_csv(["secret_column"]))
    assert "secret_column" in "\n".join(texts(first))
    assert set(first.query_params) <= {"G", "W"}  # the link: settings only
    assert "_run_parsed" in first.session_state
    second = page("your_run.py")  # another visitor
    assert "File (trainer_state.json): tinylm_trl_trainer_state.json (the example)" in texts(second)
    assert "secret_column" not in "\n".join(texts(second))
    first.file_uploader[0].set_value(None).run()  # removing the file forgets it
    assert "_run_parsed" not in first.session_state


def test_an_upload_is_read_in_the_servers_file_worker_not_in_the_page(monkeypatch):
    """Issue 37 rows 1 and 2: parsing ran in the page's script (a 120 KB file held the server for two minutes). It
    runs in the server's file worker now (sim/yourdata/reader.py): a reader broken in this process does not matter,
    and the 120 KB NaN file is read there at once (the NaN is that step's missing value, issue 42: with nothing else
    logged, one line says so)."""
    import sim.yourdata.reader as reader

    at = page("your_run.py")  # the example, read in this process and cached, and the worker started
    broken = {k: (lambda *a: pytest.fail("parsed in the page's process")) for k in reader.READERS}
    monkeypatch.setattr(reader, "READERS", broken)
    nan = '{"log_history":[{"step":1,"note":"' + "NaN" * 40_000 + '","loss":NaN}]}'
    at = upload(at, "nan.json", nan.encode())
    assert not at.exception and texts(at)[-1] == "nan.json: no step logs a metric these rules read (a reward, the " \
                                                 "loss, grad_norm, ...)"
    at = upload(at, "ok.csv", log_csv(["extra"]))
    assert not at.exception and not at.error and "File (CSV): ok.csv" in texts(at)


def test_a_run_with_only_reward_functions_shows_them_and_what_it_cannot():
    """Issue 37 row 4: "the player needs at least one chart"."""
    data = ("step,rewards/acc/mean\n" + "".join(f"{t},{0.3 + t / 100}\n" for t in range(1, 41))).encode()
    at = upload(page("your_run.py"), "funcs.csv", data)
    assert not at.exception and not at.error
    assert [c["title"] for c in charts(at)["run_charts"]] == ["Reward functions (rewards/<f>/mean)"]
    captions = [b["text"] for b in blocks(at, "caption")]
    assert any("Not drawn, the log lacks what they read: Reward (needs reward)" in t for t in captions)


# ---- Your prompts ---------------------------------------------------------------------------------------

def test_your_prompts_at_its_defaults_plans_the_example_pool():
    at = page("your_prompts.py")
    assert not at.exception and not at.error and not at.warning
    (metrics,) = blocks(at, "metrics")
    metrics = dict(metrics["items"])
    assert metrics["Prompts"] == "512" and metrics["Never solved (c = 0)"] == "6"
    (lines,) = [b for b in blocks(at, "fold") if b["summary"] == "Their lines (6)"]
    assert lines["open"] and lines["blocks"][0]["text"].startswith("line 200: 47+56=")
    assert [b.label for b in at.get("download_button")] == ["Every prompt at G = 8 (CSV)"]
    assert set(charts(at)["plan_charts"][i]["title"] for i in range(4)) == {
        "Groups that teach nothing, by group size", "Answers per batch of 64 prompts", "The pool's pass rates",
        "Base model's pass@k over these prompts"}
    # the toy on the pool computes in the browser (assets/js/toy_views.js pool_charts, the twin of sim's): a config
    toy = live_requests(at)["your_prompts"]
    assert toy["view"] == "your_prompts" and toy["config"]["n_prompts"] == 256 and toy["pool_size"] == 512
    assert toy["config"]["iterations"] == 200 and len(toy["config"]["difficulties"]) == 256


def pool_csv() -> bytes:
    rows = [f'"{h.replace(chr(34), chr(34) * 2)}",0,16' for h in HOSTILE]
    rows += ['"=cmd|\' /C calc\'!A0",16,16'] + [f"q{i},{i % 17},16" for i in range(60)]
    return ("prompt,correct,samples,notes\n" + "\n".join(r + ",x" for r in rows) + "\n").encode()


def test_an_uploaded_pool_is_planned_and_its_prompts_stay_plain(monkeypatch):
    import sim.toy

    def refused(*a, **k):
        raise AssertionError("a page ran the toy on the server")

    monkeypatch.setattr(sim.toy, "run_toy", refused)  # no page computes a toy run on the server
    monkeypatch.setattr(sim.toy, "expected_run", refused)
    at = upload(page("your_prompts.py", G=16), "pool.csv", pool_csv())
    assert not at.exception and not at.error
    listed = "\n".join(b["text"] for b in blocks(at, "code"))  # the prompts' lines: plain text to copy
    for h in ("<b>x</b>", "**x**", "[link](http://example.com)", "$x^2$", ":red[x]", "\\u202eevil",
              "=cmd|' /C calc'!A0"):
        assert h in listed, h
    assert "Note: columns ignored: notes" in texts(at)
    body = rendered(at)
    assert all(h not in body for h in HOSTILE)
    metrics = dict(blocks(at, "metrics")[0]["items"])
    assert metrics["Prompts"] == "67" and metrics["Never solved (c = 0)"] == f"{len(HOSTILE) + 4}"
    # the toy on this pool: one toy prompt per prompt, sent to this session's page only and computed there
    toy = live_requests(at)["your_prompts"]
    assert toy["config"]["n_prompts"] == 67 and toy["config"]["group_size"] == 16 and toy["pool_size"] == 67
    assert not [k for k in at.session_state if "toy" in str(k) and not str(k).endswith("your_prompts_toy")]  # no run


def test_a_pool_never_or_always_solved_says_what_the_page_cannot_show():
    """Issue 37 row 4: "expected a non-empty 1-D array"."""
    at = upload(page("your_prompts.py"), "extreme.csv", b"correct,samples\n" + b"0,8\n8,8\n" * 20)
    assert not at.exception and not at.error
    notes = blocks(at, "note")
    assert [n["tone"] for n in notes] == ["warning"] and "never solved (20) or always solved (20)" in notes[0]["text"]
    assert len(charts(at)["plan_charts"]) == 4


def test_a_bad_pool_says_which_line_and_field():
    at = upload(page("your_prompts.py"), "p.csv", b"prompt,correct,samples\na,3,8\nb,9,8\n")
    assert [e.value for e in at.error] == ["This file cannot be read:"]
    assert texts(at)[-1] == "p.csv line 3, field correct: 9 is more than samples = 8 (c > n)"
    huge = upload(page("your_prompts.py"), "wide.csv", ",".join(f"c{i}" for i in range(10**6)).encode())
    assert "line 1 is over 131,072 characters long" in texts(huge)[-1]
