"""The views computed in the page (assets/js/toy_views.js, assets/js/pyformat.js) say and draw what sim/views says and
draws, word for word, for the same runs.

Python computes runs (sim.toy, sim.sharpen) on random settings of each page's controls, writes them into a folder
(each array as raw float64), and tests/js/views_harness.mjs runs the JavaScript views on them under node; every
chart (titles, names, colours, every array as the player receives it: float32), every caption and the predict
question must equal sim/views's. The formatter is checked first against Python's own format() on the cases where
JavaScript's toFixed/toPrecision and Python differ (ties, -0.0, tiny and huge numbers).
"""

from __future__ import annotations

import dataclasses
import json
import math
import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sim.player import build_payload, decode_array
from sim.sharpen import SharpenConfig, train
from sim.toy import ToyConfig, expected_run, run_toy
from sim.views import passk, std_scaling, training

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "tests" / "js" / "views_harness.mjs"
NODE = shutil.which("node")


def run_harness(tmp: Path, cases: dict) -> dict:
    if NODE is None:
        pytest.skip("node is not installed")
    (tmp / "cases.json").write_text(json.dumps(cases))
    done = subprocess.run([NODE, str(HARNESS), str(tmp)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


class Arrays:
    """Writes arrays into the case folder; JSON refers to them by file."""

    def __init__(self, folder: Path):
        self.folder, self.n = folder, 0

    def __call__(self, a) -> dict:
        a = np.ascontiguousarray(a, dtype="<f8")
        self.n += 1
        name = f"a{self.n}.f64"
        (self.folder / name).write_bytes(a.tobytes())
        return {"file": name, "shape": list(a.shape)}

    def history(self, h) -> dict | None:
        if h is None:
            return None
        return {"p": self(h.p), "accuracy": self(h.accuracy), "kl_exact": self(h.kl_exact), "entropy": self(h.entropy),
                "counts": self(h.counts), "metrics": {k: self(v) for k, v in h.metrics.items()}}


def resolved(charts, T: int = 1) -> list[dict]:
    """Python's charts as the player receives them (build_payload), each array reference replaced by its values."""
    payload = build_payload("x", T=T, charts=charts)
    arrays = [decode_array(a).ravel().tolist() for a in payload["arrays"]]
    out = []
    for c in payload["charts"]:
        traces = [{k: (arrays[v] if isinstance(v, int) and k in ARRAYS else v) for k, v in tr.items()}
                  for tr in c["traces"]]
        out.append({**c, "traces": traces})
    return out


ARRAYS = ("y", "x", "lo", "hi", "z", "categories")


def same(js: list[dict], py: list[dict]) -> None:
    assert len(js) == len(py)
    for a, b in zip(js, py, strict=True):
        assert {k: v for k, v in a.items() if k != "traces"} == {k: v for k, v in b.items() if k != "traces"}
        assert len(a["traces"]) == len(b["traces"]), a["title"]
        for ta, tb in zip(a["traces"], b["traces"], strict=True):
            assert ta.keys() == tb.keys(), (a["title"], ta.keys() ^ tb.keys())
            for k in ta:
                if isinstance(tb[k], list) and tb[k] and isinstance(tb[k][0], float):
                    np.testing.assert_array_equal(np.array(ta[k], dtype=np.float32), np.array(tb[k], dtype=np.float32),
                                                  err_msg=f"{a['title']}: {tb.get('name')} {k}")
                else:
                    assert ta[k] == tb[k], (a["title"], k)


# ---- the formatter ----
FORMAT_VALUES = [0.0, "-0", 0.005, 0.015, 0.025, 0.125, 0.375, 2.5, 3.5, -2.5, 0.5, 1.5, -0.001, 1e-5, 1e-4, 0.0001234,
                 9.9999, 9.99999, 99.995, 0.99995, 1234.5, 1234567.0, 1e16, 1e21, 1e22, 123456789012345678.0, 5e-324,
                 1 / 3, 2 / 3, 0.1, 0.2, 0.28, 5.0, 480.0, 1234565.0, 0.285, 0.935, 1.005, "nan", "inf", "-inf", -1e-7,
                 0.04, 0.001, 8.0, 64.0, 0.3 - 0.1, 1e100, 7.0e-8]
FORMAT_SPECS = [".2f", ".3f", ".1f", ".0f", ".0%", ".1%", ".2%", "g", ".3g", ".1g", ",.0f", ",.2f", ".4f", ".3e",
                "+.3f", "+.4f", "+.0f", "+g"]


def py_number(x):
    return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "-0": -0.0}.get(x, x) if isinstance(x, str) else x


def test_the_formatter_prints_what_python_prints(tmp_path):
    rng = random.Random(5)
    values = FORMAT_VALUES + [rng.choice([1, -1]) * rng.random() * 10 ** rng.randint(-6, 8) for _ in range(300)]
    values += [round(rng.random(), rng.randint(1, 4)) + 5 * 10 ** -rng.randint(2, 5) for _ in range(200)]  # near ties
    values += [k / 2**rng.randint(1, 12) for k in range(-40, 40)]  # exact binary ties
    cases = [[x, spec, "format"] for x in values for spec in FORMAT_SPECS] + [[x, "", "repr"] for x in values]
    got = run_harness(tmp_path, {"format": cases})["format"]
    want = [format(py_number(x), spec) if kind == "format" else str(float(py_number(x))) for x, spec, kind in cases]
    bad = [(x, spec, g, w) for (x, spec, _), g, w in zip(cases, got, want, strict=True) if g != w]
    assert not bad, bad[:10]


# ---- the views, on random settings ----
def random_training(rng: random.Random) -> dict:
    """URL values of a random Training dynamics setting, anywhere in the page's ranges (iterations kept short)."""
    from sim.views.controls import Choice, Flag, Num
    from sim.views.training import CONTROLS as TRAINING

    values = {}
    for spec in TRAINING:
        if isinstance(spec, Num):
            n = int(round((spec.hi - spec.lo) / spec.step))
            values[spec.key] = spec.snap(spec.lo + rng.randint(0, n) * spec.step)
            values[spec.key] = int(values[spec.key]) if spec.integer else values[spec.key]
        elif isinstance(spec, Choice):
            values[spec.key] = rng.choice(spec.options)
        elif isinstance(spec, Flag):
            values[spec.key] = rng.random() < 0.3
    values["T"] = rng.choice([50, 60, 120, 200])
    values["seeds"] = rng.choice([1, 2, 7, 16, 64])
    if rng.random() < 0.5:  # half the settings near the defaults: runs that learn, captions with every branch
        values.update(lr=0.2, lr_w=rng.choice([0.0, 0.2]), d_min=-2.0, d_max=7.0, mu=rng.choice([1, 8]))
    return values


def training_case(arrays: Arrays, values: dict, rng: random.Random) -> tuple[dict, list, dict | None] | None:
    from sim.views.controls import build_config, defaults
    from sim.views.training import CONTROLS as TRAINING

    try:
        cfg = build_config(ToyConfig, TRAINING, {**defaults(TRAINING), **values})
        run, exp = run_toy(cfg), expected_run(cfg)
    except ValueError:  # a setting that diverges: the page says so, no charts
        return None
    ppo_cfg = dataclasses.replace(cfg, loss_type="grpo", clip_eps_high=None)
    ppo = run_toy(ppo_cfg) if cfg.mu > 1 and ppo_cfg != cfg else None
    pinned = run_toy(dataclasses.replace(cfg, seed=cfg.seed + 1)) if rng.random() < 0.3 else None
    mine = expected_run(dataclasses.replace(cfg, n_seeds=1), advantage_table=(
        np.linspace(1, 0, cfg.group_size + 1), -np.linspace(0, 1, cfg.group_size + 1))) if (
        rng.random() < 0.2 and cfg.scale != "batch") else None
    big = rng.random() < 0.3
    label = "pinned (seed=1)"
    pin = None if pinned is None else (label, pinned)
    charts = training.training_charts(cfg, run, exp, pin, mine, big=big, ppo=ppo)
    case = {"kind": "training", "cfg": dataclasses.asdict(cfg), "run": arrays.history(run), "exp": arrays.history(exp),
            "ppo": arrays.history(ppo), "pinned": arrays.history(pinned), "pinned_label": label,
            "mine": arrays.history(mine), "big": big}
    return case, resolved(charts, cfg.iterations), training.hard_prompt_question(run)


def test_training_dynamics_in_the_page_equals_sim_views(tmp_path):
    rng = random.Random(26)
    arrays = Arrays(tmp_path)
    settings = [{}, *training.PRESETS.values()] + [random_training(rng) for _ in range(24)]
    cases, want = [], []
    for values in settings:
        made = training_case(arrays, values, rng)
        if made is not None:
            cases.append(made[0])
            want.append(made[1:])
    assert len(cases) >= 20
    got = run_harness(tmp_path, {"views": cases})["views"]
    for case, g, (charts, question) in zip(cases, got, want, strict=True):
        same(g["charts"], charts)
        assert g["question"] == question, case["cfg"]


def test_std_scaling_and_the_sharpening_toy_in_the_page_equal_sim_views(tmp_path):
    rng = random.Random(15)
    arrays = Arrays(tmp_path)
    cases, want = [], []
    for G, lr, seed in [(8, 0.2, 0), (2, 0.05, 3), (64, 2.0, 9999)] + [
            (rng.randint(2, 64), round(rng.randint(1, 40) * 0.05, 2), rng.randint(0, 9999)) for _ in range(3)]:
        runs = std_scaling.std_comparison(std_scaling.std_config(G, lr, seed))
        js_runs = {name: {**r, "accuracy": arrays(r["accuracy"]), "hard": arrays(r["hard"])}
                   for name, r in runs.items()}
        cases.append({"kind": "std", "runs": js_runs, "lr": lr})
        want.append((resolved(std_scaling.std_charts(runs)), list(std_scaling.std_words(runs, lr))))
    for G, T, seed in [(8, 100, 0), (2, 20, 1), (64, 500, 77), (rng.randint(2, 64), rng.randint(2, 50) * 10, 5)]:
        h = train(SharpenConfig(group_size=G, iterations=T, seed=seed))
        case = {"kind": "sharpen", "cfg": {"iterations": T, "k_eval": h.config.k_eval, "group_size": G, "seed": seed},
                "h": {"p": arrays(h.p), "pass_at_1": arrays(h.pass_at_1), "pass_at_k": arrays(h.pass_at_k),
                      "entropy": arrays(h.entropy)}}
        cases.append(case)
        want.append((resolved(passk.sharpen_charts(h)), passk.sharpen_caption(h)))
    p0, pT = passk.toy_p_before_after()
    cases.append({"kind": "toy_curves", "p0": arrays(p0), "pT": arrays(pT)})
    chart, caption = passk.toy_curves(p0, pT)
    want.append(([chart and resolved([chart])[0]], caption))
    got = run_harness(tmp_path, {"views": cases})["views"]
    for case, g, (charts, words) in zip(cases, got, want, strict=True):
        same(g["charts"], charts)
        said = g.get("words") or g.get("caption")
        assert said == words, case["kind"]


# ---- the views' documents (sim/views/*.py show, assets/js/views.js SHOW), on random settings of every control ----

def random_values(view, rng: random.Random) -> dict:
    """URL values of a random setting of `view`: every control anywhere in its range, a few picks."""
    from sim.views.controls import Choice, Flag, Num, Picks

    values = {}
    for spec in view.controls:
        if isinstance(spec, Num):
            n = int(round((spec.hi - spec.lo) / spec.step))
            v = spec.snap(spec.lo + rng.randint(0, n) * spec.step)
            values[spec.key] = int(v) if spec.integer else v
        elif isinstance(spec, Choice):
            values[spec.key] = rng.choice(spec.options)
        elif isinstance(spec, Flag):
            values[spec.key] = rng.random() < 0.3
        elif isinstance(spec, Picks):
            n = int(values[spec.count])
            values[spec.key] = sorted(rng.sample(range(1, n + 1), rng.randint(0, min(n, 6))))
    return values


def py_doc(blocks) -> list:
    """sim.views.doc.to_json of a document, each Charts block's payload resolved as the harness resolves JS's."""
    from sim.views.doc import chart_payload, to_json

    def walk(bs):
        out = []
        for b in bs:
            if b["kind"] == "charts":
                out.append({"kind": "charts", "key": b["key"], "charts": resolved_payload(b["payload"])})
            elif b["kind"] == "ask":
                out.append({**b, "then": walk(b["then"])})
            elif b["kind"] == "columns":
                out.append({**b, "columns": [walk(c) for c in b["columns"]]})
            else:
                out.append(b)
        return out

    return walk(to_json(blocks, charts=chart_payload))


def resolved_payload(payload: dict) -> list[dict]:
    arrays = [decode_array(a).ravel().tolist() for a in payload["arrays"]]
    def ref(tr, k, v):  # an array's index, or a value (a line's width is a number; a bar series' an array)
        return arrays[v] if isinstance(v, int) and (k in ARRAYS or (k == "width" and tr["kind"] == "barseries")) else v

    return [{**c, "traces": [{k: ref(tr, k, v) for k, v in tr.items()} for tr in c["traces"]]}
            for c in payload["charts"]]


def close(js, py, where: str = "") -> None:
    """JS's document equals Python's: the same blocks, keys and text; numbers to 1e-9 (arrays, sent as float32,
    to float32's rounding)."""
    if isinstance(py, dict):
        assert isinstance(js, dict) and js.keys() == py.keys(), (where, js.keys() ^ py.keys() if isinstance(js, dict)
                                                                 else js)
        for k in py:
            close(js[k], py[k], f"{where}.{k}")
    elif isinstance(py, (list, tuple)):
        assert isinstance(js, list) and len(js) == len(py), (where, js, py)
        if py and all(isinstance(x, float) for x in py) and len(py) > 4:  # an array: float32 on both sides
            np.testing.assert_allclose(np.array(js, dtype=float), np.array(py, dtype=float), rtol=2e-6, atol=1e-12,
                                       err_msg=where)
        else:
            for i, (a, b) in enumerate(zip(js, py, strict=True)):
                close(a, b, f"{where}[{i}]")
    elif isinstance(py, bool) or py is None or isinstance(py, str):
        assert js == py, (where, js, py)
    elif isinstance(py, (int, float)):
        assert isinstance(js, (int, float)) and not isinstance(js, bool), (where, js, py)
        assert abs(js - py) <= 1e-9 * max(abs(py), 1e-6), (where, js, py)
    else:
        raise AssertionError(f"{where}: unexpected {type(py).__name__}")


def test_the_views_documents_in_the_page_equal_sim_views(tmp_path):
    """Every view a lesson computes in the page (One group, Wasted groups, KL and clipping, pass@k, Std scaling,
    Training dynamics): the JavaScript twin's document equals sim's, block for block, on random settings."""
    from sim.views import kl_clip, one_group, passk, std_scaling, training, wasted
    from sim.views.controls import to_json as control_json

    rng = random.Random(30)
    cases, want = [], []
    for view, n in ((wasted.VIEW, 20), (one_group.VIEW, 60), (kl_clip.VIEW, 14), (passk.VIEW, 20),
                    (std_scaling.VIEW, 10), (training.VIEW, 10)):
        settings = [view.defaults()] + [{**view.defaults(), **random_values(view, rng)} for _ in range(n)]
        if view is one_group.VIEW:  # every loss type at the chapter's group, and count mode with c > G
            settings += [{**view.defaults(), "loss": lt} for lt in ("grpo", "bnpo", "dapo", "dr_grpo", "cispo",
                                                                    "sapo", "luspo", "vespo")]
            settings.append({**view.defaults(), "mode": "count", "c": 9, "G": 5})
        if view is kl_clip.VIEW:
            settings.append({**view.defaults(), "pi": 1.0})  # the Monte Carlo's note instead of its chart
        for values in settings:
            controls = [control_json(c) for c in view.controls]
            fields = {c["field"]: values[c["key"]] for c in controls}
            cases.append({"kind": "doc", "view": view.name, "fields": fields})
            want.append(py_doc(view.show(values)))
    got = run_harness(tmp_path, {"views": cases})["views"]
    for case, g, py in zip(cases, got, want, strict=True):
        close(g["doc"], py, f"{case['view']} {case['fields']}")


def test_your_prompts_toy_in_the_page_equals_sim_views(tmp_path):
    """The toy on a visitor's pool (Your prompts): pool_charts's twin, for pools of several sizes."""
    from sim.views.your_data import pool_charts

    rng = random.Random(27)
    arrays = Arrays(tmp_path)
    cases, want = [], []
    for P, pool_size in ((24, 24), (7, 512), (40, 40)):
        d = tuple(float(x) for x in np.sort(rng.choices(range(-9, 10), k=P)))
        cfg = ToyConfig(n_prompts=P, difficulties=d, n_seeds=rng.choice([1, 8]), iterations=rng.choice([50, 120]),
                        group_size=rng.choice([2, 8, 16]), seed=rng.randint(0, 99))
        run, exp = run_toy(cfg), expected_run(cfg)
        big = rng.random() < 0.5
        reduction = "the 512 prompts' rates in 7 quantiles" if P != pool_size else "one per prompt"
        cases.append({"kind": "pool", "cfg": dataclasses.asdict(cfg), "run": arrays.history(run),
                      "exp": arrays.history(exp), "reduction": reduction, "pool_size": pool_size, "big": big})
        want.append(resolved(pool_charts(cfg, run, exp, reduction, pool_size, big=big), cfg.iterations))
    got = run_harness(tmp_path, {"views": cases})["views"]
    for g, charts in zip(got, want, strict=True):
        same(g["charts"], charts)
