"""Parity of sim/grpo.py with Hugging Face TRL 1.16.0, driven through TRL's REAL GRPOTrainer code.

Nothing of TRL is re-typed here. A GRPOTrainer is built around a tiny random Qwen2 model and a
word-level tokenizer made in memory (no download: HF_HUB_OFFLINE=1), then:

  * loss: `trainer._compute_loss(model, inputs)` runs on our tensors. Its one model call,
    `_get_per_token_logps_and_entropies`, is replaced on the instance by a function returning
    our `logp` leaf, so TRL's own loss formula, clip, KL and aggregation run on it and autograd
    gives d loss / d logp. Everything runs in float64, so the tolerance is round-off (1e-10).
  * advantages: `trainer._generate_and_score_completions(inputs)` runs with its generation
    (`_generate`) replaced by a fixed completion, and a reward function that returns the rewards
    we chose. TRL's own mean / nanstd / scale_rewards code turns them into advantages (float32).

Mapping of names (ours -> TRL GRPOConfig):
  loss_type -> loss_type, beta -> beta, clip_eps -> epsilon, clip_eps_high -> epsilon_high,
  max_completion_length -> max_completion_length, kl_times_ratio -> use_bias_correction_kl,
  group_advantages(..., ddof=1, scale=s) -> scale_rewards=s (TRL always uses baseline "mean").
"""

import math
import os
import warnings

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported: never touch the network
os.environ["HF_DATASETS_OFFLINE"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402
import trl  # noqa: E402  (a hard import: parity is a test, so a missing TRL must fail, not skip)
from datasets import Dataset  # noqa: E402
from tokenizers import Tokenizer, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

from sim.grpo import group_advantages, policy_loss  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::UserWarning")

F64 = torch.float64
G = 4  # group size (num_generations)
B, T = 8, 6  # two groups of four responses, completions padded to 6 tokens
MAX_LEN = 8  # GRPOConfig.max_completion_length: Dr. GRPO's constant normaliser, deliberately != T


# ---------------------------------------------------------------- the tiny trainer


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A 1-layer random Qwen2 saved to a temp dir (TRL rebuilds the reference model from that path
    when beta > 0), an in-memory word-level tokenizer, and a 1-column dataset."""
    vocab = {"<pad>": 0, "<eos>": 1, "=": 2, "+": 3, **{str(d): 4 + d for d in range(10)}}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>")
    config = Qwen2Config(
        vocab_size=len(vocab),
        hidden_size=8,
        intermediate_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32,
        pad_token_id=0,
        eos_token_id=1,
    )
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-qwen2")
    Qwen2ForCausalLM(config).save_pretrained(path)
    model = Qwen2ForCausalLM.from_pretrained(path)
    dataset = Dataset.from_dict({"prompt": ["3 7 + 4 8 ="] * B})
    return dict(model=model, tokenizer=tokenizer, dataset=dataset, out=tmp_path_factory.mktemp("out"))


def reward_from_dataset(completions, target, **kwargs):
    """Reward function: the reward we want is a column of the batch ("target")."""
    return list(target)


def make_trainer(tiny, **config) -> GRPOTrainer:
    args = GRPOConfig(
        output_dir=str(tiny["out"]),
        per_device_train_batch_size=B,
        num_generations=G,
        max_completion_length=MAX_LEN,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        **config,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = GRPOTrainer(
            model=tiny["model"],
            reward_funcs=reward_from_dataset,
            args=args,
            train_dataset=tiny["dataset"],
            processing_class=tiny["tokenizer"],
        )
    trainer.model.train()  # as Trainer.train() does
    trainer.current_gradient_accumulation_steps = 1  # as Trainer's loop sets it (gradient_accumulation_steps=1)
    return trainer


_trainers: dict = {}


def trainer_for(tiny, **config) -> GRPOTrainer:
    """One trainer per distinct config, built once per test session (building takes ~0.1 s)."""
    key = tuple(sorted(config.items()))
    if key not in _trainers:
        _trainers[key] = make_trainer(tiny, **config)
    trainer = _trainers[key]
    trainer._metrics["train"].clear()
    return trainer


def test_trl_is_the_version_parity_was_established_for():
    # a TRL upgrade must be a conscious step: re-run this file, then move the pin in requirements-dev.txt
    assert trl.__version__ == "1.16.0"


def test_building_the_trainer_works_offline(tiny):
    # tests/conftest.py sets HF_HUB_OFFLINE: a trainer that wanted the network would raise here
    trainer = make_trainer(tiny, beta=0.04)  # beta > 0 also loads a reference model from the temp dir
    assert trainer.beta == 0.04 and trainer.ref_model is not None


def test_trl_defaults_match_our_docstring_table():
    # sim/grpo.py's module docstring claims these TRL defaults
    d = GRPOConfig(output_dir="unused", report_to=[], use_cpu=True)
    assert d.loss_type == "dapo"
    assert d.beta == 0.0
    assert d.epsilon == 0.2 and d.epsilon_high is None
    assert d.scale_rewards == "group"
    assert d.use_bias_correction_kl is True  # kl_times_ratio=True is TRL's default


# ---------------------------------------------------------------- loss, gradient and metrics


def batch(seed: int = 0, spread: float = 0.35):
    """Log-probs with ratios well away from 1 (both clip sides hit; spread=1.5 puts many ratios far
    outside any clip range, about 0.04 to 8), a reference that differs, ragged lengths, and GRPO advantages
    of two groups (one with graded rewards)."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.tensor([3, 6, 2, 4, 5, 1, 6, 3])
    mask = (torch.arange(T)[None, :] < lengths[:, None]).long()  # (B, T)
    logp = -torch.rand(B, T, generator=g, dtype=F64) * 3  # (B, T)
    old = logp + spread * torch.randn(B, T, generator=g, dtype=F64)
    ref = logp + 0.35 * torch.randn(B, T, generator=g, dtype=F64)
    rewards = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0, 0.5, 1.0, 0.0], dtype=F64)
    adv = group_advantages(rewards, G, ddof=1)  # (B,)
    return logp, old, ref, adv, mask


def trl_loss(trainer, logp, old, ref, adv, mask):
    """TRL's _compute_loss on our tensors: returns (loss, d loss / d logp, trainer metrics)."""
    leaf = logp.clone().requires_grad_(True)

    def our_logps(model, input_ids, attention_mask, logits_to_keep, **kwargs):
        assert logits_to_keep == T and input_ids.shape == (B, 2 + T)
        return leaf, torch.zeros_like(leaf), None  # (logps, entropies, aux_loss)

    trainer._get_per_token_logps_and_entropies = our_logps
    inputs = {
        "prompt_ids": torch.full((B, 2), 4),
        "prompt_mask": torch.ones(B, 2, dtype=torch.long),
        "completion_ids": torch.full((B, T), 5),
        "completion_mask": mask,
        "advantages": adv,
        "num_items_in_batch": mask.sum(),  # the whole batch, one process
    }
    if old is not None:
        inputs["old_per_token_logps"] = old
    if ref is not None:
        inputs["ref_per_token_logps"] = ref
    loss = trainer._compute_loss(trainer.model, inputs)
    (grad,) = torch.autograd.grad(loss, leaf)
    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}
    return loss, grad, metrics


def our_loss(logp, old, ref, adv, mask, **kw):
    """sim.grpo.policy_loss on the same tensors: (loss, d loss / d logp, metrics)."""
    leaf = logp.clone().requires_grad_(True)
    loss, metrics = policy_loss(leaf, old, ref, adv, mask, **kw)
    (grad,) = torch.autograd.grad(loss, leaf)
    return loss, grad, metrics


@pytest.mark.parametrize("policy", ["off", "on"])
@pytest.mark.parametrize("eps_high", [None, 0.28])
@pytest.mark.parametrize("kl_times_ratio", [False, True])
@pytest.mark.parametrize("beta", [0.0, 0.04])
@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dapo", "dr_grpo"])
def test_loss_gradient_and_metrics_match_trl(tiny, loss_type, beta, kl_times_ratio, eps_high, policy):
    trainer = trainer_for(
        tiny, loss_type=loss_type, beta=beta, use_bias_correction_kl=kl_times_ratio, epsilon_high=eps_high
    )
    logp, old, ref, adv, mask = batch()
    old = old if policy == "off" else None  # on-policy: both sides use logp.detach()
    t_loss, t_grad, t_metrics = trl_loss(trainer, logp, old, ref, adv, mask)
    o_loss, o_grad, o_metrics = our_loss(
        logp,
        old,
        ref,
        adv,
        mask,
        loss_type=loss_type,
        beta=beta,
        clip_eps=0.2,
        clip_eps_high=eps_high,
        max_completion_length=MAX_LEN,
        kl_times_ratio=kl_times_ratio,
    )
    assert t_loss.dtype == F64
    assert o_loss.item() == pytest.approx(t_loss.item(), abs=1e-10, rel=1e-10)
    assert torch.allclose(o_grad, t_grad, atol=1e-10, rtol=0)
    assert o_grad.abs().max() > 1e-3  # a real gradient is being compared
    # TRL computes the clip fractions in float32, hence 1e-6
    for name in ("clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean"):
        assert o_metrics[name] == pytest.approx(t_metrics[name], abs=1e-6), name
    if policy == "off":
        assert t_metrics["clip_ratio/low_mean"] > 0 and t_metrics["clip_ratio/high_mean"] > 0
    # TRL logs "kl" only when beta != 0; ours whenever ref_logp is given
    if beta != 0.0:
        assert o_metrics["kl"] == pytest.approx(t_metrics["kl"], abs=1e-10)
    else:
        assert "kl" not in t_metrics


def test_kl_times_ratio_changes_the_on_policy_gradient_in_both(tiny):
    # use_bias_correction_kl changes the KL gradient even on-policy (its documented semantics):
    # the parity test above would pass trivially if both sides ignored the flag, so check they don't
    logp, _, ref, adv, mask = batch()
    grads = {}
    for flag in (False, True):
        trainer = trainer_for(tiny, loss_type="dapo", beta=0.04, use_bias_correction_kl=flag, epsilon_high=None)
        grads[flag] = trl_loss(trainer, logp, None, ref, adv, mask)[1]
    assert (grads[True] - grads[False]).abs().max() > 1e-4


def test_dapo_and_bnpo_coincide_on_one_process(tiny):
    # TRL's "dapo" divides by num_items_in_batch / num_processes (the whole generation batch), "bnpo"
    # by the local mask sum. One process, steps_per_generation = 1, no accumulation: the same number.
    logp, old, ref, adv, mask = batch(1)
    losses = {}
    for lt in ("dapo", "bnpo"):
        trainer = trainer_for(tiny, loss_type=lt, beta=0.04, use_bias_correction_kl=True, epsilon_high=None)
        assert trainer.accelerator.num_processes == 1 and trainer.args.steps_per_generation == 1
        losses[lt] = trl_loss(trainer, logp, old, ref, adv, mask)[0].item()
    assert losses["dapo"] == pytest.approx(losses["bnpo"], abs=1e-12)
    # and "grpo" (per-response mean) genuinely differs on ragged lengths
    trainer = trainer_for(tiny, loss_type="grpo", beta=0.04, use_bias_correction_kl=True, epsilon_high=None)
    assert abs(trl_loss(trainer, logp, old, ref, adv, mask)[0].item() - losses["dapo"]) > 1e-4


# ---------------------------------------------------------------- advantages


def trl_advantages(trainer, rewards: list[float]) -> torch.Tensor:
    """TRL's _generate_and_score_completions with a fixed completion and our rewards."""

    def fixed_generation(prompts):
        n = len(prompts)
        # prompt_ids, completion_ids, tool_mask, completions, logprobs, extra_fields, images, tool_images
        return [[4, 2]] * n, [[5, 1]] * n, None, ["1 <eos>"] * n, None, {}, None, [None] * n

    trainer._generate = fixed_generation
    inputs = [{"prompt": "3 7 + 4 8 =", "target": r} for r in rewards]
    return trainer._generate_and_score_completions(inputs)["advantages"]


REWARDS = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]  # a 1,0,0,1 group and an all-equal group
GRADED = [1.0, 0.0, 0.0, 0.0, 0.5, 2.0, 0.0, 1.0]  # the chapter's 1,0,0,0 and a graded group


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
@pytest.mark.parametrize("rewards", [REWARDS, GRADED], ids=["binary", "graded"])
def test_advantages_match_trl(tiny, scale, rewards):
    trainer = trainer_for(tiny, scale_rewards=scale)
    theirs = trl_advantages(trainer, rewards)
    r = torch.tensor(rewards)  # TRL builds its rewards in float32
    ours = group_advantages(r, G, scale=scale, ddof=1)
    assert torch.allclose(ours, theirs, atol=1e-6, rtol=0)
    # the population std (the chapter's ddof=0) is a genuine convention difference, not round-off
    if scale != "none":
        assert not torch.allclose(group_advantages(r, G, scale=scale, ddof=0), theirs, atol=1e-3)


def test_trl_gives_0865875_for_rewards_1001(tiny):
    # TRL: sample std sqrt(1/3) = 0.577350, A = 0.5 / (0.577350 + 1e-4) = 0.865875 (chapter: +-1)
    theirs = trl_advantages(trainer_for(tiny, scale_rewards="group"), REWARDS)
    assert theirs[:4].tolist() == pytest.approx([0.865875, -0.865875, -0.865875, 0.865875], abs=1e-6)
    assert theirs[4:].tolist() == [0.0] * 4  # all-equal group: exactly 0 in TRL too
    assert math.isclose(0.5 / (math.sqrt(1 / 3) + 1e-4), 0.865875, abs_tol=1e-6)


# ---------------------------------------------------------------- every loss type, both importance levels

LOSS_TYPES = ("grpo", "bnpo", "dapo", "dr_grpo", "cispo", "sapo", "luspo", "vespo")
# Our keyword -> TRL's GRPOConfig field, for the parameters whose names differ.
TRL_NAME = {"clip_eps": "epsilon", "clip_eps_high": "epsilon_high", "kl_times_ratio": "use_bias_correction_kl"}
TRL_METRICS = {"cispo": ("cispo_clip_ratio",), "sapo": (), "vespo": ("vespo/phi_seq_mean",)}
CLIP_METRICS = ("clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean")


def variant(loss_type: str, level: str, name: str) -> dict:
    """Our policy_loss keywords for one case. "defaults": TRL's defaults (beta 0, eps 0.2, nothing else
    set). "tuned": beta > 0, every parameter of the loss off its default (GSPO's eps 3e-4 / 4e-4 at the
    sequence level, delta for the clipped losses, CISPO's cap inside the ratios' range, other
    temperatures, k and lambda), so a parameter ignored on either side shows."""
    if name == "defaults":
        return {"loss_type": loss_type, "importance_sampling_level": level}
    kw = {"loss_type": loss_type, "importance_sampling_level": level, "beta": 0.04, "kl_times_ratio": True,
          "clip_eps": 0.2, "clip_eps_high": 0.28}
    if level == "sequence":
        kw |= {"clip_eps": 3e-4, "clip_eps_high": 4e-4}
    if loss_type in ("grpo", "bnpo", "dapo", "dr_grpo", "luspo"):
        kw["delta"] = 1.5
    elif loss_type == "cispo":
        kw["clip_eps_high"] = 1.3
    elif loss_type == "sapo":
        kw |= {"sapo_temperature_pos": 2.0, "sapo_temperature_neg": 3.0}
    elif loss_type == "vespo":
        kw |= {"vespo_k_pos": 1.5, "vespo_lambda_pos": 2.5, "vespo_k_neg": 2.5, "vespo_lambda_neg": 1.5}
    return kw


@pytest.mark.parametrize("case", ["defaults", "tuned"])
@pytest.mark.parametrize("spread", [0.35, 1.5], ids=["near", "far"])
@pytest.mark.parametrize("level", ["token", "sequence"])
@pytest.mark.parametrize("loss_type", LOSS_TYPES)
def test_every_loss_type_and_level_matches_trl(tiny, loss_type, level, spread, case):
    kw = variant(loss_type, level, case)
    trainer = trainer_for(tiny, **{TRL_NAME.get(k, k): v for k, v in kw.items()})
    assert trainer.loss_type == loss_type and trainer.importance_sampling_level == level
    logp, old, ref, adv, mask = batch(2, spread)
    t_loss, t_grad, t_metrics = trl_loss(trainer, logp, old, ref, adv, mask)
    o_loss, o_grad, o_metrics = our_loss(logp, old, ref, adv, mask, max_completion_length=MAX_LEN, **kw)
    assert t_loss.dtype == F64
    assert o_loss.item() == pytest.approx(t_loss.item(), abs=1e-10, rel=1e-10)
    assert torch.allclose(o_grad, t_grad, atol=1e-10, rtol=0)
    assert o_grad.abs().max() > 1e-4  # a real gradient is being compared
    names = TRL_METRICS.get(loss_type, CLIP_METRICS)
    for name in names:  # TRL counts clipped tokens in float32, hence 1e-6
        assert o_metrics[name] == pytest.approx(t_metrics[name], abs=1e-6), name
    assert not {n for n in (*CLIP_METRICS, "cispo_clip_ratio", "vespo/phi_seq_mean") if n in t_metrics} - set(names)
    if kw.get("beta"):
        assert o_metrics["kl"] == pytest.approx(t_metrics["kl"], abs=1e-10)
    if names and spread > 1 and loss_type != "vespo":  # ratios far outside: the clip is really hit
        assert max(t_metrics[n] for n in names) > 0


def test_far_ratios_are_far_outside_the_clip():
    # the "far" batch: token ratios from about 0.04 to 8, so every clip range and cap is crossed
    logp, old, _, _, mask = batch(2, 1.5)
    ratio = torch.exp(logp - old)[mask.bool()]
    assert ratio.min() < 0.1 and ratio.max() > 5


def test_sequence_level_gives_one_ratio_per_response_in_trl_too(tiny):
    # GSPO: with the sequence level every token of a response gets the same gradient weight rho_i * A_i / |y_i|
    # up to log pi's own factor; on-policy (rho = 1) the two levels give the same gradient for grpo
    logp, _, ref, adv, mask = batch(3)
    grads = [trl_loss(trainer_for(tiny, loss_type="grpo", importance_sampling_level=lv), logp, None, ref, adv, mask)[1]
             for lv in ("token", "sequence")]
    assert torch.allclose(grads[0], grads[1], atol=1e-12)
    off = batch(3)[1]
    g_tok, g_seq = (trl_loss(trainer_for(tiny, loss_type="grpo", importance_sampling_level=lv), logp, off, ref, adv,
                             mask)[1] for lv in ("token", "sequence"))
    assert (g_tok - g_seq).abs().max() > 1e-3


@pytest.mark.parametrize("bad", [{"loss_type": "ppo"}, {"importance_sampling_level": "tokens"}])
def test_what_trl_refuses_we_refuse_naming_the_parameter(tiny, bad):
    logp, old, ref, adv, mask = batch()
    with pytest.raises(ValueError):
        trl_loss(make_trainer(tiny, **bad), logp, old, ref, adv, mask)
    with pytest.raises(ValueError, match=next(iter(bad))):
        our_loss(logp, old, ref, adv, mask, **bad)


def test_our_defaults_are_trls_except_loss_type():
    import inspect

    d = GRPOConfig(output_dir="unused", report_to=[], use_cpu=True)
    params = inspect.signature(policy_loss).parameters
    for ours in ("clip_eps", "clip_eps_high", "beta", "importance_sampling_level", "delta", "sapo_temperature_pos",
                 "sapo_temperature_neg", "vespo_k_pos", "vespo_lambda_pos", "vespo_k_neg", "vespo_lambda_neg"):
        assert params[ours].default == getattr(d, TRL_NAME.get(ours, ours)), ours
    assert params["loss_type"].default == "grpo" and d.loss_type == "dapo"  # the chapter's, not TRL's
