"""TinyLM in TRL's GRPOTrainer (sim/tinylm/trl_*.py): parity with sim's model, verifier and evaluation, its reference
model, short TRL runs of every setting that changes TRL's code path (beta, mu, each loss type, scale_rewards, ...),
a mu = 2 run read through both of its logs and its live diagnosis, a 2-process accelerate run, and the CLI's
messages with and without TRL installed."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from sim.settings import LOSS_TYPES
from sim.tinylm.cli import main
from sim.tinylm.data import answer_text, prompt_tokens, response_text, rewards, split, verify
from sim.tinylm.grpo_train import GRPOConfig
from sim.tinylm.model import ModelConfig, build_model, response_logprobs
from sim.tinylm.story import StoryConfig, run_story
from sim.tinylm.tokens import EOS, MAX_NEW_TOKENS, NAMES, PAD, VOCAB_SIZE
from sim.tinylm.trl_record import FORMAT, VERSION, TrlRecordError, load_trl_run, record

ROOT = Path(__file__).resolve().parents[1]
HAVE_TRL = all(importlib.util.find_spec(m) for m in ("trl", "transformers", "accelerate", "datasets"))
needs_trl = pytest.mark.skipif(not HAVE_TRL, reason="TRL not installed (pip install -r requirements-trl.txt)")
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
TINY = ["--iterations", "2", "--prompts", "2", "-G", "4", "--eval-samples", "2", "--eval-every", "1"]


@pytest.mark.integration
def test_sim_paths_never_import_trl():
    code = ("import sys, sim.tinylm.cli, sim.tinylm.story, sim.tinylm.job, sim.tinylm.trl_run, sim.export, "
            "sim.yourdata.cli, sim.yourdata.diagnose\n"
            "bad = [m for m in ('trl', 'transformers', 'accelerate', 'datasets') if m in sys.modules]\n"
            "assert not bad, bad")  # fmt: skip
    subprocess.run([sys.executable, "-c", code], check=True, env=ENV, cwd=ROOT, timeout=120)


def test_missing_trl_exits_2_with_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "trl", None)  # `import trl` now raises ImportError(name="trl")
    monkeypatch.delitem(sys.modules, "sim.tinylm.trl_train", raising=False)
    assert main(["--trainer", "trl", *TINY]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: ") and "pip install -r requirements-trl.txt" in err
    assert "trl is not installed" in err


@pytest.mark.parametrize("argv, words", [
    (["--trainer", "tf"], "invalid choice"),
    (["--trainer", "trl", "-G", "1"], "group_size"),
    (["--trainer", "trl", "--out", "README.md/y.json"], "y.json cannot be written (Not a directory)"),
    (["--trainer", "trl", "--out", "/tmp"], "--out /tmp: /tmp is a directory"),
    (["--trainer", "trl", "--baseline", "loo"], "--baseline loo: TRL's GRPOTrainer always subtracts the group mean"),
    (["--trainer", "trl", "--eps", "0"], "--eps 0: TRL's GRPOTrainer adds a fixed 0.0001"),
    (["--trainer", "trl", "--rng", "philox"], "--rng philox: TRL's GRPOTrainer samples with its own generator"),
    (["--trainer", "trl", "--prompts", "3", "--max-seconds", "-1"], "--max-seconds must be > 0"),
    (["--max-seconds", "10"], "--max-seconds applies to --trainer trl only"),
    (["--keep-trainer-state", "state.json"], "--keep-trainer-state applies to --trainer trl only"),
    (["--trainer", "trl", "--keep-trainer-state", "/tmp"], "--keep-trainer-state /tmp: /tmp is a directory"),
    (["--diagnosis", "d.json"], "--diagnosis applies to --trainer trl only"),
    (["--trainer", "trl", "--diagnosis", "/tmp"], "--diagnosis /tmp: /tmp is a directory"),
])  # fmt: skip
def test_bad_input_one_line_before_trl(argv, words, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setitem(sys.modules, "trl", None)  # refused before TRL is needed
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: ") and words in err


# ---------------------------------------------------------------- parity with sim's model, verifier, evaluation


@needs_trl
def test_tokenizer_is_tinylms_vocabulary():
    from sim.tinylm.trl_model import build_tokenizer

    tok = build_tokenizer()
    assert len(tok) == VOCAB_SIZE and (tok.eos_token_id, tok.pad_token_id) == (EOS, PAD)
    assert tok.convert_ids_to_tokens(list(range(VOCAB_SIZE))) == NAMES
    problems = split()[1][:50]
    ids = tok([f"{a}+{b}=" for a, b in problems], add_special_tokens=False).input_ids
    assert torch.equal(torch.tensor(ids), prompt_tokens(problems))
    assert tok.decode([8, 5, EOS, PAD], skip_special_tokens=True) == "85"


@needs_trl
def test_wrapped_logits_and_trls_fused_logprobs_equal_tinylms():
    from trl.trainer.utils import add_fused_lm_head

    from sim.tinylm.trl_model import TinyLMForCausalLM

    model = build_model(ModelConfig(), seed=3)
    wrapped = TinyLMForCausalLM.wrap(model)
    ids = torch.randint(0, VOCAB_SIZE, (64, 10), generator=torch.Generator().manual_seed(0))  # (B, T)
    assert wrapped.dtype == torch.float64
    assert (wrapped(ids).logits - model(ids)[0]).abs().max() < 1e-10
    # What TRL's loss sees: its fused head's per-token log-probs (temperature 0.7) = sim's response_logprobs, to
    # float32 precision: TRL's kernel (trl/kernels/chunked_logprob.py) projects and normalises in float32 whatever
    # the model's dtype, so TRL's loss is float32 where sim's is float64.
    add_fused_lm_head(wrapped, temperature=0.7, outputs=("log_probs", "entropy"))
    labels = ids.clone()
    labels[:, :6] = -100
    out = wrapped(input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels, fused_lm_head=True)
    logp, entropy = response_logprobs(model, ids[:, :6], ids[:, 6:], temperature=0.7)  # (B, 4)
    assert out.log_probs.dtype == torch.float32
    assert (out.log_probs[:, -MAX_NEW_TOKENS:] - logp).abs().max() < 2e-6
    assert (out.entropy[:, -MAX_NEW_TOKENS:] - entropy).abs().max() < 2e-6
    with pytest.raises(ValueError, match="left-padded"):
        wrapped(ids, attention_mask=torch.cat([torch.zeros(64, 1), torch.ones(64, 9)], 1).long())


@needs_trl
def test_reward_function_is_sims_verifier():
    from sim.tinylm.trl_train import exact_match

    g = torch.Generator().manual_seed(1)
    problems = split()[0][torch.randint(0, 7800, (4000,), generator=g).numpy()]  # (B, 2)
    responses = torch.randint(0, VOCAB_SIZE, (4000, MAX_NEW_TOKENS), generator=g)  # any token, <pad> included
    for i, (a, b) in enumerate(problems[:2000]):  # half of them the right answer, the rest random (mostly wrong)
        r = [int(c) for c in answer_text(a, b)] + [EOS]
        responses[i, : len(r)] = torch.tensor(r)
    completion_ids = []  # as TRL hands them over: up to and including the first <eos>
    for r in responses.tolist():
        completion_ids.append(r[: r.index(EOS) + 1] if EOS in r else r)
    got = exact_match(prompts=None, completions=None, completion_ids=completion_ids, a=problems[:, 0].tolist(),
                      b=problems[:, 1].tolist())  # fmt: skip
    want = [verify(response_text(r), answer_text(a, b)) if EOS in r else 0.0
            for r, (a, b) in zip(responses.tolist(), problems, strict=True)]  # fmt: skip
    assert got == want == rewards(responses, problems).tolist()
    assert 1500 < sum(got) <= 2000  # the correct half (minus those a random <eos> did not end early) and no others


@needs_trl
# TRL 1.16's GRPOConfig sets gradient_checkpointing=True itself, which transformers 5 warns about on every bare
# GRPOConfig(...), the user's snippet included; the runs set activation_checkpointing=False (sim/tinylm/trl_train.py)
@pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")
def test_exported_snippet_builds_the_runs_config():
    """The GRPOConfig a run uses is sim/export.py's snippet (executed) plus the loop's fields, nothing overridden."""
    from trl import GRPOConfig as TrlConfig

    from sim.export import trl_grpo_config, trl_snippet
    from sim.tinylm.trl_train import loop_args, trl_args

    cfg = GRPOConfig(prompts_per_iter=6, group_size=4, beta=0.04, clip_eps_high=0.28, loss_type="dapo", mu=2)
    snippet = trl_snippet(trl_grpo_config(cfg))
    assert snippet.startswith("from trl import GRPOConfig\n")
    # The snippet a user copies, run for real. On a machine without a GPU TRL's default bf16=True refuses to start
    # ("Your setup doesn't support bf16/gpu"), so GRPOConfig is bound to TRL's with this machine's two settings.
    scope = {"GRPOConfig": functools.partial(TrlConfig, use_cpu=True, bf16=False)}
    exec(snippet.removeprefix("from trl import GRPOConfig\n"), scope)
    run = TrlConfig(**trl_args(cfg, "grpo-out", num_processes=2))
    for key in trl_grpo_config(cfg).args:
        if key != "gradient_accumulation_steps":
            assert getattr(run, key) == getattr(scope["config"], key), key
    assert scope["config"].gradient_accumulation_steps == 6 and run.gradient_accumulation_steps == 3
    assert (run.max_steps, run.bf16, run.max_completion_length) == (cfg.iterations * 2, False, MAX_NEW_TOKENS)
    with pytest.raises(ValueError, match="multiple of the number of processes"):
        loop_args(GRPOConfig(prompts_per_iter=5), num_processes=2)


@needs_trl
def test_trls_reference_model_is_the_policy(tmp_path):
    """beta > 0: GRPOTrainer builds its reference with create_model_from_path(get_config_model_id(config)), as it
    does here (trl/trainer/grpo_trainer.py, TRL 1.16.0). TinyLM's wrapper had an empty name (TRL refused it), and
    from_pretrained left the causal mask, a buffer no checkpoint holds, uninitialised (logits 18 apart)."""
    from trl.trainer.utils import create_model_from_path, get_config_model_id

    from sim.tinylm.trl_model import TinyLMForCausalLM, save_as_reference

    policy = TinyLMForCausalLM.wrap(build_model(ModelConfig(), seed=3))
    assert get_config_model_id(policy.config) == ""
    save_as_reference(policy, str(tmp_path / "reference"))
    ref = create_model_from_path(get_config_model_id(policy.config), dtype=policy.dtype,
                                 attn_implementation=policy.config._attn_implementation, trust_remote_code=False)
    assert type(ref) is TinyLMForCausalLM and ref.dtype == torch.float64
    ids = torch.randint(0, VOCAB_SIZE, (64, 10), generator=torch.Generator().manual_seed(0))  # (B, T)
    assert torch.equal(ref(ids).logits, policy(ids).logits)
    assert ref.tinylm.blocks[0].attn.causal.equal(torch.ones(10, 10, dtype=torch.bool).tril())


def test_recorded_reward_per_iteration_with_mu_2():
    """With mu = 2 TRL logs the reward on the first optimizer step of each iteration only (the one that generated
    its batch): the record's reward is that value, not half of it (the old sum over mu steps / mu)."""
    summary = {"config": {"grpo": {"mu": 2}}, "iterations": 2, "exact_pass_at_1": [[0, 0.5], [2, 0.6]],
               "pass_at_1_before": 0.5, "pass_at_1_after": 0.6, "pass_at_k_after": [0.6, 0.9], "eval_samples": 2,
               "grpo_seconds": 1.0, "num_processes": 1, "trl_config": {"output_dir": "x"},
               "trl_log": [{"step": 1, "reward": 0.25, "loss": 0.0}, {"step": 2, "loss": 0.1},
                           {"step": 3, "reward": 0.75, "loss": 0.0}, {"step": 4, "loss": 0.2}]}  # fmt: skip
    assert record(summary)["reward"] == [0.25, 0.75]
    summary["trl_log"] = summary["trl_log"][1:]  # iteration 1 without its reward: refused, not averaged as 0
    with pytest.raises(TrlRecordError, match="iteration 1 logs no reward"):
        record(summary)


# ---------------------------------------------------------------- real runs


@pytest.mark.integration
@needs_trl
def test_short_trl_run_summary_and_metrics(tmp_path):
    from sim.tinylm.trl_run import trl_story

    cfg = StoryConfig(grpo=GRPOConfig(iterations=2, prompts_per_iter=2, group_size=4, eval_every=1), eval_samples=2)
    res = trl_story(cfg)
    sim = run_story(StoryConfig(grpo=GRPOConfig(iterations=0), eval_samples=2))
    assert set(sim) <= set(res) and res["trainer"] == "trl" and res["iterations"] == 2
    # the same evaluation: the SFT model's pass@k from the same random stream, and its exact pass@1
    assert res["pass_at_k_before"] == sim["pass_at_k_before"]
    assert res["exact_pass_at_1"][0] == sim["exact_pass_at_1"][0]
    assert [it for it, _ in res["exact_pass_at_1"]] == [0, 1, 2]
    # TRL's metric names, one row per optimizer step
    log = res["trl_log"]
    assert [row["step"] for row in log] == [1, 2]
    for row in log:
        for name in ("reward", "reward_std", "frac_reward_zero_std", "entropy", "loss", "grad_norm",
                     "completions/mean_length", "clip_ratio/region_mean", "rewards/exact_match/mean"):  # fmt: skip
            assert np.isfinite(row[name]), name
        assert row["reward"] == row["rewards/exact_match/mean"] and row["reward"] in {k / 8 for k in range(9)}
    assert log[1]["grad_norm"] > 0 and res["ranks"][0]["weights_sha256"] != res["start_weights_sha256"]
    # the recorded-run asset from this summary reads back with the same curves
    path = tmp_path / "run.json"
    path.write_text(json.dumps(record(res)))
    run = load_trl_run(path)
    assert run["iterations"] == [1, 2] and run["reward"] == [row["reward"] for row in log]
    assert run["pass_at_1"] == res["exact_pass_at_1"] and run["pass_at_1_after"] == res["pass_at_1_after"]


# Each setting changes the code TRL runs (trl/trainer/grpo_trainer.py, TRL 1.16.0); every other GRPOConfig field the
# bridge passes (epsilon, seed, the loop's) only changes a number. lr 3e-3 without warmup moves a 4-prompt batch far
# enough in one step for the second pass of mu = 2 to clip.
PATH_SETTINGS = {
    "beta": {"beta": 0.04},  # a reference model, the k3 term in the loss, the kl metric
    "mu2": {"mu": 2},  # num_iterations: old log-probs kept, a batch reused, the clip can act
    "beta_mu2": {"beta": 0.04, "mu": 2},
    **{f"loss_{t}": {"loss_type": t} for t in LOSS_TYPES if t != "grpo"},  # grpo: the default, in every other run
    "scale_batch": {"scale": "batch"},
    "scale_none": {"scale": "none"},
    "sequence_mu2": {"importance_sampling_level": "sequence", "mu": 2},
    "clip_higher_mu2": {"loss_type": "dapo", "clip_eps_high": 0.28, "mu": 2},
    "cispo_mu2": {"loss_type": "cispo", "clip_eps_high": 5.0, "mu": 2},
    "sapo_mu2": {"loss_type": "sapo", "mu": 2},
    "vespo_mu2": {"loss_type": "vespo", "mu": 2},
    "loop": {"lr_schedule": "constant", "weight_decay": 0.01, "max_grad_norm": 0.0, "temperature": 0.7},
}
CLIP_METRIC = {"cispo": "cispo_clip_ratio", "vespo": "vespo/phi_seq_mean", "sapo": None}  # else clip_ratio/*


@pytest.mark.integration
@needs_trl
@pytest.mark.parametrize("name", PATH_SETTINGS)
def test_every_setting_that_changes_trls_path_trains(name):
    from sim.tinylm.trl_run import trl_story

    grpo = GRPOConfig(iterations=3, prompts_per_iter=4, group_size=4, warmup=0, lr=3e-3, eval_every=3,
                      **PATH_SETTINGS[name])  # fmt: skip
    res = trl_story(StoryConfig(grpo=grpo, eval_samples=2), quiet=True)
    log, mu = res["trl_log"], grpo.mu
    assert res["ranks"][0]["weights_sha256"] != res["start_weights_sha256"]  # the parameters changed
    assert {k: res["trl_config"][k] for k in ("beta", "num_iterations", "loss_type", "scale_rewards")} == \
        {"beta": grpo.beta, "num_iterations": mu, "loss_type": grpo.loss_type, "scale_rewards": grpo.scale}
    # one entry per optimizer step; the rewards on the step that generated them, one step in mu
    assert [row["step"] for row in log] == list(range(1, 3 * mu + 1))
    assert [row["step"] for row in log if "reward" in row] == list(range(1, 3 * mu + 1, mu))
    assert (res["optimizer_steps"], res["generation_steps"], res["iterations"]) == (3 * mu, 3, 3)
    assert res["run_settings"]["optimizer_steps_per_generation"] == mu and res["run_settings"]["mu"] == mu
    for row in log:
        assert all(v is None or np.isfinite(v) for v in row.values()), row
    if grpo.beta > 0:
        kl = [row["kl"] for row in log]
        assert all(np.isfinite(kl)) and min(kl) >= 0 and max(kl) > 0
        assert kl[0] < 1e-6  # before the first update the policy is the reference: k3 = 0
    else:
        assert not any("kl" in row for row in log)
    clip = CLIP_METRIC.get(grpo.loss_type, "clip_ratio/region_mean")
    if clip is not None:
        assert all(clip in row for row in log)  # the loss's metrics on every step, the reused ones included
    if mu > 1 and clip == "clip_ratio/region_mean":
        assert log[0][clip] == 0  # the first pass over a batch: ratio 1, the clip is inert
        assert max(row[clip] for row in log[1::mu]) > 0  # the second pass: the ratio left 1 and the clip acts


@pytest.fixture(scope="module")
def mu2_run(tmp_path_factory):
    """One real run with mu = 2 through the CLI: its --json summary, the trainer_state.json it keeps, the
    diagnosis file the callback kept, and what it printed on stderr."""
    if not HAVE_TRL:
        pytest.skip("TRL not installed (pip install -r requirements-trl.txt)")
    d = tmp_path_factory.mktemp("mu2")
    paths = {k: d / f"{k}.json" for k in ("summary", "state", "diagnosis")}
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        rc = main(["--trainer", "trl", "--iterations", "6", "--prompts", "4", "-G", "4", "--mu", "2", "--warmup", "0",
                   "--lr", "3e-3", "--eval-samples", "2", "--eval-every", "6", "--json", "--out", str(paths["summary"]),
                   "--keep-trainer-state", str(paths["state"]), "--diagnosis", str(paths["diagnosis"])])  # fmt: skip
    assert rc == 0, err.getvalue()
    return {k: json.loads(p.read_text()) for k, p in paths.items()} | {"paths": paths, "stderr": err.getvalue()}


@pytest.mark.integration
def test_mu2_summary_and_trainer_state_say_the_same(mu2_run):
    summary, state = mu2_run["summary"], mu2_run["state"]
    # the same entries: one per optimizer step (12), the rewards on the 6 that generated a batch
    assert summary["trl_log"] == [e for e in state["log_history"] if "train_runtime" not in e]
    assert [e["step"] for e in summary["trl_log"] if "reward" in e] == [1, 3, 5, 7, 9, 11]
    assert (state["global_step"], summary["optimizer_steps"], summary["generation_steps"]) == (12, 12, 6)
    # the same settings, in the summary and in the trainer_state.json (stateful_callbacks, as a checkpoint has them)
    settings = state["stateful_callbacks"]["DiagnoseCallback"]["attributes"]["run_settings"]
    assert summary["run_settings"] == settings
    assert {k: settings[k] for k in ("group_size", "beta", "mu", "optimizer_steps_per_generation", "step")} == \
        {"group_size": 4, "beta": 0.0, "mu": 2, "optimizer_steps_per_generation": 2, "step": "optimizer"}
    # the same findings from both files (G given: see the next test for G read from the file)
    from sim.yourdata.diagnose import DiagnoseConfig, diagnose
    from sim.yourdata.runlog import load_run_log

    found = [diagnose(load_run_log(mu2_run["paths"][k].read_bytes(), f"{k}.json"), DiagnoseConfig(group_size=4))
             for k in ("summary", "state", "diagnosis")]  # fmt: skip
    keys = [[(f.key, f.status, f.steps) for f in d.findings] for d in found]
    assert keys[0] == keys[1] == keys[2]
    assert [d.summary["steps"] for d in found] == [12, 12, 12]
    clip = next(f for f in found[1].findings if f.key == "clip_active")
    assert clip.status == "info" and set(clip.steps) <= {2, 4, 6, 8, 10, 12} and clip.steps  # the reused passes


@pytest.mark.integration
def test_mu2_trainer_state_gives_the_reader_its_settings(mu2_run):
    """What the log reader needs from a trainer_state.json to read it as its summary: G, beta, mu from
    stateful_callbacks["DiagnoseCallback"]["attributes"]["run_settings"]."""
    from sim.yourdata.diagnose import diagnose
    from sim.yourdata.runlog import load_run_log

    logs = [load_run_log(mu2_run["paths"][k].read_bytes(), f"{k}.json") for k in ("summary", "state")]
    if "group_size" not in logs[1].settings:
        pytest.skip("sim/yourdata/runlog.py does not read run_settings from trainer_state.json yet")
    assert logs[1].settings["group_size"] == logs[0].settings["group_size"] == 4
    d = [diagnose(log) for log in logs]
    assert [(f.key, f.status, f.steps, f.title) for f in d[0].findings] == \
        [(f.key, f.status, f.steps, f.title) for f in d[1].findings]


@pytest.mark.integration
def test_mu2_callback_printed_and_kept_what_diagnose_finds(mu2_run):
    from sim.yourdata.cli import diagnose_main

    diag, lines = mu2_run["diagnosis"], mu2_run["stderr"].splitlines()
    fired = diag["diagnosis"]["fired"]
    assert fired == mu2_run["summary"]["diagnose_fired"]
    printed = [line for line in lines if line.startswith("diagnose: step ")]
    assert len(printed) == len(fired)  # one line per rule, the check it first fired at
    for key, (first, seen) in fired.items():
        title = next(f["title"] for f in diag["diagnosis"]["findings"] if f["key"] == key)
        assert any(line.startswith(f"diagnose: step {seen}: [warn] ") and line.endswith(f"(holds from step {first})")
                   for line in printed), (key, printed)  # fmt: skip
        assert title  # every fired rule is among the file's findings
    assert diag["diagnosis"]["at_step"] == 12 and diag["log_history"] == mu2_run["state"]["log_history"]
    assert diagnose_main([str(mu2_run["paths"]["diagnosis"]), "-G", "4"]) == 0  # the CLI reads the file


FIXTURES = ROOT / "tests" / "fixtures" / "trl_runs"  # two real runs, 80 iterations each: see its README.md


@pytest.mark.parametrize("name, mu, beta", [("mu2", 2, 0.0), ("beta", 1, 0.04)])
def test_recorded_runs_summary_and_trainer_state_agree(name, mu, beta):
    """The μ = 2 and β = 0.04 runs kept for the log reader's tests: both files hold the same steps and settings, and
    diagnose() finds the same in both (at G = 8, which only the summary says to today's reader)."""
    from sim.yourdata.diagnose import DiagnoseConfig, diagnose
    from sim.yourdata.runlog import load_run_log

    paths = {k: FIXTURES / f"tinylm_{name}_{k}.json" for k in ("summary", "trainer_state")}
    summary, state = (json.loads(p.read_text()) for p in paths.values())
    log = summary["trl_log"]
    assert log == [e for e in state["log_history"] if "train_runtime" not in e]
    assert [e["step"] for e in log] == list(range(1, 80 * mu + 1))
    assert [e["step"] for e in log if "reward" in e] == list(range(1, 80 * mu + 1, mu))
    settings = state["stateful_callbacks"]["DiagnoseCallback"]["attributes"]["run_settings"]
    assert settings == summary["run_settings"]
    assert (settings["group_size"], settings["mu"], settings["beta"], settings["optimizer_steps_per_generation"]) == \
        (8, mu, beta, mu)
    assert (summary["optimizer_steps"], summary["generation_steps"]) == (80 * mu, 80)
    assert all("kl" in e for e in log) if beta else not any("kl" in e for e in log)
    clipped = [e["step"] for e in log if e["clip_ratio/region_mean"] > 0]
    assert (clipped and all(t % 2 == 0 for t in clipped)) if mu == 2 else clipped == []  # the reused passes only
    found = [diagnose(load_run_log(p.read_bytes(), p.name), DiagnoseConfig(group_size=8)) for p in paths.values()]
    assert [(f.key, f.status, f.steps) for f in found[0].findings] == \
        [(f.key, f.status, f.steps) for f in found[1].findings]


def test_shipped_trl_run_loads():
    run = load_trl_run()
    assert run["iterations"] == list(range(1, 301)) and len(run["reward"]) == 300
    assert run["pass_at_1"][0][0] == 0 and run["pass_at_1"][-1][0] == 300
    assert run["pass_at_1"][-1][1] > run["pass_at_1"][0][1] + 0.2  # the recorded run learned
    assert run["trl_config"]["num_generations"] == run["grpo_config"]["group_size"] == 8


def test_trl_record_loader_refuses_broken_files(tmp_path):
    assert load_trl_run(tmp_path / "absent.json") is None
    path = tmp_path / "run.json"
    good = {"format": FORMAT, "version": VERSION, "iterations": [1, 2], "reward": [0.5, 0.6],
            "pass_at_1": [[0, 0.5], [2, 0.6]], "pass_at_1_after": 0.6, "pass_at_64_after": 0.99, "eval_samples": 64,
            "num_processes": 1, "grpo_seconds": 3.0, "grpo_config": {}, "trl_config": {}}  # fmt: skip
    path.write_text(json.dumps(good))
    assert load_trl_run(path)["reward"] == [0.5, 0.6]
    for bad in ({"reward": [0.5]}, {"reward": [0.5, float("nan")]}, {"reward": [0.5, "1"]}, {"iterations": [2, 3]},
                {"pass_at_1": [[0, 1.5]]}, {"pass_at_1": [[9, 0.5]]}, {"format": "x"}, {"trl_config": "<b>"}):
        path.write_text(json.dumps(good | bad))
        with pytest.raises(TrlRecordError):
            load_trl_run(path)
    path.write_text("{not json")
    with pytest.raises(TrlRecordError, match="not readable JSON"):
        load_trl_run(path)


@needs_trl
def test_missing_checkpoint_with_trl_trainer(tmp_path, capsys):
    assert main(["--trainer", "trl", "--checkpoint", str(tmp_path / "none.pt"), *TINY]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: ") and "none.pt" in err and "checkpoint" in err


@pytest.mark.e2e
@needs_trl
def test_bench_tiny_two_processes_train_and_agree():
    """scripts/bench_trainers.py --tiny: sim, then TRL data-parallel on 2 processes (accelerate launch, gloo)."""
    cmd = [sys.executable, str(ROOT / "scripts" / "bench_trainers.py"), "--tiny", "--processes", "2"]
    proc = subprocess.run(cmd, env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout.splitlines()[0])  # one JSON line, then the table of figures
    sim, trl = res["sim"], res["trl_2"]
    assert "error" not in trl, trl
    assert sim["iterations"] == trl["iterations"] == 2 and sim["completions_per_second"] > 0
    assert (trl["processes"], trl["backend"], trl["rank_steps"]) == (2, "gloo", [2, 2])
    assert trl["ranks_agree"] and trl["trained"]  # both ranks trained, to bit-identical weights
    assert 0 < trl["final_pass_at_1_exact"] < 1 and trl["completions_per_second"] > 0


@pytest.mark.e2e
@needs_trl
def test_two_processes_with_beta_mu2_and_the_callback(tmp_path):
    """accelerate launch, 2 CPU processes (gloo), beta > 0 and mu = 2: every rank builds its reference model from its
    own folder, each optimizer step sees P groups (gradient_accumulation_steps P / 2 on each rank; a bare
    PartialState() made it P), and rank 0 alone prints and writes the diagnosis."""
    out, diag = tmp_path / "run.json", tmp_path / "diagnosis.json"
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
           "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "sim.tinylm.trl_run",
           "--iterations", "3", "--prompts", "4", "-G", "4", "--beta", "0.04", "--mu", "2", "--eval-samples", "2",
           "--json", "--out", str(out), "--diagnosis", str(diag)]  # fmt: skip
    proc = subprocess.run(cmd, env=ENV, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(out.read_text())
    assert res["num_processes"] == 2 and [r["steps"] for r in res["ranks"]] == [6, 6]
    assert res["ranks"][0]["weights_sha256"] == res["ranks"][1]["weights_sha256"] != res["start_weights_sha256"]
    assert res["trl_config"]["gradient_accumulation_steps"] == res["run_settings"]["gradient_accumulation_steps"] == 2
    assert res["run_settings"]["prompts_per_generation"] == 4 and res["run_settings"]["num_processes"] == 2
    kl = [row["kl"] for row in res["trl_log"]]
    assert len(kl) == 6 and kl[0] < 1e-6 and all(np.isfinite(kl))
    state = json.loads(diag.read_text())
    assert state["diagnosis"]["at_step"] == 6 and state["log_history"][:-1] == res["trl_log"]
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("diagnose: step ")]
    assert len(lines) == len(state["diagnosis"]["fired"])  # printed once, by rank 0

