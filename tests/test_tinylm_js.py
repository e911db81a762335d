"""The browser's TinyLM trainer (assets/js/tinylm_*.js, docs/tinylm-browser.md) proved equal to sim/tinylm's torch.

Fast tier, under node (tests/js/tinylm_probe.mjs): the shipped float32 export is the checkpoint; the WebAssembly
kernels are their source's build and give the JavaScript loops' bits; for the shipped checkpoint and fixed batches
the logits, every loss type's loss, metrics and gradient, and AdamW's steps agree with torch; the trainer's first
iterations sample the completions sim's trainer samples with rng="philox" (same seed), with the same metrics; the
evaluation samples what sim's samples. Integration tier: a whole default run's pass@1 lies within the spread of sim's
recorded seeds.

Tolerance: the reference is torch in float64 on the checkpoint rounded to float32, so the only difference left is
the browser's float32 arithmetic. Each tensor must agree to 1e-5 of its largest value (max |js - torch| <= 1e-5 *
max |torch|): float32's unit roundoff is 6e-8 and a value here passes through about 20 rounded operations and
sums of up to 256 terms, which measured 2e-7 to 6e-7 (torch itself in float32 makes errors of the same size); a
wrong formula, even a factor of 1.001, is 100 times over it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from scripts import build_tinylm_wasm
from sim.grpo import policy_loss
from sim.passk import mean_pass_at_k
from sim.tinylm import browser
from sim.tinylm.checkpoint import load_checkpoint
from sim.tinylm.data import completion_mask, prompt_tokens, split
from sim.tinylm.evaluate import expected_pass_at_1, passk_eval
from sim.tinylm.grpo_train import METRICS, GRPOConfig, GRPOTrainer
from sim.tinylm.model import DTYPE, expand_cache, response_logprobs
from sim.tinylm.optim import FlatAdamW
from sim.tinylm.story import never_solved
from tests.fixtures.node import NODE, allowed, call, js

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tests" / "js" / "tinylm_probe.mjs"
TOL = 1e-5  # of each tensor's largest value (the module docstring says why)


def probe(request):
    """One request (or a list) to tests/js/tinylm_probe.mjs under node; its reply."""
    if NODE is None:
        pytest.skip("node is not installed")
    with allowed():
        done = subprocess.run([NODE, str(PROBE)], input=json.dumps(request), capture_output=True, text=True,
                              timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def f32(s: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(s), "<f4")


def f64(s: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(s), "<f8")


def b64(a) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()


def sft32():
    """The shipped SFT model with its weights rounded to float32, computing in float64: what the browser starts from,
    in exact arithmetic (near enough)."""
    model, _ = load_checkpoint()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.float().to(DTYPE))
    return model


def close(js: np.ndarray, ref: np.ndarray, tol: float = TOL) -> float:
    """max |js - ref| / max |ref| (0 when both are 0)."""
    scale = float(np.abs(ref).max()) if ref.size else 0.0
    err = float(np.abs(js - ref).max()) if ref.size else 0.0
    return err / scale if scale > 0 else err


def by_tensor(model, flat: np.ndarray) -> dict[str, np.ndarray]:
    out, off = {}, 0
    for name, p in model.named_parameters():
        out[name] = flat[off : off + p.numel()].reshape(p.shape)
        off += p.numel()
    assert off == flat.size
    return out


BATCH = {"problems": [[45, 57], [10, 10], [99, 99]], "G": 4}


def batch(seed: int = 1):
    """Prompts (3, 6) and responses (12, 4) with answers, <eos> early and late, <pad> and garbage."""
    prompts = prompt_tokens(np.array(BATCH["problems"]))
    g = torch.Generator().manual_seed(seed)
    responses = torch.randint(0, 14, (12, 4), generator=g)
    responses[0] = torch.tensor([1, 0, 2, 12])  # 102 <eos>: right
    responses[1] = torch.tensor([0, 2, 12, 13])  # 02 <eos> <pad>: the blind spot's mistake
    responses[4] = torch.tensor([2, 0, 12, 5])  # 20 <eos> and a token after it
    responses[5] = torch.tensor([12, 3, 3, 3])  # an empty answer
    return prompts, responses


def torch_logits(model, prompts, responses, G):
    logits, cache = model(prompts)
    first = logits[:, -1:].repeat_interleave(G, dim=0)
    rest, _ = model(responses[:, :-1], expand_cache(cache, G))
    return torch.cat([first, rest], dim=1)  # (R, 4, V)


# ---- the shipped files ----

def test_the_shipped_weights_are_the_checkpoint_in_float32():
    """tinylm_sft.js holds every tensor of assets/data/tinylm_sft.pt, in order and shape, rounded to float32 and
    nothing else; both generated modules are current (`python -m sim.tinylm.browser --check`)."""
    text = browser.SFT_MODULE.read_text(encoding="utf-8")
    blob = json.loads(re.search(r"export const SFT = (\{.*\});", text).group(1))
    model, _ = load_checkpoint()
    state = model.state_dict()
    assert blob["params"] == [[k, list(v.shape)] for k, v in state.items()]
    want = np.concatenate([v.numpy().ravel() for v in state.values()]).astype(np.float32)
    got = f32(blob["base64"])
    assert got.size == want.size == 102_528
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert blob["model_config"] == model.cfg.to_dict()
    assert text == browser.sft_text(), "tinylm_sft.js is out of date: run python -m sim.tinylm.browser"
    assert browser.DATA_MODULE.read_text(encoding="utf-8") == browser.data_text(), \
        "tinylm_data.js is out of date: run python -m sim.tinylm.browser"
    heldout = json.loads(re.search(r'"heldout": (\[.*\])', browser.DATA_MODULE.read_text()).group(1))
    assert heldout == split()[1].tolist()


def test_the_trainer_adds_at_most_one_and_a_half_megabytes_to_a_lesson():
    """Issue 44's budget: the modules the trainer brings into a bundle that the lesson's does not already hold."""
    from scripts.bench_tinylm_browser import GROWTH_LIMIT, lesson_growth

    growth, sizes = lesson_growth()
    assert "tinylm_sft.js" in sizes and "engine.js" not in sizes
    assert growth <= GROWTH_LIMIT == 1_500_000


def test_the_wasm_module_is_its_sources_build():
    """The committed base64 names the SHA-256 of assets/wasm/tinylm_kernels.c as it is now (the bytes themselves are
    compared with a fresh build by the integration test below, where clang is installed)."""
    got = build_tinylm_wasm.committed()
    assert got["sha"] == hashlib.sha256(build_tinylm_wasm.SOURCE.read_bytes()).hexdigest(), \
        "assets/wasm/tinylm_kernels.c changed: run python scripts/build_tinylm_wasm.py"
    assert got["wasm"][:4] == b"\0asm"


@pytest.mark.integration
def test_the_wasm_bytes_are_what_the_build_produces():
    if shutil.which("clang") is None or shutil.which("wasm-ld") is None:
        pytest.skip("clang and wasm-ld are not installed (apt-get install clang lld)")
    got = build_tinylm_wasm.committed()
    if build_tinylm_wasm.compiler() != got["built_by"]:
        pytest.skip(f"built by {got['built_by']}, this machine has {build_tinylm_wasm.compiler()}")
    assert build_tinylm_wasm.build() == got["wasm"]
    assert build_tinylm_wasm.main(["--check"]) == 0


def test_the_wasm_and_javascript_kernels_give_the_same_bits():
    out = probe({"op": "kernels"})
    assert out["simd"] == [True, False]
    assert out["checked"] > 50_000 and out["differ"] == 0


# ---- the model ----

def test_logits_and_every_gradient_match_torch():
    """Teacher-forced logits of a fixed batch, and the gradient of every parameter for a fixed upstream gradient,
    through the prompt-shared key/value cache (the first position's logits shared by a group)."""
    model = sft32()
    prompts, responses = batch()
    dl = torch.randn(12, 4, 14, dtype=DTYPE, generator=torch.Generator().manual_seed(2))
    logits = torch_logits(model, prompts, responses, 4)
    (logits * dl).sum().backward()
    req = {"op": "model", "prompts": prompts.tolist(), "responses": responses.tolist(), "G": 4,
           "dlogits": b64(dl.numpy())}
    simd, plain = probe([req, req | {"simd": False}])
    assert simd["simd"] and not plain["simd"]
    for out in (simd, plain):
        assert close(f32(out["logits"]).reshape(12, 4, 14), logits.detach().numpy()) < TOL
        grads = by_tensor(model, f32(out["grad"]))
        for name, p in model.named_parameters():
            assert close(grads[name], p.grad.numpy()) < TOL, name
    assert simd["grad"] == plain["grad"] and simd["logits"] == plain["logits"]  # the same bits either way


LOSSES = [{"loss_type": t} for t in ("grpo", "bnpo", "dapo", "dr_grpo", "cispo", "sapo", "luspo", "vespo")]
LOSS_CASES = (
    [dict(o, importance_sampling_level=lvl) for o in LOSSES for lvl in ("token", "sequence")]
    + [{"loss_type": "grpo", "beta": 0.04}, {"loss_type": "dapo", "beta": 0.1, "kl_times_ratio": True},
       {"loss_type": "grpo", "importance_sampling_level": "sequence", "beta": 0.04, "kl_times_ratio": True},
       {"loss_type": "dapo", "clip_eps_high": 0.28}, {"loss_type": "grpo", "delta": 1.3, "clip_eps": 0.1},
       {"loss_type": "cispo", "clip_eps_high": 1.1}, {"loss_type": "sapo", "sapo_temperature_neg": 2.0},
       {"loss_type": "vespo", "vespo_k_neg": 1.5}]
)


@pytest.mark.parametrize("on_policy", [True, False], ids=["on-policy", "off-policy"])
def test_every_loss_type_its_metrics_and_gradient_match_torch(on_policy):
    """sim.grpo.policy_loss through the model for every loss type at both importance levels, with β and the KL's
    ratio, clip ε high, δ and the other constants: the loss, its metrics and every parameter's gradient. Off-policy,
    old log-probabilities are the current ones plus noise, so ratios spread across the clip range."""
    model = sft32()
    prompts, responses = batch(3)
    gen = torch.Generator().manual_seed(4)
    adv = torch.randn(12, dtype=DTYPE, generator=gen)
    with torch.no_grad():
        logp0, _ = response_logprobs(model, prompts, responses, 1.0, 4)
    old = None if on_policy else logp0 + 0.3 * torch.randn(12, 4, dtype=DTYPE, generator=gen)
    ref = logp0 + 0.2 * torch.randn(12, 4, dtype=DTYPE, generator=gen)
    mask = completion_mask(responses).to(DTYPE)
    reqs, want = [], []
    for case in LOSS_CASES:
        model.zero_grad()
        logp, _ = response_logprobs(model, prompts, responses, 1.0, 4)
        loss, metrics = policy_loss(logp, old, ref, adv, mask, max_completion_length=4, **case)
        loss.backward()
        want.append((loss.item(), metrics, {n: p.grad.numpy().copy() for n, p in model.named_parameters()}))
        reqs.append({"op": "loss", "prompts": prompts.tolist(), "responses": responses.tolist(), "G": 4,
                     "adv": adv.tolist(), "old": None if old is None else b64(old.numpy()), "ref": b64(ref.numpy()),
                     "options": case})
    for case, out, (loss, metrics, grads) in zip(LOSS_CASES, probe(reqs), want, strict=True):
        assert abs(out["loss"] - loss) <= 1e-6 + TOL * abs(loss), (case, out["loss"], loss)
        assert set(out["metrics"]) == set(metrics), case
        for k, v in metrics.items():
            assert abs(out["metrics"][k] - v) <= 1e-6, (case, k, out["metrics"][k], v)
        got = by_tensor(model, f32(out["grad"]))
        for name, g in grads.items():
            assert close(got[name], g) < TOL, (case, name)


def test_adamw_steps_match_flat_adamw():
    """Three AdamW steps (warmup learning rates, weight decay) with the same float32 gradients: sim's FlatAdamW in
    float64 and the browser's, whose parameters and moments are float32. Parameters near 1e-3 show the steps
    themselves; near 1, the browser's result is torch's rounded to float32 at each step (within 2 ulp)."""
    gen = torch.Generator().manual_seed(5)
    grads = [torch.randn(1000, dtype=torch.float32, generator=gen) * s for s in (1.0, 0.1, 3.0)]
    grads[0][:10] = 0.0  # parameters without gradient
    lrs = [1e-3 / 11, 2e-3 / 11, 3e-3 / 11]
    for size in (1e-3, 1.0):
        theta = torch.randn(1000, dtype=torch.float32, generator=gen) * size
        p = torch.nn.Parameter(theta.to(DTYPE).clone())
        opt = FlatAdamW([p], lr=0.0, betas=(0.98, 0.999), weight_decay=0.01)
        for g, lr in zip(grads, lrs, strict=True):
            opt.lr = lr
            opt.step(g.to(DTYPE))
        out = probe({"op": "adamw", "theta": b64(theta.numpy()), "grads": [b64(g.numpy()) for g in grads],
                     "lrs": lrs, "options": {"betas": [0.98, 0.999], "weightDecay": 0.01}})
        js, want = f32(out["theta"]).astype(np.float64), opt.flat.numpy()
        if size < 1:
            assert close(js - theta.numpy(), want - theta.numpy()) < TOL
        else:  # each of the 3 steps rounds theta to float32: at most half an ulp each
            big = np.maximum(np.abs(want), np.abs(theta.numpy())).astype(np.float32)  # a binade crossed: the larger
            ulp = np.spacing(big).astype(np.float64)
            assert (np.abs(js - want) <= 2 * ulp).all()


# ---- the trainer ----

@pytest.mark.parametrize("settings", [
    {"seed": 3, "keep_groups": 16, "eval_every": 2},
    {"seed": 4, "keep_groups": 16, "eval_every": 2, "prompts_per_iter": 3, "group_size": 5, "mu": 3, "beta": 0.1,
     "loss_type": "luspo", "importance_sampling_level": "sequence", "temperature": 0.7, "scale": "batch"},
], ids=["default", "odd-shards-mu3-beta-gspo"])
def test_the_first_iterations_sample_sims_completions(settings):
    """With the same seed, sim's trainer with rng="philox" and the browser's sample the same prompts and
    completions in iterations 1 and 2 (so the same rewards and advantages), with the same metrics; the first
    update agrees (see below) and the second iteration's gradient norm too. Also with 3 prompts (shards of 1 and
    2), mu = 3 (off-policy ratios), beta > 0, GSPO's sequence ratio, a temperature and the batch's std."""
    out = probe({"op": "first", "settings": settings, "iterations": 2})
    trainer = GRPOTrainer(sft32(), GRPOConfig(rng="philox", **settings))
    theta0 = trainer.opt.flat.numpy().copy()
    for i in range(2):
        m = trainer.step()
        if i == 0:
            theta1 = trainer.opt.flat.numpy().copy()
            groups = [dict(g) for g in trainer.latest_groups]
        js = out["metrics"][i]
        assert set(js) == set(m)
        for k, v in m.items():
            if k != "step_time":
                assert abs(js[k] - v) <= 1e-5 * max(1.0, abs(v)), (i, k, js[k], v)
    js_groups = out["groups"]
    for g, h in zip(trainer.latest_groups, js_groups, strict=True):
        assert (g["prompt"], g["responses"], g["rewards"]) == (h["prompt"], h["responses"], h["rewards"])
        np.testing.assert_allclose(h["advantages"], g["advantages"], rtol=1e-12)
    assert groups and len(js_groups) == min(16, settings.get("prompts_per_iter", 16))
    assert abs(out["pass_at_1"][-1][1] - trainer.pass_at_1[-1][1]) < 1e-5
    # the first update, theta1 - theta0: Adam divides each gradient by its own size, so a parameter whose gradient
    # is 0 in exact arithmetic (the attention keys' bias: softmax ignores a shift) moves by float noise, +-lr in
    # both; everything else agrees to a few parts in 1e4
    assert np.abs(f32(out["theta0"]) - theta0).max() < 1e-7
    model = trainer.policy
    js_step = by_tensor(model, f32(out["thetas"][0]).astype(np.float64) - f32(out["theta0"]))
    sim_step = by_tensor(model, theta1 - theta0)
    for name in js_step:
        if name.endswith("attn.qkv.bias"):
            continue
        assert np.linalg.norm(js_step[name] - sim_step[name]) <= 1e-3 * np.linalg.norm(sim_step[name]), name


def test_the_evaluation_samples_what_sim_samples():
    """With 0 iterations: held-out pass@1 (exact) and pass@k's correct counts of both models (here both the SFT
    model) from the evaluation stream, as sim's passk_eval(rng="philox") counts them; the curve by the unbiased
    estimator, the problems never solved, no crossing."""
    n = 4
    out = probe({"op": "eval", "settings": {"iterations": 0, "eval_samples": n, "seed": 11}})
    model = sft32()
    _, heldout = split()
    want = passk_eval(model, heldout, n=n, seed=11, rng="philox")
    res = out["result"]
    assert res["correct_before"] == want["correct"].tolist() == res["correct_after"]
    np.testing.assert_allclose(res["pass_at_k_before"], mean_pass_at_k(n, want["correct"]), atol=1e-12)
    assert res["never_solved_before"] == never_solved(heldout, want["correct"])
    assert res["crossover_k"] is None
    assert abs(out["pass_at_1"][0][1] - expected_pass_at_1(model, heldout)) < 1e-6


def test_the_pages_bundle_runs_the_same_run(tmp_path):
    """Through the page's bundle (sim/player/bundle.py: what a lesson and the app load) and its API, on one thread:
    the run the modules give, its snapshot in job.py's keys, every metric named, the result in run_story's keys.
    (A module the bundler misread, say a second name in one `export const`, would change it.)"""
    from sim.tinylm.browser import write_page

    settings = {"iterations": 3, "eval_every": 2, "eval_samples": 2, "seed": 9, "beta": 0.04, "mu": 2}
    write_page(tmp_path)
    snap, direct = probe([{"op": "bundle", "script": str(tmp_path / "tinylm.js"), "settings": settings},
                          {"op": "eval", "settings": settings}])
    assert snap["state"] == "done" and snap["where"] == "page" and snap["error"] is None
    assert snap["pass_at_1"] == direct["pass_at_1"] and len(snap["pass_at_1"]) == 3
    res = snap["result"]
    for k in ("pass_at_1_before", "pass_at_1_after", "pass_at_k_before", "pass_at_k_after", "never_solved_before",
              "never_solved_after", "crossover_k"):
        assert res[k] == direct["result"][k], k
    assert set(res) == {"pass_at_1_before", "pass_at_1_after", "pass_at_k_before", "pass_at_k_after",
                        "never_solved_before", "never_solved_after", "crossover_k", "exact_pass_at_1", "sft",
                        "grpo_seconds", "eval_seconds", "wall_seconds", "iterations", "eval_samples",
                        "heldout_problems", "config"}
    assert {"state", "iteration", "history", "pass_at_1", "groups", "result", "error", "checkpoint_error", "viewers",
            "paused", "queue_position", "iterations"} <= set(snap)
    assert [m["iteration"] for m in snap["history"]] == [1, 2, 3]
    assert set(snap["history"][0]) == set(METRICS) | {"iteration", "clip_ratio/low_mean", "clip_ratio/high_mean"}
    assert "pass_at_1" in snap["history"][1] and len(snap["groups"]) == 8
    assert all(len(g["responses"]) == 8 and all(isinstance(r, str) for r in g["responses"]) for g in snap["groups"])
    assert res["config"]["grpo"]["mu"] == 2 and res["config"]["eval_samples"] == 2


# ---- the pieces, one by one (tests/js/harness.mjs) ----

def test_the_problems_and_the_verifier_are_sims():
    from sim.tinylm.data import answer_tokens, rewards, verify
    from sim.tinylm.teacher import ripple_carry

    train, heldout = split()
    gen = torch.Generator().manual_seed(6)
    resp = torch.randint(0, 14, (300, 4), generator=gen)
    resp[:100, :] = answer_tokens(heldout[:100])  # right answers
    resp[:100][resp[:100] == 13] = 7  # whatever follows <eos>
    calls = [{"op": "call", "module": "tinylm_grpo", "fn": "trainProblems", "args": []},
             {"op": "call", "module": "tinylm_grpo", "fn": "trainProblems", "args": [{"blindSpot": False}]},
             {"op": "call", "module": "tinylm_grpo", "fn": "answerTokens", "args": [45, 57]}]
    calls += [{"op": "call", "module": "tinylm_grpo", "fn": "reward", "args": [r.tolist(), 0, int(a), int(b)]}
              for r, (a, b) in zip(resp[:130], heldout[:130], strict=True)]
    all_, lab, answer, *got = js(calls)
    assert all_ == train.tolist()
    assert lab == train[~ripple_carry(train)].tolist() and len(lab) == 7454
    assert answer == answer_tokens(np.array([[45, 57]]))[0].tolist()
    assert got == rewards(resp[:130], heldout[:130]).tolist()
    assert sum(got) >= 100 and verify("102", "102") == 1.0


def test_group_advantages_are_sims():
    """Every baseline and scale, both std conventions, eps 0, flat groups (all right, all wrong) among them."""
    from sim.grpo import group_advantages

    r = torch.tensor([1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0], dtype=DTYPE)
    cases = [{}, {"ddof": 1}, {"baseline": "loo"}, {"baseline": "none"}, {"scale": "batch"}, {"scale": "none"},
             {"eps": 0.0}, {"baseline": "loo", "scale": "batch", "ddof": 1}]
    got = js([{"op": "call", "module": "tinylm_grpo", "fn": "groupAdvantages", "args": [r.tolist(), 4, o]}
              for o in cases])
    for o, g in zip(cases, got, strict=True):
        np.testing.assert_allclose(g, group_advantages(r, 4, **o).numpy(), rtol=1e-13, atol=1e-15, err_msg=str(o))


def test_pass_at_k_is_sims_unbiased_estimator():
    counts = [0, 1, 2, 5, 31, 63, 64, 17, 0, 3]
    np.testing.assert_allclose(call("tinylm_grpo", "meanPassAtK", 64, counts), mean_pass_at_k(64, counts), atol=1e-12)
    np.testing.assert_allclose(call("tinylm_grpo", "meanPassAtK", 4, [0, 4, 1]), mean_pass_at_k(4, [0, 4, 1]),
                               atol=1e-15)


def test_the_learning_rate_schedule_is_sims():
    from sim.tinylm.grpo_train import learning_rate

    cases = [(GRPOConfig(**c), t) for c in ({}, {"lr_schedule": "constant"}, {"warmup": 0, "iterations": 7})
             for t in (0, 5, 10, 150, 299)]
    got = js([{"op": "call", "module": "tinylm_grpo", "fn": "learningRate", "args": [cfg.to_dict(), t]}
              for cfg, t in cases])
    assert got == [pytest.approx(learning_rate(cfg, t), rel=1e-15, abs=1e-18) for cfg, t in cases]


@pytest.mark.parametrize(("values", "message"), [
    ({"group_size": 1}, "group_size must be an integer in [2, 1024], got 1"),
    ({"loss_type": "ppo"}, 'loss_type must be one of grpo, bnpo, dapo, dr_grpo, cispo, sapo, luspo, vespo, got "ppo"'),
    ({"lr": float("nan")}, "lr must be a number in [0, 1], got NaN"),
    ({"tl_G": 8}, 'GRPOConfig has no setting "tl_G"'),
    ({"eval_samples": 0}, "eval_samples must be an integer in [1, 1024], got 0"),
    ({"preset": "lab"}, "preset must be one of default, chapter-lab"),
    ({"rng": "torch"}, "rng must be 'philox' in the browser"),
    ({"prompts_per_iter": 64, "group_size": 64}, "4096 responses per iteration; the browser trains at most 2048"),
])
def test_a_bad_setting_is_refused_naming_it_as_sim_does(values, message):
    """The engine's words are its own (JavaScript's notation); what it refuses, and the setting it names, are
    sim's."""
    from tests.fixtures.engine_jobs import refusal

    with pytest.raises(ValueError) as e:
        call("tinylm_grpo", "tinylmConfig", values)
    assert message in str(e.value)
    if not {"preset", "rng", "prompts_per_iter", "eval_samples", "tl_G"} & set(values):  # sim's own checks
        with pytest.raises(ValueError) as s:
            GRPOConfig(**values)
        assert refusal(str(s.value)) == refusal(str(e.value)), (str(s.value), str(e.value))


def test_a_preset_sets_its_switch_under_the_other_values():
    cfg = call("tinylm_grpo", "tinylmConfig", {"preset": "chapter-lab", "seed": 4})
    assert cfg["blind_spot_prompts"] is False and cfg["seed"] == 4 and cfg["rng"] == "philox"
    assert call("tinylm_grpo", "tinylmConfig", {"preset": "chapter-lab", "blind_spot_prompts": True})[
        "blind_spot_prompts"] is True
    default = call("tinylm_grpo", "tinylmConfig", {})
    assert {k: v for k, v in default.items() if k not in ("rng", "eval_samples", "preset")} == \
        {k: v for k, v in GRPOConfig().to_dict().items() if k != "rng"}


# ---- a whole run ----

@pytest.mark.integration
def test_a_default_run_lands_within_the_spread_of_sims_recorded_seeds():
    """The default preset, seed 0, 300 iterations and 300 x 64 samples in node (about 30 s): its held-out pass@1
    lies within the spread of sim's 5 recorded seeds (assets/data/tinylm_seeds.json), widened by 3 standard
    deviations of those seeds on each side of their mean (a new seed falls outside a 5-seed range a third of the
    time), and pass@64 and the never-solved count as the default preset shows them: coverage does not narrow."""
    from sim.tinylm.figures import load_preset_figures

    out = probe({"op": "eval", "settings": {"seed": 0}})
    runs = load_preset_figures()["default"]["runs"]
    after = np.array([r["pass_at_1_after"] for r in runs])
    lo, hi = after.mean() - 3 * after.std(ddof=1), after.mean() + 3 * after.std(ddof=1)
    res = out["result"]
    assert lo <= res["pass_at_1_after"] <= hi, (res["pass_at_1_after"], lo, hi)
    assert out["pass_at_1"][-1][1] >= 0.80
    assert res["pass_at_k_after"][-1] >= res["pass_at_k_before"][-1]
    assert len(res["never_solved_after"]) <= len(res["never_solved_before"])
