"""python -m sim lesson build: a live view's page carries the app's controls, presets and config for that view (the
page computes every setting: tests/test_js_views.py, tests/test_lesson_browser.py); a precomputed view stores
what the app's page shows; the command line refuses bad input in one line (exit 2) before computing anything."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from sim.lesson import cli
from sim.toy import ToyConfig
from sim.views import passk, std_scaling
from sim.views.controls import to_json
from sim.views.training import CONTROLS, PRESETS, page_config
from tests.fixtures.apptest import live_requests
from tests.fixtures.lesson import SMALL

ROOT = Path(__file__).resolve().parents[1]


def blocks(page: Path) -> dict[str, str]:
    """A view page's data: each setting's inline JSON block (<script type="application/json" id="ls-data-ID">)."""
    found = re.findall(r'<script type="application/json" id="ls-data-([^"]+)">(.*?)</script>',
                       page.read_text(encoding="utf-8"), flags=re.S)
    return dict(found)


def stored(out: Path, sid: str) -> dict:
    """The entry the lesson's page holds for setting `sid` (its view page's block, parsed)."""
    return json.loads(blocks(out / f"{sid.split('-', 1)[0]}.html")[sid])


@pytest.fixture
def lesson(small_lesson) -> Path:
    return small_lesson


@pytest.fixture
def exercises(exercise_lesson) -> Path:
    return exercise_lesson


def manifest(page: Path) -> dict:
    return json.loads(re.search(r'id="lesson-manifest">(.*?)</script>', page.read_text(encoding="utf-8"),
                                flags=re.S).group(1))


def test_a_live_view_carries_the_apps_controls_presets_and_config(lesson):
    """Training dynamics holds no setting: its page carries the app page's controls (every range and step), its
    presets, the config the controls set their fields on, and no data."""
    m = manifest(lesson / "training.html")
    assert m["live"] == "training" and m["view"] == "training"
    assert m["controls"] == [to_json(c) for c in CONTROLS]
    assert ToyConfig(**{k: v for k, v in m["fixed"].items()}) == page_config({})  # 16 seeds, lr_w 0.2
    assert {p["name"]: p["values"] for p in m["presets"]} == PRESETS
    assert not blocks(lesson / "training.html") and m["classroom"] == {"columns": 3} and m["columns"] == 2
    sharpen = manifest(lesson / "sharpen.html")
    assert [c["key"] for c in sharpen["controls"]] == ["sG", "sT", "seed"] and sharpen["fixed"]["group_size"] == 8
    std = manifest(lesson / "std_scaling.html")
    assert std["controls"] == [to_json(c) for c in std_scaling.CONTROLS] and std["fixed"]["n_seeds"] == 16
    assert std["static_key"] == "G" and sorted(map(int, std["static"])) == list(range(2, 65))  # every G of the page
    assert (lesson / "live.js").exists() and "lesson_live.js" in (lesson / "live.js").read_text(encoding="utf-8")


@pytest.mark.integration
def test_the_controls_are_worded_and_defaulted_as_the_page():
    """The lesson's controls are the app page's widgets: the same keys, labels, ranges, steps and defaults."""
    for path, controls in (("training.py", CONTROLS), ("std_scaling.py", std_scaling.CONTROLS),
                           ("passk.py", passk.CONTROLS)):
        at = AppTest.from_file(str(ROOT / "pages" / path), default_timeout=60).run()
        widgets = {w.key: w for w in [*at.slider, *at.radio, *at.toggle]}
        for c in controls:
            w = widgets[c.key]
            assert w.label == c.label and w.value == pytest.approx(c.default), (path, c.key)
            if hasattr(w, "min"):
                assert (w.min, w.max, w.step) == pytest.approx((c.lo, c.hi, c.step)), (path, c.key)
    sent = live_requests(AppTest.from_file(str(ROOT / "pages" / "training.py"), default_timeout=60).run())
    assert ToyConfig(**sent["training"]["config"]) == page_config({})  # the config the lesson starts from


def run(argv, capsys) -> tuple[int, str, str]:
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, message", [
    (["build"], "the following arguments are required: OUT"),
    (["build", "X", "--bogus"], "unrecognized arguments: --bogus"),
    (["build", "X", "--grid", "G=8,16"], "--grid is gone: Training dynamics, Std scaling and the sharpening toy "
                                         "compute every setting in the page"),
    (["build", "X", "--grid=G=8"], "--grid is gone"),
    (["build", "X", "--max-mb", "5"], "--max-mb is gone"),
    (["build", "X", "--max-settings", "5"], "--max-settings is gone"),
    (["build", "X", "--views", "nope"], "unknown view 'nope'"),
    ([], "choose a command"),
])  # fmt: skip
def test_bad_flags_are_one_line_and_exit_2_before_any_work(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: "), err
    assert message in err, err
    assert not (tmp_path / "X").exists()


def test_out_is_never_overwritten_without_force_and_never_a_foreign_folder(lesson, tmp_path, capsys):
    code, _, err = run(["build", str(lesson), *SMALL], capsys)
    assert code == 2 and "already exists; add --force" in err
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "thesis.txt").write_text("keep me")
    code, _, err = run(["build", str(mine), *SMALL, "--force"], capsys)
    assert code == 2 and "not a lesson this command wrote" in err and (mine / "thesis.txt").exists()
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run(["build", str(blocker / "out"), *SMALL], capsys)
    assert code == 2 and err.startswith(f"error: cannot write {blocker / 'out'}") and err.count("\n") == 1


def test_help_documents_every_flag(capsys):
    code, out, _ = run(["build", "--help"], capsys)
    assert code == 0
    for flag in ("--views", "--force", "--quiet", "OUT"):
        assert flag in out
    assert "--grid" not in out and "compute in the page" in " ".join(out.split())


@pytest.mark.integration
def test_the_sidebar_builds_the_lesson_once_and_offers_the_zip():
    """The build runs in a worker process of its own (the server's sessions never wait behind it), with its
    progress on the page, then the zip is offered."""
    import io
    import time
    import zipfile

    from ui.lesson_download import LessonZip
    from ui.server import Server

    server = Server.create()
    server._lesson_zip = job = LessonZip("wasted")  # a small lesson, the same path as the default one
    at = AppTest.from_file(str(ROOT / "pages" / "std_scaling.py"), default_timeout=60).run()
    at.button(key="lesson_build").click().run()
    assert job.started and server.lesson_zip is job
    deadline = time.monotonic() + 90
    while job.data is None and job.error is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert job.error is None and job.done == job.total > 1
    at.run()
    assert not at.exception and at.get("download_button")  # the zip is offered; the build button has gone
    assert not [b for b in at.button if b.key == "lesson_build"]
    names = zipfile.ZipFile(io.BytesIO(job.data)).namelist()
    assert {"grpo-lesson/index.html", "grpo-lesson/wasted.html", "grpo-lesson/lesson.js"} <= set(names)
    assert not [n for n in names if "/data/" in n]  # every setting's data is inline JSON in its view's page
    assert any(n.startswith("grpo-lesson/plotly-") for n in names)
    Server.create()  # the next tests get a fresh server


def test_the_table_views_hold_the_chapters_numbers(exercises):
    out = exercises
    wasted = stored(out, "wasted-p0.05_G8")
    assert wasted["payload"] is None and "signal 34% of the time with G = 8 but 96% with G = 64" in wasted["above"]
    rows = {r[0]: r for r in wasted["tables"][0]["rows"]}
    assert rows["0.05"][2] == "0.663" and rows["0.50"][1] == "0.125"  # 0.95^8 + 0.05^8; 2 * 0.5^4
    est = stored(out, "passk_estimator-c1")
    assert est["tables"][0]["rows"][1] == ["2", "0.0313"]  # 1 - C(63, 2) / C(64, 2) = 2/64 = 0.03125
    from sim.tinylm.figures import load_seed_figures

    first = load_seed_figures()["runs"][0]
    tiny = stored(out, "tinylm-default")["tables"][0]["rows"][0]
    assert tiny[:3] == [str(first["seed"]), f"{first['pass_at_1_before']:.3f}", f"{first['pass_at_1_after']:.3f}"]


def test_one_group_and_kl_views_hold_the_chapters_numbers(exercises):
    out = exercises
    ex = stored(out, "one_group-rewards1001_scalegroup_lossgrpo")
    adv, bias, credit = ex["tables"]
    assert [r[3] for r in adv["rows"]] == ["+0.9998", "-0.9998", "-0.9998", "+0.9998"]  # ±0.5 / (0.5 + 1e-4)
    assert [r[1] for r in adv["rows"]] == ["8 5 <eos>", "7 5 <eos>", "8 1 5 <eos>", "8 5 <eos>"]
    assert [r[6] for r in adv["rows"]] == ["+0.0833", "-0.0833", "-0.0625", "+0.0833"]  # A / (G |y|): 1/12, 1/16
    rows = {r[0]: r for r in bias["rows"]}
    assert rows["grpo"][1:] == ["-0.0833", "-0.0625"] and rows["dapo"][1] == rows["dapo"][2] == "-0.0769"  # 1/13
    first = {r[2]: r[3] for r in credit["rows"] if r[0] == "0"}
    assert first == {"8": "+0.1041", "7": "-0.0833"}  # 1/12 + 1/12 - 1/16, -1/12: the chapter's +0.10 / -0.083
    one = stored(out, "one_group-rewards1000_scalegroup_lossgrpo")["tables"][0]["rows"]
    assert [r[3] for r in one] == ["+1.7317", "-0.5772", "-0.5772", "-0.5772"]  # 0.75 / (0.433 + 1e-4): 1.732
    same = stored(out, "one_group-rewards1111_scalegroup_lossgrpo")
    assert {r[3] for r in same["tables"][0]["rows"]} == {"+0.0000"} and "teaches nothing" in same["above"]
    # the same numbers as the app's own computation for another loss type
    from sim.exercises import group_responses, per_token_weights

    mine = stored(out, "one_group-rewards1001_scalenone_lossdr_grpo")["tables"][0]["rows"]
    want = per_token_weights(group_responses([1, 0, 0, 1]), [1, 0, 0, 1], loss_type="dr_grpo", scale="none")
    assert [r[6] for r in mine] == [f"{w[0]:+.4f}" for w in want]
    kl = stored(out, "kl_clip-pi0.6_pi_ref0.5_eps0.2")
    assert "u = π_ref / π = 0.833, k3 = u − log u − 1 = 0.0157, d k3 / d log π = 1 − u = 0.167" in kl["above"]
    assert "ratio ρ = 1.250" in kl["below"] and "clipped, no more gradient" in kl["below"]
    assert "still pushed up" in stored(out, "kl_clip-pi0.6_pi_ref0.5_eps0.3")["below"]  # 1.25 < 1.3
    k = {r[0]: r for r in kl["tables"][0]["rows"]}
    assert k["1"][1:] == ["+0.0000"] * 3 and k["2"][3] == "+0.3069"  # k3(2) = 2 - log 2 - 1


def test_passk_problems_and_the_predict_questions(exercises):
    out = exercises
    two = stored(out, "passk_problems-default")
    assert "pass@1 rises 0.325 → 0.495, and pass@64 falls 0.981 → 0.737" in two["above"]  # the chapter's numbers
    rows = {r[0]: r for r in two["tables"][0]["rows"]}
    assert rows["1"][1:] == ["0.600", "0.980", "0.050", "0.010", "0.325", "0.495"]
    assert rows["64"][3:5] == ["0.962", "0.474"]  # 1 - 0.95^64, 1 - 0.99^64
    (q,) = two["predict"]
    assert q["kind"] == "number" and q["answer"] == 0.737 and q["answer_text"] == "0.737" and "0.981" in q["question"]
    from sim.passk import mean_pass_at_k_known_p
    from sim.views.passk import toy_p_before_after

    p0, pT = toy_p_before_after()  # what the app's page shows (there computed in the browser)
    toy = two["tables"][1]["rows"]
    assert [r[1:] for r in toy] == [[f"{mean_pass_at_k_known_p(p, [k])[0]:.3f}" for p in (p0, pT)]
                                    for k in (1, 2, 4, 8, 16, 32, 64)]
    kl = stored(out, "kl_clip-pi0.6_pi_ref0.5_eps0.2")
    k3, clip = kl["predict"]
    assert k3["answer"] == 0.0157 and k3["tolerance"] == 0.002
    assert clip["kind"] == "choice" and clip["options"] == ["still pushed", "no gradient: clipped"]
    assert clip["answer"] == "no gradient: clipped" and "ratio 1.250" in clip["explain"]  # 0.5 / 0.4 > 1.2
    assert stored(out, "kl_clip-pi0.6_pi_ref0.5_eps0.3")["predict"][1]["answer"] == "still pushed"  # 1.25 < 1.3
    (wasted,) = stored(out, "wasted-p0.05_G8")["predict"]
    assert wasted["answer"] == 33.7 and "G = 64: 96.2%" in wasted["explain"]  # 1 - 0.95^8 - 0.05^8


def _figure(entry: dict, title: str) -> dict:
    return next(f for row in entry["figures"] for f in row["figures"] if f["title"] == title)


def _trace(fig: dict, name: str) -> dict:
    """A trace with its x as a list (an evenly spaced x is stored as start, step, n)."""
    t = next(t for t in fig["traces"] if t["name"] == name)
    x = t["x"]
    return {**t, "x": x if isinstance(x, list) else [round(x["start"] + i * x["step"], 9) for i in range(x["n"])]}


def test_the_exercise_views_charts(exercises):
    """The charts whose x axis is not the iteration: Wasted groups' curves over p, KL and clipping's k1/k2/k3
    over u, clipped surrogates and gradient weights over the ratio, One group's advantage bars."""
    out = exercises
    wasted = _figure(stored(out, "wasted-p0.05_G8"), "P(no signal) against p")
    yours = _trace(wasted, "G = 8 (yours)")
    i = yours["x"].index(0.05)
    assert yours["y"][i] == pytest.approx(0.95**8 + 0.05**8, abs=1e-4) and yours["y"][0] == 1.0  # p = 0: all wrong
    assert [t["name"] for t in wasted["traces"]][:4] == ["G = 4", "G = 8", "G = 16", "G = 64"]
    assert wasted["vlines"] == [0.05] and wasted["y_range"] == [0, 1]
    kl = stored(out, "kl_clip-pi0.6_pi_ref0.5_eps0.2")
    est = _figure(kl, "KL estimators against u = π_ref / π")
    k3 = _trace(est, "k3")
    u = np.array(k3["x"])
    assert all(y >= 0 for y in k3["y"]) and k3["y"] == pytest.approx(u - np.log(u) - 1, abs=1e-4)
    mark = _trace(est, "your token: u = 0.833")
    assert mark["markers"] and mark["y"] == [0.0157]  # the chapter's check
    pos = _figure(kl, "Clipped surrogate, A > 0 (A = +1)")
    clipped = _trace(pos, "clipped")
    s = dict(zip(clipped["x"], clipped["y"], strict=True))
    assert s[1.0] == 1.0 and s[1.5] == 1.2 and s[0.5] == 0.5 and pos["bands"][0][:2] == [0.8, 1.2]
    ppo = _figure(kl, "PPO clip, ε = 0.20")
    assert _trace(ppo, "your token, A = +1")["y"] == [0.0] and ppo["vlines"] == [1.25]  # 1.25 > 1.2: silenced
    w = dict(zip(*(_trace(ppo, "A = +1")[k] for k in ("x", "y")), strict=True))
    assert w[1.1] == 1.1 and w[1.3] == 0.0  # rho * A inside the clip, 0 past it
    assert "PPO's clip gives weight 0.000 (silenced" in kl["figures"][2]["caption"]
    assert len(kl["figures"][2]["figures"]) == 6 and kl["figures"][2]["columns"] == 3
    bars = _figure(stored(out, "one_group-rewards1001_scalegroup_lossgrpo"), "Advantage of each answer")
    chapter, trl = bars["traces"]
    assert chapter["y"] == [0.9998, -0.9998, -0.9998, 0.9998]  # ±0.5 / (0.5 + 1e-4), as the table
    assert chapter["colors"] == ["#2ca02c", "#d62728", "#d62728", "#2ca02c"] and chapter["x"] == [1, 2, 3, 4]
    assert trl["y"][0] == pytest.approx(0.5 / (np.sqrt(1 / 3) + 1e-4), abs=1e-4) and trl["hatch"] == "/"


def test_std_scaling_asks_exercise_15_4(lesson):
    from sim.exercises import mean_abs_advantage

    entry = manifest(lesson / "std_scaling.html")["static"]["8"]  # G = 8's question and table, computed at build
    assert entry["question"]["answer"] == 0.66  # one of 8 correct: 2 * 7 * (1/8) / (0.331 + 1e-4) / 8
    rows = entry["tables"][0]["rows"]
    assert rows[4] == ["4", "1.000", "0.500"] and rows[1][1] == f"{float(mean_abs_advantage(1, 8)):.3f}"


def test_the_recorded_tinylm_run_replays_its_record(tmp_path):
    from sim.player.encode import decode_array
    from sim.tinylm import figures

    record = figures.load_run_record()
    assert record is not None and len(record["iterations"]) == 300  # StoryConfig() defaults
    out = tmp_path / "r"
    assert cli.main(["build", str(out), "--views", "tinylm_run", "--quiet"]) == 0
    entry = stored(out, "tinylm_run-default")
    pay = entry["payload"]
    assert pay["T"] == 300 and pay["charts"][0]["traces"][0]["x0"] == 1
    reward = decode_array(pay["arrays"][pay["charts"][0]["traces"][0]["y"]])
    np.testing.assert_allclose(reward, record["metrics"]["reward"], rtol=1e-6)  # float32 in the page
    held = decode_array(pay["arrays"][pay["charts"][1]["traces"][0]["y"]])  # (T+1,) pass@1 at the last check
    checks = dict(record["pass_at_1"])
    assert [held[i] for i in (0, 15, 300)] == [np.float32(checks[i]) for i in (0, 10, 300)]
    kl = decode_array(pay["arrays"][pay["charts"][3]["traces"][1]["y"]])
    logged = [(i, v) for i, v in zip(record["iterations"], record["metrics"]["kl"], strict=True) if v is not None]
    assert np.isnan(kl[0]) and all(kl[i] == np.float32(v) for i, v in logged)
    this, *presets = entry["tables"]
    assert this["rows"][-1] == ["64", f"{record['pass_at_k_before'][63]:.3f}", f"{record['pass_at_k_after'][63]:.3f}"]
    loaded = figures.load_preset_figures()
    presets, never = presets[: len(loaded)], presets[len(loaded) :]
    assert [t["title"].split(":")[0] for t in presets] == [f"Preset {n}" for n in loaded]
    first = loaded["chapter-lab"]["runs"][0]
    assert never[-1]["rows"][0] == [str(first["seed"]), ", ".join(first["never_solved_problems_before"]),
                                    ", ".join(first["never_solved_problems_after"]) or "none"]
    mean = loaded["default"]["curves"]["pass_at_k_after"]["mean"]
    assert presets[0]["rows"][0][2] == f"{mean[0]:.3f}" and presets[0]["caption"] == loaded["default"]["summary"]
    damaged = tmp_path / "run.json"
    for text in ("{", "[]", json.dumps({**record, "iterations": record["iterations"][1:]}),
                 json.dumps({**record, "metrics": {**record["metrics"], "reward": ["x"] * 300}})):
        damaged.write_text(text)
        assert figures.load_run_record(damaged) is None
