"""The Streamlit app under streamlit.testing.v1.AppTest: every page runs, controls change the numbers,
Play / Step / Reset / New seed / Pin work, URL values are validated with a visible warning.

Fragments run inline on each AppTest run() (run_every never fires), so "Play" is checked by
running the script again while playing.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from sim.player.spec import COLORS
from sim.sharpen import SharpenConfig
from sim.toy import ToyConfig, expected_run, run_toy
from sim.views import training
from sim.views.one_group import one_group
from tests.fixtures.apptest import charts, copy_texts, live_requests, unescaped
from ui.controls import Choice, Flag, Num, parse_url_value, plain, share_query

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    "pages/one_group.py",
    "pages/training.py",
    "pages/wasted.py",
    "pages/std_scaling.py",
    "pages/passk.py",
    "pages/kl_clip.py",
]
TIMEOUT = 60


pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("full_error_details")]  # tests/conftest.py


def page(path: str, **query) -> AppTest:
    at = AppTest.from_file(str(ROOT / path), default_timeout=TIMEOUT)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def chart(at: AppTest, key: str, index: int = 0) -> dict:
    """Chart `index` of the charts drawn under `key` (the one chart spec, through the player component), its
    traces' arrays decoded."""
    drawn = charts(at)
    if key not in drawn:
        raise AssertionError(f"no chart {key!r} (there are {sorted(drawn)})")
    return drawn[key][index]


def trace(fig: dict, name: str) -> dict:
    return next(t for t in fig["traces"] if (t.get("name") or "").startswith(name))


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def caption_texts(at: AppTest) -> list[str]:
    return [unescaped(c.value) for c in at.caption]


# ---- every page -------------------------------------------------------------------------------


def test_every_page_gives_its_place_in_the_gate_back(monkeypatch):
    """app.py's gate (ui/work.py) holds a place per script run; each run gives it back when it ends, TinyLM's page
    too, which ends in st.stop() with its trainer off (its place once stayed taken: two visits froze the server)."""
    import sys
    import types

    from ui.server import Server

    server = Server(gated=True)
    monkeypatch.setitem(sys.modules, "app", types.SimpleNamespace(server=server))  # as `streamlit run app.py`
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception and server.gate.inside == 0
    for p in ("pages/tinylm.py", "pages/tinylm.py", "pages/wasted.py", "pages/training.py"):
        at.switch_page(p).run()
        assert not at.exception, p
        assert server.gate.inside == 0 and server.gate.waiting == 0, p


def test_home_lists_every_page():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    links = [el.proto.page for el in at.get("page_link")]
    for p in PAGES:
        assert Path(p).stem in links
    questions = [el.proto for el in at.get("page_link") if el.proto.label == "as a question"]
    assert len(questions) == 6 and all(q.query_string == "predict=1" for q in questions)
    assert "Exercise 15.4: std scaling" in " ".join(m.value for m in at.markdown)
    assert len(at.get("latex")) >= 1


@pytest.mark.parametrize("path", PAGES)
def test_page_runs_at_defaults(path):
    at = page(path)
    assert not at.exception, at.exception
    assert not at.error and not at.warning
    assert len(charts(at)) + len(live_requests(at)) >= 1
    assert not at.get("plotly_chart")  # every chart is the one chart spec, drawn by the shared JavaScript


# ---- One group --------------------------------------------------------------------------------


def test_one_group_worked_example_numbers_and_controls():
    at = page("pages/one_group.py")
    m = metrics(at)
    # default: the chapter's group, rewards 1, 0, 0, 1 -> mean 0.5, population std 0.5, sample std sqrt(1/3)
    assert m["correct"] == "2 / 4" and m["mean(r)"] == "0.500" and m["std, population (chapter)"] == "0.500"
    assert m["std, sample (TRL)"] == "0.577"
    assert m["loss at ratio 1"] == "0.0000"
    assert float(m["gradient norm ‖∂L/∂log π‖"]) == pytest.approx(0.5, abs=1e-3)  # sqrt(G)/G
    adv = chart(at, "adv_chart")
    np.testing.assert_allclose(trace(adv, "population")["y"], [1, -1, -1, 1], atol=1e-3)
    np.testing.assert_allclose(trace(adv, "sample")["y"], [0.866, -0.866, -0.866, 0.866], atol=1e-3)
    assert trace(adv, "population")["colors"] == [COLORS["good"], COLORS["bad"], COLORS["bad"], COLORS["good"]]
    weights = at.dataframe[0].value
    assert weights["response"].tolist() == ["8 5 <eos>", "7 5 <eos>", "8 1 5 <eos>", "8 5 <eos>"]
    np.testing.assert_allclose(weights["weight per token"], [1 / 12, -1 / 12, -1 / 16, 1 / 12], atol=2e-4)
    bias = at.dataframe[1].value.set_index("loss type")
    assert bias.loc["grpo"].tolist() == pytest.approx([-0.0833, -0.0625], abs=1e-4)  # the chapter's -0.083, -0.063
    assert bias.loc["dapo"].tolist() == pytest.approx([-1 / 13, -1 / 13], abs=1e-4)
    credit = at.dataframe[2].value
    first = credit[credit["position"] == 0].set_index("token")["weight"]
    assert first["8"] == pytest.approx(0.1042, abs=2e-4) and first["7"] == pytest.approx(-0.0833, abs=2e-4)
    shown = caption_texts(at)
    assert "8 collects +0.104, 7 collects -0.083" in " ".join(shown)
    # the captions are sim/views/one_group.py's, the lesson's too, and state what the charts show at the defaults
    words = one_group([1.0, 0.0, 0.0, 1.0])["captions"]
    said = [c for c in shown if c in words.values()]
    assert said == [words[k] for k in ("advantages", "loss", "length_bias", "credit")]
    pop, trl = (trace(adv, name)["y"] for name in ("population", "sample"))
    assert f"Right answers get {max(pop):+.3f}, wrong ones {min(pop):+.3f}" in said[0]
    assert f"smaller: {max(trl):+.3f} and {min(trl):+.3f}" in said[0] and "-0.0625 vs -0.0833" in said[2]

    at.radio(key="mode").set_value("count").run()
    at.slider(key="c").set_value(1).run()  # 1 of 4: std 0.433, A = 1.732, -0.577
    assert metrics(at)["std, population (chapter)"] == "0.433"
    np.testing.assert_allclose(
        trace(chart(at, "adv_chart"), "population")["y"], [1.732, -0.577, -0.577, -0.577], atol=1e-3
    )
    # the token table follows the controls: one right answer and three different wrong ones
    assert at.dataframe[0].value["response"].tolist() == ["8 5 <eos>", "7 5 <eos>", "8 1 5 <eos>", "8 6 <eos>"]
    at.radio(key="scale").set_value("none").run()  # no std: A = r - mean = 0.75, -0.25
    np.testing.assert_allclose(trace(chart(at, "adv_chart"), "population")["y"], [0.75, -0.25, -0.25, -0.25], atol=1e-9)
    assert float(metrics(at)["gradient norm ‖∂L/∂log π‖"]) == pytest.approx(0.2165, abs=1e-4)
    at.radio(key="loss").set_value("dr_grpo").run()  # A_i / (G L_max) = -0.25 / 16 for a wrong answer
    assert at.dataframe[0].value["weight per token"].tolist()[1] == pytest.approx(-0.25 / 16, abs=1e-4)


def test_one_group_pick_each_answer():
    at = page("pages/one_group.py")
    at.slider(key="G").set_value(8).run()
    at.get("button_group")[0].set_value([3]).run()
    m = metrics(at)
    assert m["correct"] == "1 / 8" and m["mean(r)"] == "0.125"
    y = trace(chart(at, "adv_chart"), "population")["y"]
    assert np.argmax(y) == 2 and y[2] == pytest.approx(0.875 / np.sqrt(0.125 * 0.875), abs=1e-3)


def test_one_group_all_equal_says_it_teaches_nothing():
    at = page("pages/one_group.py", mode="count", c="4")
    assert "teaches nothing" in " ".join(caption_texts(at))
    assert np.allclose(trace(chart(at, "adv_chart"), "population")["y"], 0)


# ---- Training dynamics ------------------------------------------------------------------------


def request(at: AppTest, key: str = "training") -> dict:
    """What the page sends the browser for view `key` (ui/live.py): a config, never a run."""
    return live_requests(at)[key]


def config(at: AppTest) -> ToyConfig:
    """The Training page's config, as the browser receives it."""
    return ToyConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in request(at)["config"].items()})


def test_training_sends_a_config_and_g_changes_it():
    at = page("pages/training.py")
    r = request(at)
    assert r["view"] == "training" and r["pinned"] is None and r["table"] is None and not r["predict"]
    assert config(at) == training.page_config({})  # the page's defaults: 16 seeds, 200 iterations
    assert len(json.dumps(r)) < 2000  # a config, no arrays: the browser computes the run
    at.slider(key="G").set_value(32).run()
    assert config(at).group_size == 32 and not at.exception


def test_training_charts_for_the_config_it_sends():
    """The charts the browser draws for the page's config are sim/views's (tests/test_js_views.py proves the JS
    equal): the opening view and the bars' rule."""
    cfg = config(page("pages/training.py"))
    run, exp = run_toy(cfg), expected_run(cfg)
    charts = {c.title: c for c in training.training_charts(cfg, run, exp)}
    acc = charts["Mean accuracy over the 24 prompts (G = 8)"]
    expected = next(tr for tr in acc.traces if getattr(tr, "name", "") == "expected (exact)")
    assert expected.reveal == "full"  # drawn in full at t = 0
    bars = charts["Each prompt's p_j after {t} iterations (seed 0)"].traces[0]
    cats = bars.categories  # (T+1, P)
    assert (cats[0] == 0).all()  # before any group is drawn
    k = run.counts[:, 0]  # (T, P): at every t >= 1 the colour is iteration t's group, mixed rewards or not
    np.testing.assert_array_equal(cats[1:] == 2, (k > 0) & (k < 8))
    caption = " ".join(c.caption for c in charts.values())
    H = run.entropy.mean(axis=1)
    assert f"Entropy first rises, {H[0]:.3f} → {H.max():.3f}" in caption and f"falls to {H[-1]:.3f}" in caption
    assert "Accuracy 0.24 → 0.94" in caption and "until iteration 116" in caption  # the default run, seed 0
    z = run.metrics["frac_reward_zero_std"].mean(axis=1)
    assert f"{z[0]:.0%} of groups at first" in caption and f"{z[-1]:.0%} at the end" in caption


def test_training_presets_pin_and_new_seed():
    at = page("pages/training.py")
    at.button(key="preset_No shared skill (lr_w = 0)").click().run()
    assert at.slider(key="lr_w").value == 0.0 and config(at).lr_w == 0.0
    at.button(key="preset_Chapter defaults").click().run()
    assert at.slider(key="lr_w").value == pytest.approx(0.2)
    at.button(key="pin").click().run()
    at.radio(key="beta").set_value(0.001).run()
    assert at.session_state.pinned["beta"] == 0.0
    pinned = request(at)["pinned"]
    assert pinned["label"].startswith("pinned (beta=0.0") and pinned["config"]["beta"] == 0.0
    assert config(at).beta == 0.001  # the browser runs both: the pinned config and the page's
    at.button(key="new_seed").click().run()
    assert at.slider(key="seed").value == config(at).seed != 0 and request(at)["pinned"]["config"]["seed"] == 0
    at.button(key="unpin").click().run()
    assert request(at)["pinned"] is None


def test_training_url_reaches_the_settings_the_chapter_names():
    at = page("pages/training.py", beta="0.001", lr_w="0", d_min="-4", d_max="10", T="50")
    assert not at.warning
    cfg = config(at)
    assert (cfg.beta, cfg.lr_w, cfg.d_min, cfg.d_max, cfg.iterations) == (0.001, 0.0, -4.0, 10.0, 50)


def test_training_std_off_changes_the_config_and_export():
    at = page("pages/training.py")
    at.radio(key="scale").set_value("none").run()
    assert config(at).scale == "none"
    assert any("scale_rewards='none'" in text for text in copy_texts(at))
    at.radio(key="scale").set_value("batch").run()  # every engine value reaches the snippet
    at.radio(key="baseline").set_value("loo").run()
    text = " ".join(copy_texts(at))
    assert "scale_rewards='batch'" in text and "RLOO" in text
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Run history (CSV)" in labels and "Settings (JSON)" in labels


def test_training_predict_mode_is_the_browsers():
    at = page("pages/training.py", predict="1")
    assert request(at)["predict"] is True  # the question comes from the run, in the browser (assets/js/predict.js)
    assert request(page("pages/training.py"))["predict"] is False


def test_training_with_a_student_whose_std_is_wrong(monkeypatch):
    at = _with_lab(monkeypatch, "pages/training.py", "no_eps")  # no eps: an all-equal group divides 0 by 0
    assert not at.exception
    assert any("cannot train with your advantages" in e.value for e in at.error)
    assert "NaN" in " ".join(t.value for t in at.text) and request(at)["table"] is None
    at = _with_lab(monkeypatch, "pages/training.py", "wrong_std")
    mine = np.array(request(at)["table"])  # (2, G + 1): the student's A for a right and a wrong answer, k = 0..8
    cfg = config(at)
    from sim.toy import advantage_table

    ref = np.array(advantage_table(cfg))
    assert mine.shape == (2, 9) and np.abs(mine - ref).max() > 1e-3  # the sample std: the browser trains with it
    run = expected_run(cfg, advantage_table=(mine[0], mine[1]))
    assert np.abs(run.accuracy[:, 0] - expected_run(cfg).accuracy[:, 0]).max() > 1e-3  # it visibly changes training


# ---- other pages react to their controls --------------------------------------------------------


def test_wasted_groups_chapter_numbers():
    at = page("pages/wasted.py")
    m = metrics(at)
    assert m["P(signal)"] == "33.7%" and m["P(signal) at G = 64"] == "96.2%"  # 1-0.95^8, 1-0.95^64
    at.slider(key="p").set_value(0.5).run()
    assert metrics(at)["P(signal)"] == "99.2%"  # 1 - 2 * 0.5^8


def test_std_scaling_exercise_numbers():
    at = page("pages/std_scaling.py")
    text = at.success[0].value
    assert "0.66" in text and "0.22" in text and "1.00" in text and "0.50" in text
    # the two comparisons: the browser runs them from the run with std this config names (16 seeds)
    r = request(at, "std_scaling")
    assert r["view"] == "std" and r["config"]["n_seeds"] == 16 and r["config"]["lr"] == 0.2
    from sim.views.std_scaling import std_comparison, std_words

    intro, caption = std_words(std_comparison(ToyConfig(**r["config"])), 0.2)
    assert "0.43 times the size" in intro and "at lr 0.47" in intro  # first step 0.168 / 0.394 of the std run's
    assert "With std: accuracy 0.944" in caption and "at iteration 116" in caption
    assert "same lr (grey): 0.625, never within 200 iterations" in caption
    assert "(orange): 0.942, at iteration 118" in caption and "here it is small" in caption
    weights = chart(at, "weight_chart")
    assert trace(weights, "with std")["y"][5] > trace(weights, "without std")["y"][5]  # p = 0.05 counts more
    assert "A prompt solved 5% of the time counts" in weights["caption"]
    at.slider(key="G").set_value(16).run()
    assert not at.success  # the G = 8 note only at G = 8
    assert len(trace(chart(at, "std_chart"), "with std")["y"]) == 17


def test_kl_clip_chapter_numbers():
    at = page("pages/kl_clip.py")
    m = metrics(at)
    assert m["u = π_ref / π"] == "0.833" and m["k3"] == "0.0157" and m["d k3 / d log π = 1 − u"] == "0.167"
    assert "1.250" in at.info[0].value and "is clipped" in at.info[0].value
    at.slider(key="eps").set_value(0.3).run()
    assert "still pushed" in at.info[0].value
    # the Monte Carlo view: k1, k2, k3 against the exact KL 0.6 log 1.2 + 0.4 log 0.8 = 0.0201
    mc = chart(at, "kl_mc_chart")
    names = [t["name"] for t in mc["traces"] if t["kind"] == "line"]
    assert names == [f"{k}: mean of 400 estimates" for k in ("k1", "k2", "k3")]
    assert mc["x_log"] and mc["hlines"][0][1] == "exact KL = 0.0201"
    caption = " ".join(caption_texts(at))
    import re

    assert "exact KL here is 0.0201" in caption
    negative = int(re.search(r"with one token it is negative (\d+)%", caption).group(1))
    assert abs(negative - 40) <= 5  # 40% of single tokens are "the other" one, +- the noise of 400 draws
    m = metrics(at)
    assert m["k3 with n = 16"].startswith("0.02") and at.metric[-1].delta == "negative in 0% of estimates"


def test_passk_per_problem_curves_and_captions():
    at = page("pages/passk.py")
    fig = chart(at, "chapter_passk_chart")
    b_after = trace(fig, "problem B, after RL")["y"]
    assert b_after[-1] == pytest.approx(1 - 0.99**64, abs=1e-7)  # 0.474: B's coverage collapses (float32, as sent)
    assert trace(fig, "problem A, after RL")["y"][-1] == pytest.approx(1.0, abs=1e-7)
    assert fig["x_ticks"] == [1, 2, 4, 8, 16, 32, 64] and fig["x_log"]
    text = " ".join(caption_texts(at))
    assert "0.962 to 0.474" in text
    toys = live_requests(at)  # the toy before/after and the sharpening toy: computed in the browser
    assert toys["passk_toy"]["view"] == "passk_toy"
    assert SharpenConfig(**{k: tuple(map(tuple, v)) if k == "success" else tuple(v) if isinstance(v, list) else v
                            for k, v in toys["sharpen"]["config"].items()}) == SharpenConfig()
    at.slider(key="sG").set_value(16).run()
    assert live_requests(at)["sharpen"]["config"]["group_size"] == 16
    from sim.sharpen import train
    from sim.views.passk import sharpen_caption, toy_curves, toy_p_before_after

    # what the browser writes for them (sim/views, which assets/js/toy_views.js equals)
    assert "no crossing" in toy_curves(*toy_p_before_after())[1]  # the 24-prompt toy: coverage grows too
    said = sharpen_caption(train(SharpenConfig()))
    assert "After 100 iterations p = (0.97, 0.03)" in said and "cross at k ≈ 2.9" in said


def test_passk_estimator_reacts():
    at = page("pages/passk.py")
    first = list(metrics(at).values())[0]
    at.slider(key="c").set_value(0).run()
    assert list(metrics(at).values())[0] == "0.0000"
    assert first != "0.0000"


# ---- URL state ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, used, words",
    [
        ("999", 64, "outside the allowed range"),
        ("abc", 4, "not a number"),
        ("7.4", 7, "not on the slider's steps of 1"),
        ("7.5", 8, "not on the slider's steps"),
        ("-3", 2, "outside"),
        ("1e308", 64, "outside"),
    ],
)
def test_invalid_url_value_warns_falls_back_and_fixes_the_address_bar(raw, used, words):
    at = page("pages/one_group.py", G=raw)
    assert not at.exception
    assert at.slider(key="G").value == used
    text = " ".join(w.value for w in at.warning)
    assert f"G={plain(raw)}" in text and words in text and f"using G = {used}" in text
    # the address bar holds the value shown (a default is left out), so a copied link reproduces the page
    assert at.query_params.get("G") == (None if used == 4 else str(used))


def test_off_step_float_snaps_with_a_warning():
    at = page("pages/training.py", lr="0.23")
    assert at.slider(key="lr").value == pytest.approx(0.25)
    assert any("lr=`0.23`" in w.value and "steps of 0.05" in w.value for w in at.warning)
    assert at.query_params.get("lr") == "0.25"


def test_valid_url_values_are_restored():
    at = page("pages/training.py", G="16", beta="0.04", scale="none", baseline="loo", seed="42", dyn="true")
    assert not at.warning
    assert at.slider(key="G").value == 16 and at.radio(key="beta").value == pytest.approx(0.04)
    assert at.radio(key="scale").value == "none" and at.radio(key="baseline").value == "loo"
    assert at.slider(key="seed").value == 42 and at.toggle(key="dyn").value is True
    cfg = config(at)
    assert (cfg.scale, cfg.baseline, cfg.group_size, cfg.dynamic_sampling) == ("none", "loo", 16, True)


def test_bad_choice_and_flag_from_url():
    at = page("pages/training.py", baseline="GRPO", dyn="maybe")
    text = " ".join(w.value for w in at.warning)
    assert "baseline=`GRPO`" in text and "dyn=`maybe`" in text
    assert at.radio(key="baseline").value == "mean" and at.toggle(key="dyn").value is False
    assert "baseline" not in at.query_params and "dyn" not in at.query_params  # the defaults, left out


def test_classroom_link_hides_controls_and_keeps_values():
    at = page("pages/training.py", G="16", hide="G,beta", classroom="1")
    assert not at.exception
    keys = [s.key for s in at.slider]
    assert "G" not in keys and "beta" not in keys and "lr" in keys
    assert config(at).group_size == 16  # hidden, but the link's value is used
    assert request(at)["big"] and request(at)["columns"] == 3  # presenter sizes in the browser too
    assert any("font-size" in h.proto.body for h in at.get("html"))


def test_parse_url_value_rules():
    g = Num("G", "G", 2, 64, 8, 1)
    assert parse_url_value(g, "16") == (16, None)
    assert parse_url_value(g, "1e9")[0] == 64
    assert parse_url_value(g, "nan")[0] == 8
    beta = Num("beta", "b", 0.0, 0.2, 0.0, 0.01)
    assert parse_url_value(beta, "0.04") == (0.04, None)
    assert parse_url_value(beta, "0.07")[1] is None  # 0.07 is on the grid, whatever 7 * 0.01 rounds to
    assert parse_url_value(beta, "-1")[0] == 0.0
    assert parse_url_value(beta, "0.045") == (0.04, "is not on the slider's steps of 0.01")  # half to even
    assert parse_url_value(Flag("std", "s", True), "FALSE") == (False, None)
    assert parse_url_value(Choice("b", "b", ("mean", "loo"), "mean"), "LOO")[0] == "mean"  # exact match only
    assert parse_url_value(Choice("d", "d", (0, 1), 0), "1") == (1, None)  # non-string options by their text


def test_share_query_leaves_defaults_out():
    specs = [Num("G", "G", 2, 64, 8, 1), Flag("std", "s", True), Num("beta", "b", 0.0, 0.2, 0.0, 0.01)]
    q = share_query(specs, {"G": 16, "std": True, "beta": 0.04}, hide=("std",), classroom=True)
    assert q == "G=16&std=true&beta=0.04&classroom=1&hide=std"


# ---- predict, then reveal; "use my lab code" ----------------------------------------------------


def _reveal(at: AppTest, key: str, guess) -> AppTest:
    if isinstance(guess, str):
        at.radio(key=f"predict-{key}-input").set_value(guess).run()
    else:
        at.number_input(key=f"predict-{key}-input").set_value(guess).run()
    return at.button(key=f"predict-{key}-reveal").click().run()


@pytest.mark.parametrize("path, key, guess, hidden", [
    ("pages/std_scaling.py", "ex15_4", 0.5, "std_chart"),
    ("pages/passk.py", "two_problems", 0.9, "chapter_passk_chart"),
])
def test_predict_mode_hides_the_chart_until_a_guess(path, key, guess, hidden):
    at = page(path, predict="1")
    assert not at.exception
    assert hidden not in charts(at)
    assert at.button(key=f"predict-{key}-reveal").disabled  # nothing to reveal before a guess
    at = _reveal(at, key, guess)
    assert hidden in charts(at)
    assert at.success or at.warning  # how close the guess was


def test_predict_mode_on_wasted_and_kl_clip():
    at = page("pages/wasted.py", predict="1")
    assert not at.metric and not charts(at)  # everything waits for the two guesses, asked one after the other
    _reveal(at, "wasted_g8", 30.0)
    assert not at.metric
    _reveal(at, "wasted_g64", 90.0)
    assert metrics(at)["P(signal)"] == "33.7%" and set(charts(at)) == {"wasted_heatmap", "wasted_curves"}
    at = page("pages/kl_clip.py", predict="1")
    assert "k3" not in metrics(at)
    _reveal(at, "k3", 0.02)
    assert metrics(at)["k3"] == "0.0157"
    _reveal(at, "clip", "still pushed")
    assert any("Not quite" in w.value for w in at.warning) and "is clipped" in at.info[0].value


LAB = ROOT / "tests" / "fixtures" / "lab"


def _with_lab(monkeypatch, path, lab_dir, **query) -> AppTest:
    monkeypatch.setenv("GRPO_LAB_DIR", str(LAB / lab_dir))
    at = page(path, **query)
    return at.toggle(key="use_lab").set_value(True).run()


def test_without_the_setting_there_is_no_switch(monkeypatch):
    monkeypatch.delenv("GRPO_LAB_DIR", raising=False)
    assert not [t for t in page("pages/one_group.py").toggle if t.key == "use_lab"]


def test_lab_switch_shows_a_match_and_a_mismatch(monkeypatch):
    at = _with_lab(monkeypatch, "pages/one_group.py", "correct")
    assert not at.exception and not at.warning
    assert [s.value for s in at.success if "group_advantages on this group" in s.value]
    assert trace(chart(at, "adv_chart"), "your group_advantages")["y"] == pytest.approx([1, -1, -1, 1], abs=1e-3)
    at = _with_lab(monkeypatch, "pages/one_group.py", "wrong_std")
    assert [w.value for w in at.warning if "group_advantages on this group" in w.value and "differs" in w.value]
    texts = " ".join(t.value for t in at.text)
    assert "sample std" in texts  # the lab's check names the mistake
    ys = trace(chart(at, "adv_chart"), "your group_advantages")
    assert ys["y"] == pytest.approx([0.866, -0.866, -0.866, 0.866], abs=1e-3) and "x" in ys["symbols"]


def test_lab_switch_survives_a_raising_and_a_hanging_student(monkeypatch):
    at = _with_lab(monkeypatch, "pages/one_group.py", "raises")  # group_advantages raises ValueError for G > 2
    assert not at.exception
    assert any("group_advantages" in e.value and "(raised)" in e.value for e in at.error)
    assert "groups larger than 2 are not supported yet" in " ".join(t.value for t in at.text)  # plain text
    assert metrics(at)["mean(r)"] == "0.500" and chart(at, "adv_chart")  # the page still draws
    at = _with_lab(monkeypatch, "pages/kl_clip.py", "hangs")  # k3_kl never returns
    assert not at.exception
    assert any("k3_kl" in e.value and "(timeout)" in e.value for e in at.error)
    assert chart(at, "kl_chart") and metrics(at)["k3"] == "0.0157"
