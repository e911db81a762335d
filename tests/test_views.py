"""The views' declarations (sim/views/doc.py): each view's document holds the chapter's numbers, said in the words
both hosts show, and the declarations cannot drift between the hosts: the app (ui/view.py) and a lesson
(assets/js/doc.js, from the same declaration's manifest and the JavaScript twin proved equal to `show`) read the same
title, intro, controls, captions and questions. tests/test_one_view_browser.py opens every view in both."""

from __future__ import annotations

import numpy as np
import pytest

from sim.views import kl_clip, one_group, passk, std_scaling, training, wasted
from sim.views.catalog import NAMES, views
from sim.views.doc import (
    APP_ONLY,
    Ask,
    Caption,
    Charts,
    Columns,
    Formula,
    Live,
    Metrics,
    Note,
    Table,
    Text,
    texts,
    to_json,
)


def flat(blocks) -> list:
    """Every block, nested ones (an Ask's revealed part, Columns) in page order."""
    out = []
    for b in blocks:
        out.append(b)
        if isinstance(b, Ask):
            out += flat(b.then)
        elif isinstance(b, Columns):
            for c in b.columns:
                out += flat(c)
    return out


def metrics(blocks) -> dict[str, str]:
    return {item[0]: item[1] for b in flat(blocks) if isinstance(b, Metrics) for item in b.items}


def said(blocks) -> str:
    return " ".join(b.text for b in flat(blocks) if isinstance(b, (Caption, Note, Text)))


def chart(blocks, title: str):
    return next(c for b in flat(blocks) if isinstance(b, Charts) for c in b.charts if c.title == title)


def table(blocks, key: str) -> Table:
    return next(b for b in flat(blocks) if isinstance(b, Table) and b.key == key)


def question(blocks, key: str):
    return next(b.question for b in flat(blocks) if isinstance(b, Ask) and b.key == key)


# ---- the chapter's numbers, in each view's document ----

def test_wasted_groups_holds_34_vs_96_percent_and_the_table():
    doc = wasted.VIEW.document()
    m = metrics(doc)
    assert m["P(signal)"] == "33.7%" and m["P(signal) at G = 64"] == "96.2%"  # 1 - 0.95^8 - 0.05^8; 1 - 0.95^64
    assert question(doc, "wasted_g8").answer == 33.7 and question(doc, "wasted_g64").answer == 96.2
    rows = {r[0]: r for r in table(doc, "no_signal_table").rows}
    assert rows["0.05"][2] == "0.663" and rows["0.50"][1] == "0.125"  # 0.95^8 + 0.05^8; 2 * 0.5^4
    heat = chart(doc, "P(group teaches nothing) over p and G").traces[0]
    assert heat.z.shape == (101, 63) and heat.z[5, 6] == pytest.approx(0.95**8 + 0.05**8)  # p = 0.05, G = 8
    assert metrics(wasted.VIEW.document({"p": 0.5}))["P(signal)"] == "99.2%"  # 1 - 2 * 0.5^8


def test_one_group_holds_the_worked_example():
    doc = one_group.VIEW.document()
    m = metrics(doc)
    assert m["correct"] == "2 / 4" and m["mean(r)"] == "0.500" and m["std, population (chapter)"] == "0.500"
    assert m["std, sample (TRL)"] == "0.577" and m["loss at ratio 1"] == "0.0000"
    weights = table(doc, "weights_table").rows
    assert [r[1] for r in weights] == ["8 5 <eos>", "7 5 <eos>", "8 1 5 <eos>", "8 5 <eos>"]
    assert [r[3] for r in weights] == [0.9998, -0.9998, -0.9998, 0.9998]  # ±0.5 / (0.5 + 1e-4)
    assert [r[5] for r in weights] == [0.0833, -0.0833, -0.0625, 0.0833]  # A / (G |y|): 1/12, 1/16
    bias = {r[0]: r[1:] for r in table(doc, "length_bias_table").rows}
    assert bias["grpo"] == [-0.0833, -0.0625] and bias["dapo"] == [-0.0769, -0.0769]  # 1/13: the bias is gone
    credit = {r[2]: r[3] for r in table(doc, "credit_table").rows if r[0] == 0}
    assert credit == {"8": 0.1041, "7": -0.0833}  # 1/12 + 1/12 - 1/16, -1/12: the chapter's +0.10 / -0.083
    assert "8 collects +0.104, 7 collects -0.083" in said(doc)
    bars = chart(doc, "Advantage of each answer").traces
    assert list(bars[0].colors) == ["#2ca02c", "#d62728", "#d62728", "#2ca02c"] and bars[1].hatch == "/"
    counted = one_group.VIEW.document({"mode": "count", "c": 1})  # 1 of 4: std 0.433, A = 1.732, -0.577
    assert [r[3] for r in table(counted, "weights_table").rows] == [1.7317, -0.5772, -0.5772, -0.5772]
    assert "teaches nothing" in said(one_group.VIEW.document({"mode": "count", "c": 4}))
    too_many = one_group.VIEW.document({"mode": "count", "c": 9})
    assert "c = 9 is more than G = 4; using c = 4." in said(too_many)
    dr = one_group.VIEW.document({"loss": "dr_grpo", "scale": "none"})  # A_i / (G L_max) = -0.5 / 16
    assert table(dr, "weights_table").rows[1][5] == -0.0312


def test_kl_and_clipping_holds_the_k3_check_the_clip_and_the_sampling():
    doc = kl_clip.VIEW.document()
    m = metrics(doc)
    assert m["u = π_ref / π"] == "0.833" and m["k3"] == "0.0157" and m["d k3 / d log π = 1 − u"] == "0.167"
    assert question(doc, "k3").answer == 0.0157 and question(doc, "clip").answer == "no gradient: clipped"
    assert "ratio 1.250; with A > 0 and ε = 0.20 the token is clipped" in said(doc)  # 0.5 / 0.4 > 1.2
    assert question(kl_clip.VIEW.document({"eps": 0.3}), "clip").answer == "still pushed"  # 1.25 < 1.3
    w = {r[0]: r[1] for r in table(doc, "weights_at_token").rows}
    assert w["PPO clip, ε = 0.20"] == 0.0 and w["CISPO, cap 1 + ε high = 1.28"] == 1.25
    assert w["SAPO, τ = 1 / 1.05"] == 1.231 and w["GSPO, ratio ρ^(1/4), ε = 0.20"] == 1.057  # the chapter's token
    text = said(doc)
    assert "exact KL here is 0.0201" in text  # 0.6 log 1.2 + 0.4 log 0.8
    assert m["k3 with n = 16"].startswith("0.02")
    mc = chart(doc, "Estimates of KL against the number of sampled tokens")
    assert [t.name for t in mc.traces if hasattr(t, "mode")] == [f"{k}: mean of 400 estimates" for k in ("k1", "k2",
                                                                                                         "k3")]
    assert "not finite" in said(kl_clip.VIEW.document({"pi": 1.0}))


def test_passk_holds_the_estimator_and_the_two_problems():
    doc = passk.VIEW.document()
    assert metrics(doc)["pass@8 from n = 64, c = 5"] == "0.4990"
    assert metrics(passk.VIEW.document({"c": 0}))["pass@8 from n = 64, c = 0"] == "0.0000"
    one = passk.VIEW.document({"n": 4, "c": 1, "k": 2})  # 1 - C(3, 2) / C(4, 2) = 1 - 3/6
    assert metrics(one)["pass@2 from n = 4, c = 1"] == "0.5000"
    q = question(doc, "two_problems")
    assert q.answer == 0.737 and "0.981" in q.question  # the chapter's pass@64 0.981 -> 0.737
    assert "0.962 to 0.474" in said(doc)  # B's pass@64: 1 - 0.95^64, 1 - 0.99^64
    curves = chart(doc, "pass@k of problems A and B, and their mean")
    b_after = next(t for t in curves.traces if t.name == "problem B, after RL")
    assert b_after.y[-1] == pytest.approx(1 - 0.99**64) and curves.x_ticks == (1, 2, 4, 8, 16, 32, 64)
    lives = {b.key: b.request for b in flat(doc) if isinstance(b, Live)}
    assert lives["passk_toy"]["view"] == "passk_toy" and lives["sharpen"]["config"]["group_size"] == 8


def test_std_scaling_asks_exercise_15_4_and_sends_the_comparison():
    doc = std_scaling.VIEW.document()
    assert question(doc, "ex15_4").answer == 0.66  # one of 8 correct: 2 * 7 * (1/8) / (0.331 + 1e-4) / 8
    assert "1 correct gives 0.66 with std vs 0.22 without; 4 correct gives 1.00 vs 0.50" in said(doc)
    weights = chart(doc, "How hard a prompt is pushed, by its solve rate p").traces
    assert weights[0].y[5] > weights[1].y[5]  # a prompt at p = 0.05 counts more with the std
    (live,) = [b for b in flat(doc) if isinstance(b, Live)]
    assert live.request["view"] == "std" and live.request["config"]["n_seeds"] == 16
    sixteen = std_scaling.VIEW.document({"G": 16})
    assert "1 correct gives" not in said(sixteen) and len(chart(sixteen, "Mean |A| of a group with c of 16 correct")
                                                          .traces[0].y) == 17


def test_training_sends_the_pages_config_and_its_presets():
    (live,) = training.VIEW.document()
    assert live.request["config"] == training.VIEW.document()[0].request["config"]
    assert live.request["config"]["lr_w"] == 0.2 and live.request["config"]["n_seeds"] == 16
    assert live.request["columns"] == 2 and live.request["classroom_columns"] == 3
    for name, changes in training.PRESETS.items():
        cfg = training.VIEW.document(changes)[0].request["config"]
        assert {k: cfg[f] for k, f in (("lr_w", "lr_w"), ("beta", "beta"), ("scale", "scale")) if k in changes} == {
            k: v for k, v in changes.items() if k in ("lr_w", "beta", "scale")}, name


# ---- the declarations, checked once for the drift the issue found ----

def test_every_view_declares_its_page_and_its_lesson():
    names = [v.name for v in views()]
    assert tuple(names) == NAMES
    for v in views():
        assert v.title and v.what and v.intro is not None, v.name
        if v.lesson == "app":
            assert v.why_app_only and v.show is None, v.name  # the app draws it itself (an upload, the sandbox)
        else:
            assert v.show is not None and v.document(), v.name
        keys = {c.key for c in v.controls}
        for name, changes in v.presets.items():  # a preset sets the view's own controls, by their keys
            assert set(changes) <= keys, (v.name, name)


def test_a_lesson_reads_the_same_words_as_the_app():
    """Both hosts draw one document: what a lesson holds (to_json) keeps every title, caption and question the app
    shows, and the plain text of every formula and Markdown text."""
    for v in views():
        if v.show is None or v.lesson == "app":
            continue
        doc = v.document()
        app, lesson = texts(doc, host="app"), texts(doc, host="lesson")
        assert app == lesson, v.name  # app-only blocks (links, lab verdicts) carry no caption or question
        assert not any(isinstance(b, APP_ONLY) for b in flat(doc)) or v.name in ("wasted", "passk"), v.name
        kept = to_json(doc, charts=lambda b: {"charts": [c.title for c in b.charts]})

        def walk(bs):
            for b in bs:
                yield b
                for inner in ([b["then"]] if b["kind"] == "ask" else b.get("columns", []) if b["kind"] == "columns"
                              else []):
                    yield from walk(inner)

        blocks = list(walk(kept))
        assert [b["text"] for b in blocks if b["kind"] == "heading"] == app["headings"], v.name
        assert [b["question"]["question"] for b in blocks if b["kind"] == "ask"] == app["questions"], v.name
        for b, original in zip([b for b in blocks if b["kind"] in ("formula", "text")],
                               [b for b in flat(doc) if isinstance(b, (Formula, Text))], strict=True):
            assert b["text"] == original.text and set(b) == {"kind", "text"}  # no LaTeX, no Markdown in a lesson


def test_the_lesson_computes_what_the_app_draws():
    """A view computed in the page: its Live parts send configs only (no arrays), the same in both hosts."""
    for v in views():
        if v.show is None:
            continue
        for b in flat(v.document()):
            if isinstance(b, Live):
                config = b.request["config"]
                assert all(not isinstance(x, np.ndarray) for x in config.values()), v.name
