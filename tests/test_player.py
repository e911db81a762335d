"""The player's data without a browser (sim/player): array encoding, payload shapes and size, validation, the vendored
Plotly.js and KaTeX."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from sim.player import build_payload, decode_array, encode_array, payload_bytes
from sim.player.plotly_js import PLOTLY_JS, PLOTLY_JS_NAME, VERSION
from sim.player.spec import Band, Bars, Chart, Heatmap, Line
from sim.toy import ToyConfig, expected_run, run_toy, seed_band


def test_float_arrays_round_trip_as_float32_nan_kept():
    a = np.array([[0.0, 1e-7, 0.123456789], [np.nan, -3.5, 1e6]])
    enc = encode_array(a)
    assert enc["dtype"] == "f4" and enc["shape"] == [2, 3]
    assert len(enc["b64"]) == 4 * ((6 * 4 + 2) // 3)  # 24 bytes -> 32 base64 characters
    back = decode_array(enc)
    np.testing.assert_array_equal(back, a.astype(np.float32))  # exact float32, NaN in place
    assert np.isnan(back[1, 0])


def test_small_integers_travel_as_bytes_others_as_float32():
    cats = np.array([[0, 1, 2], [255, 0, 1]])
    enc = encode_array(cats)
    assert enc["dtype"] == "u1" and len(enc["b64"]) == 8  # 6 bytes
    np.testing.assert_array_equal(decode_array(enc), cats)
    assert encode_array(np.array([-1, 3]))["dtype"] == "f4"
    assert encode_array(np.array([300]))["dtype"] == "f4"
    np.testing.assert_array_equal(decode_array(encode_array(np.array([True, False]))), [1, 0])


def toy_charts(T: int, S: int) -> tuple[list[Chart], dict]:
    cfg = ToyConfig(iterations=T, n_seeds=S)
    run, exp = run_toy(cfg), expected_run(cfg)
    band = seed_band(run.accuracy)
    signal = np.zeros((T + 1, cfg.n_prompts), dtype=np.uint8)
    charts = [
        Chart("Mean accuracy", [
            Band(band["lo"], band["hi"], "band"),
            Line(band["mean"], "mean"),
            Line(exp.accuracy[:, 0], "expected", reveal="full", dash="dash"),
            Line(band["mean"] * 0.9, "pinned"),  # an overlay line, as "Pin this run" adds
        ]),
        Chart("Zero gradient", [
            Line(run.metrics["frac_all_wrong"].mean(axis=1), "all wrong", x0=1, stackgroup="z"),
            Line(run.metrics["frac_all_correct"].mean(axis=1), "all correct", x0=1, stackgroup="z"),
            Line(exp.metrics["expected_zero_frac"][:, 0], "expected", x0=1, reveal="full"),
        ]),
        Chart("p_j at {t}", [Bars(run.p[:, 0], categories=signal, colors=("grey", "blue"), names=("no", "yes"))]),
        Chart("p_j over time", [Heatmap(run.p[:, 0])]),
        Chart("KL and entropy", [Line(run.kl_exact.mean(axis=1), "KL"), Line(run.entropy.mean(axis=1), "entropy")]),
    ]  # fmt: skip
    return charts, {"run": run, "exp": exp, "band": band}


def test_payload_sends_each_series_once_with_its_reveal():
    T = 50
    charts, src = toy_charts(T, 4)
    pay = build_payload("k", T=T, charts=charts, plotly_url="/app/static/plotly.js")
    json.dumps(pay)  # plain JSON, nothing Streamlit would have to stringify
    assert pay["T"] == T and len(pay["charts"]) == 5
    acc = pay["charts"][0]["traces"]
    assert [tr["kind"] for tr in acc] == ["band", "line", "line", "line"]
    assert [tr.get("reveal") for tr in acc[1:]] == ["upto", "full", "upto"]
    np.testing.assert_allclose(decode_array(pay["arrays"][acc[1]["y"]]), src["band"]["mean"], rtol=1e-6)
    zero = pay["charts"][1]["traces"]
    assert decode_array(pay["arrays"][zero[0]["y"]]).shape == (T,) and zero[0]["x0"] == 1
    bars = pay["charts"][2]["traces"][0]
    assert decode_array(pay["arrays"][bars["y"]]).shape == (T + 1, 24)
    assert pay["arrays"][bars["categories"]]["dtype"] == "u1" and bars["x"] == list(range(24))
    heat = pay["charts"][3]["traces"][0]
    assert heat["z"] == bars["y"], "p_j is sent once for both the bars and the heatmap"
    assert len(pay["arrays"]) == 12  # 13 array references, one duplicate


def test_payload_at_500_iterations_64_seeds_is_far_below_1_mb():
    charts, _ = toy_charts(500, 64)
    size = payload_bytes(build_payload("k", T=500, charts=charts))
    # each series once: 9 lines/band sides of 501 floats + p (501 x 24) float32 + categories (501 x 24) bytes,
    # base64 (x 4/3): about 125 kB. A copy of the history per frame would be about T/2 = 250 times that.
    assert 100_000 < size < 160_000


@pytest.mark.parametrize(
    "chart, message",
    [
        (Chart("c", [Line(np.ones((3, 2)), "x")]), "1-D"),
        (Chart("c", [Line(np.ones(3), "x", reveal="later")]), "reveal"),
        (Chart("c", [Band(np.ones(3), np.ones(4), "b")]), "differ"),
        (Chart("c", [Bars(np.ones((5, 3)))]), "row for each iteration"),
        (Chart("c", [Bars(np.ones((11, 3)), categories=np.ones((11, 2), int))]), "shape"),
        (Chart("c", [Bars(np.ones((11, 3)), categories=np.full((11, 3), 2))]), "integers in"),
        (Chart("c", [Bars(np.ones((11, 3)), colors=("a", "b"))]), "names"),
        (Chart("c", [Heatmap(np.ones(11))]), "2-D"),
    ],
)
def test_bad_specs_fail_with_a_message(chart, message):
    with pytest.raises(ValueError, match=message):
        build_payload("k", T=10, charts=[chart])


def test_needs_iterations_and_charts():
    with pytest.raises(ValueError, match="at least 1 iteration"):
        build_payload("k", T=0, charts=[Chart("c", [Line(np.ones(2), "x")])])
    with pytest.raises(ValueError, match="at least one chart"):
        build_payload("k", T=5, charts=[])


def test_the_vendored_plotly_js_is_the_npm_bundle_of_the_packages_version():
    """assets/vendor/: byte for byte the file of plotly.js-cartesian-dist-min@4.1.1 (its sha256, taken from the
    tarball whose sha512 the npm registry lists), and the Plotly.js version the plotly Python package bundles, so
    Streamlit's charts and the player's cannot drift apart unnoticed."""
    from plotly.offline import get_plotlyjs_version

    head = PLOTLY_JS.read_bytes()[:200].decode()
    assert hashlib.sha256(PLOTLY_JS.read_bytes()).hexdigest() == (
        "79542150855a52c567260e3137095dbe2b744e6d702a5cabe67da246942fba7a")
    assert f"plotly.js (cartesian - minified) v{VERSION}" in head and get_plotlyjs_version() == VERSION
    assert PLOTLY_JS_NAME == f"plotly-cartesian-{VERSION}.min.js"


def test_the_vendored_katex_is_the_npm_packages_and_its_css_carries_every_font():
    """assets/vendor/katex/: KaTeX 0.19.1's katex.min.js and katex.min.css, and every woff2 font its CSS names,
    inlined into the one CSS both hosts load (a lesson from file:// fetches no font)."""
    import re

    from sim.player.katex import KATEX_DIR, VERSION, katex_css

    js = (KATEX_DIR / "katex.min.js").read_bytes()
    assert hashlib.sha256(js).hexdigest() == "fa140498b8cfc8302cbe5e7cb1bdbc1f952bc38b3fa258ede09e73edbf9a74bc"
    assert VERSION == "0.19.1" and b"0.19.1" in js
    named = set(re.findall(r"url\(fonts/([\w-]+\.woff2)\)", (KATEX_DIR / "katex.min.css").read_text()))
    assert named == {f.name for f in (KATEX_DIR / "fonts").iterdir()} and len(named) == 20
    css = katex_css()
    assert css.count("data:font/woff2;base64,") == 20 and "url(fonts/" not in css


# ---- what a caption reads off its chart: sim's read_value and the page's readValue, one reading ----
def _js_chart(c: Chart) -> dict:
    """The same chart as assets/js/chart_spec.js holds it (arrays {v, shape})."""
    from tests.fixtures.node import nd

    def arr(a):
        return None if a is None else nd(np.asarray(a, float))

    out = []
    for tr in c.traces:
        if isinstance(tr, Heatmap):
            out.append({"kind": "heatmap", "z": arr(tr.z), "x0": tr.x0, "x": arr(tr.x), "y": arr(tr.y)})
        else:
            out.append({"kind": "line", "name": tr.name, "y": arr(tr.y), "x0": tr.x0, "x": arr(tr.x),
                        "stackgroup": tr.stackgroup})
    return {"title": c.title, "traces": out}


def test_a_captions_reading_is_the_same_in_sim_and_in_the_page():
    """Every reading (first, last, max, min, argmax, above, x, cell, a heatmap's row, a stack's top) on the same charts:
    sim/player/spec.py read_value and assets/js/chart_spec.js readValue give the same number (None/null alike)."""
    from sim.player.spec import read_value
    from tests.fixtures.node import js

    rng = np.random.default_rng(3)
    y = rng.random(12)
    y[[0, 5]] = np.nan  # a gap where it was not logged, the first point included
    lines = Chart("lines", [Line(y, "a", x0=1), Line(rng.random(12), "b", x0=1, stackgroup="z"),
                            Line(rng.random(12), "c", x0=1, stackgroup="z"),
                            Line(np.linspace(0, 1, 9), "k", x=2.0 ** np.arange(9), reveal="full")])
    heat = Chart("heat", [Heatmap(rng.random((7, 3)))])
    grid = Chart("grid", [Heatmap(rng.random((5, 4)), x=np.linspace(0, 1, 5), y=np.arange(2, 6, dtype=float))])
    cases = [(lines, "a", at, {}) for at in ("first", "last", "max", "min", "argmax")]
    cases += [(lines, "a", "above", {"level": lv}) for lv in (0.5, 2.0)]
    cases += [(lines, "c", at, {"stack": True}) for at in ("first", "last", "max")] + [(lines, "k", "x", {"x": 63.0})]
    cases += [(heat, "heatmap", "above", {"row": 2, "level": 0.5}), (heat, "heatmap", "last", {"row": 1})]
    cases += [(grid, "heatmap", "cell", {"x": 0.5, "y": 4.0}), (grid, "heatmap", "cell", {"x": 0.26, "y": 2.4})]
    got = js([{"op": "call", "module": "chart_spec", "fn": "readValue", "args": [_js_chart(c), name, at, o]}
              for c, name, at, o in cases])
    for (c, name, at, o), page in zip(cases, got, strict=True):
        want = read_value(c, name, at, **o)
        assert (page is None and want is None) or page == pytest.approx(want, abs=1e-12), (c.title, name, at, o)
