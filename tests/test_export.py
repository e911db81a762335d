"""sim/export.py: settings JSON, history CSV, and the TRL GRPOConfig snippet (checked against TRL itself)."""

import ast
import csv
import dataclasses
import io
import itertools
import json
import warnings

import pytest

from sim.export import rows_csv, settings_json, trl_grpo_config, trl_snippet, write_history
from sim.toy import ToyConfig, history_rows, run_toy


def test_chapter_settings_map_to_trl_fields():
    # DeepSeekMath: G = 64, beta = 0.04, std scaling on, one update per batch, clip 0.2.
    ex = trl_grpo_config(ToyConfig(group_size=64, beta=0.04, seed=3))
    assert ex.args == {
        "num_generations": 64,
        "per_device_train_batch_size": 64,
        "gradient_accumulation_steps": 24,  # the toy's 24 prompts per iteration
        "beta": 0.04,
        "scale_rewards": "group",
        "loss_type": "grpo",
        "num_iterations": 1,
        "epsilon": 0.2,
        "seed": 3,
        "use_bias_correction_kl": False,  # the chapter's plain k3
    }
    text = " ".join(ex.notes)
    assert "sample std (ddof = 1" in text and "reference model" in text


def test_engine_names_reach_the_snippet():
    ex = trl_grpo_config(ToyConfig(scale="batch", ddof=1, clip_eps_high=0.28, mu=2, baseline="loo",
                                   dynamic_sampling=True, lr=0.5))
    assert ex.args["scale_rewards"] == "batch" and ex.args["epsilon_high"] == 0.28 and ex.args["num_iterations"] == 2
    text = " ".join(ex.notes)
    assert "RLOO" in text and "dynamic sampling" in text and "learning_rate" in text
    assert "sample std" not in text  # ddof = 1 is already TRL's convention
    assert "learning_rate" not in ex.args  # the toy's step size is not an AdamW learning rate
    assert "reference model" not in text and "use_bias_correction_kl" not in ex.args  # beta = 0


def _snippet_kwargs(src: str) -> dict:
    call = next(n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Call))
    return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}


def _trl_accepts(ex, tmp_path):
    """Run the snippet's arguments through TRL 1.16.0's own GRPOConfig (the oracle)."""
    from trl import GRPOConfig

    kwargs = _snippet_kwargs(trl_snippet(ex))
    assert {k: v for k, v in kwargs.items() if k != "output_dir"} == ex.args
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GRPOConfig(**{**kwargs, "output_dir": str(tmp_path)}, report_to=[], use_cpu=True, bf16=False)


@pytest.mark.parametrize("G", range(2, 65))
def test_trl_accepts_every_group_size(G, tmp_path):
    """TRL refuses a generation batch that is not a multiple of num_generations (the bug the old snippet had
    at G = 16 and 64): with one group per micro-batch it always is."""
    cfg = _trl_accepts(trl_grpo_config(ToyConfig(group_size=G)), tmp_path)
    assert cfg.num_generations == G and cfg.generation_batch_size == 24 * G and cfg.steps_per_generation == 24


@pytest.mark.parametrize("G, scale, baseline, loss_type, beta",
                         list(itertools.product([2, 7, 64], ["group", "batch", "none"], ["mean", "loo", "none"],
                                                ["grpo", "bnpo", "dapo", "dr_grpo"], [0.0, 0.04])))
def test_trl_accepts_every_choice(G, scale, baseline, loss_type, beta, tmp_path):
    cfg = dataclasses.replace(ToyConfig(group_size=G, scale=scale, baseline=baseline, beta=beta))
    ex = trl_grpo_config(cfg)
    ex.args["loss_type"] = loss_type  # the toy has one token per answer; TinyLM sets loss_type itself
    trl = _trl_accepts(ex, tmp_path)
    assert (trl.num_generations, trl.scale_rewards, trl.loss_type, trl.beta) == (G, scale, loss_type, beta)
    assert trl.use_bias_correction_kl is (beta == 0)  # False (plain k3) whenever the KL term is on


def test_snippet_carries_notes_as_comments():
    src = trl_snippet(trl_grpo_config(ToyConfig(baseline="none")))
    assert "# Note: baseline none" in src
    ast.parse(src)


def test_settings_json_is_stable():
    s = {"G": 8, "beta": 0.04, "scale": "group", "baseline": "mean", "seed": 0}
    text = settings_json(s, page="training")
    assert json.loads(text) == {"schema": "grpo-playground/settings/v1", "page": "training", "settings": s}
    assert text == settings_json(dict(reversed(list(s.items()))), page="training")  # stable key order
    with pytest.raises(ValueError, match="setting 'x'"):
        settings_json({"x": [1, 2]}, page="p")


def test_rows_csv_columns_and_rows():
    rows = [{"iteration": 0, "accuracy": 0.5, "loss": None}, {"iteration": 1, "accuracy": 0.625, "loss": 1e-7}]
    text = rows_csv(rows)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["iteration", "accuracy", "loss"], ["0", "0.5", ""], ["1", "0.625", "1e-07"]]
    assert float(rows_csv([{"x": 1 / 3}]).splitlines()[1]) == 1 / 3  # full precision
    with pytest.raises(ValueError, match="empty"):
        rows_csv([])


def test_write_history_csv_and_json(tmp_path):
    h = run_toy(ToyConfig(iterations=3, n_prompts=2))
    rows = history_rows(h)
    write_history(rows, h.config, tmp_path / "h.csv")
    write_history(rows, h.config, tmp_path / "h.json")
    assert (tmp_path / "h.csv").read_text() == rows_csv(rows)
    doc = json.loads((tmp_path / "h.json").read_text())
    assert doc["config"]["group_size"] == 8 and len(doc["rows"]) == 4


def test_every_loss_setting_reaches_trls_own_grpo_config(tmp_path):
    # a config carrying every shared loss setting, off TRL's defaults: TRL 1.16.0's GRPOConfig takes each
    from sim.settings import grpo_setting

    @dataclasses.dataclass(frozen=True)
    class Every:
        group_size: int = 8
        n_prompts: int = 4
        seed: int = 0
        beta: float = grpo_setting("beta", 0.04)
        scale: str = grpo_setting("scale")
        baseline: str = grpo_setting("baseline")
        ddof: int = grpo_setting("ddof", 1)
        mu: int = grpo_setting("mu", 2)
        clip_eps: float = grpo_setting("clip_eps", 3e-4)
        clip_eps_high: float | None = grpo_setting("clip_eps_high", 4e-4)
        loss_type: str = grpo_setting("loss_type", "luspo")
        importance_sampling_level: str = grpo_setting("importance_sampling_level", "sequence")
        delta: float | None = grpo_setting("delta", 2.0)
        sapo_temperature_pos: float = grpo_setting("sapo_temperature_pos", 2.0)
        sapo_temperature_neg: float = grpo_setting("sapo_temperature_neg", 2.5)
        vespo_k_pos: float = grpo_setting("vespo_k_pos", 1.0)
        vespo_lambda_pos: float = grpo_setting("vespo_lambda_pos", 1.5)
        vespo_k_neg: float = grpo_setting("vespo_k_neg", 2.0)
        vespo_lambda_neg: float = grpo_setting("vespo_lambda_neg", 2.5)

    cfg = Every()
    ex = trl_grpo_config(cfg)
    trl_cfg = _trl_accepts(ex, tmp_path)
    assert trl_cfg.loss_type == "luspo" and trl_cfg.importance_sampling_level == "sequence"
    assert (trl_cfg.epsilon, trl_cfg.epsilon_high, trl_cfg.delta) == (3e-4, 4e-4, 2.0)
    for name in ("sapo_temperature_pos", "sapo_temperature_neg", "vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg",
                 "vespo_lambda_neg"):
        assert getattr(trl_cfg, name) == getattr(cfg, name), name
    # defaults stay out of the snippet, and what TRL would warn about becomes a note
    assert "sapo_temperature_pos" not in trl_grpo_config(ToyConfig()).args
    cispo = dataclasses.replace(cfg, loss_type="cispo", importance_sampling_level="token", clip_eps_high=None)
    assert any("ScaleRL" in n for n in trl_grpo_config(cispo).notes)
    assert any("only applies to the clipped losses" in n for n in trl_grpo_config(cispo).notes)


def test_the_pages_csv_is_built_on_click_from_the_config_alone():
    """The Training page's download callable (functools.partial(toy_history_csv, cfg)): a page lambda would keep
    the page's namespace alive after the session; the rows are iterations 0..T, means over seeds and every seed."""
    import functools

    from sim.export import toy_history_csv

    cfg = ToyConfig(iterations=6, n_seeds=3, group_size=4, seed=7)
    make = functools.partial(toy_history_csv, cfg)
    assert make.args == (cfg,) and not make.keywords
    rows = list(csv.DictReader(io.StringIO(make())))
    run = run_toy(cfg)
    assert len(rows) == cfg.iterations + 1 and "accuracy_seed2" in rows[0]
    assert [float(r["accuracy"]) for r in rows] == [float(a) for a in run.accuracy.mean(axis=1)]


@pytest.mark.integration
@pytest.mark.parametrize("flags, cfg", [
    (["--seed", "7"], ToyConfig(seed=7)),
    (["--seed", "3", "--n-seeds", "16", "--lr-w", "0.2", "--group-size", "16", "--iterations", "60", "--mu", "8",
      "--lr", "2", "--clip-eps-high", "0.28", "--dynamic-sampling"],
     ToyConfig(seed=3, n_seeds=16, lr_w=0.2, group_size=16, iterations=60, mu=8, lr=2.0, clip_eps_high=0.28,
               dynamic_sampling=True)),
])
def test_a_csv_exported_from_the_page_is_the_clis_byte_for_byte(flags, cfg, tmp_path):
    """`python -m sim toy ... --out FILE.csv` and the page's "Run history (CSV)" for that setting: the same file."""
    import subprocess
    import sys
    from pathlib import Path

    from sim.export import toy_history_csv

    out = tmp_path / "history.csv"
    done = subprocess.run([sys.executable, "-m", "sim", "toy", *flags, "--out", str(out)], capture_output=True,
                          text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == toy_history_csv(cfg).encode()


# ---- an export request is data from a browser: its values are the page's own, checked before any work ----------

REWRITTEN = {"G": 1024, "T": 5000, "seeds": 160, "mu": 64}  # an adversarial pass's websocket message (issue 43)


@pytest.mark.parametrize("values, needle", [
    ({"G": 1024}, "Group size G (G) = 1024 is not a value of this page's control (a number from 2 to 64)"),
    ({"T": 5000}, "(T) = 5000"), ({"seeds": 160}, "(seeds) = 160"), ({"mu": 64}, "(mu) = 64"),
    ({"G": 16.5}, "(G) = 16.5"), ({"G": True}, "(G) = True"), ({"G": "16"}, "(G) = '16'"),
    ({"G": float("nan")}, "(G) = nan"), ({"lr": 0.123}, "(lr) = 0.123"),  # off the slider's 0.05 steps
    ({"beta": 0.05}, "(beta) = 0.05"), ({"beta": True}, "(beta) = True"), ({"dyn": 1}, "(dyn) = 1"),
    ({"scale": "Group"}, "(scale) = 'Group'"), ({"n_seeds": 4}, "not a setting of this page: n_seeds"),
])
def test_a_value_the_pages_controls_cannot_hold_is_refused(values, needle):
    from sim.views.controls import check_values
    from sim.views.training import CONTROLS

    with pytest.raises(ValueError) as e:
        check_values(CONTROLS, values)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_every_value_a_page_offers_passes():
    """The defaults, every preset, both ends of every slider, every option and the largest picks: what a page can
    report is never refused (the check is the page's own range, not a narrower one)."""
    from sim.views import catalog
    from sim.views.controls import PICKS_MAX, Choice, Flag, Num, Picks, check_values

    for view in catalog.views():
        specs = view.controls
        assert check_values(specs, {}) == {s.key: s.default for s in specs}
        for preset in (view.presets or {}).values():
            check_values(specs, preset)
        for s in specs:
            tries = {Num: lambda s: (s.lo, s.hi, s.snap((s.lo + s.hi) / 3)), Choice: lambda s: s.options,
                     Flag: lambda s: (True, False), Picks: lambda s: ([], [1, PICKS_MAX])}[type(s)](s)
            for v in tries:
                check_values(specs, {s.key: v})


def test_a_rewritten_export_request_costs_no_run(monkeypatch):
    """ui/view.py's export callback, for the websocket message of issue 43 row 4 (28.8 s of server CPU at 40 seeds
    before): "This export cannot be made", and no toy run at all."""
    import types

    import sim.toy
    import ui.view
    from sim.views.controls import defaults
    from sim.views.training import VIEW, export

    def no_run(*_a, **_k):
        raise AssertionError("a run started for a request the page could not have sent")

    monkeypatch.setattr(sim.toy, "run_toy", no_run)
    state = {"view_training": {"action": {"kind": "csv", "values": {**REWRITTEN}, "id": 3}}}
    monkeypatch.setattr(ui.view, "st", types.SimpleNamespace(session_state=state))
    ui.view._export(VIEW, "view_training", export)
    out = state["_view_training_result"]
    assert out["filename"] == "error.txt" and out["show"] and out["id"] == 3
    assert out["text"].startswith("This export cannot be made: Group size G (G) = 1024 is not a value")
    monkeypatch.undo()  # in range: the run is made
    state = {"view_training": {"action": {"kind": "csv", "values": {"G": 4, "T": 50, "seeds": 1}, "id": 4}}}
    monkeypatch.setattr(ui.view, "st", types.SimpleNamespace(session_state=state))
    ui.view._export(VIEW, "view_training", export)
    out = state["_view_training_result"]
    assert out["filename"] == "grpo_toy_history.csv"
    assert len(out["text"].splitlines()) == 1 + 51  # the header, iterations 0..50
    assert out["values"] == {**defaults(VIEW.controls), "G": 4, "T": 50, "seeds": 1}  # the defaults fill the rest


def test_a_rewritten_lab_report_is_refused_before_the_students_code_runs(monkeypatch):
    """The setting a page reports for "Use my lab code" passes the same check (ui/view.py _values)."""
    import types

    import ui.view
    from sim.views.training import VIEW

    state = {"view_training": {"values": {**REWRITTEN}}}
    monkeypatch.setattr(ui.view, "st", types.SimpleNamespace(session_state=state))
    with pytest.raises(ValueError, match=r"\(G\) = 1024"):
        ui.view._values(VIEW, "view_training")
