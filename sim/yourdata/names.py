"""Every metric name the reader knows, in one table: TRL's GRPOTrainer from 0.14 to 1.16, transformers' Trainer,
verl and OpenRLHF, each read as one meaning, TRL 1.16.0's name (docs/your-data.md prints this table;
tests/test_yourdata_names.py checks the two agree).

    canonical("completion_length")               # ("completions/mean_length", its Name row): TRL <= 0.16
    canonical("rewards/accuracy")                # ("rewards/accuracy/mean", ...): TRL <= 0.16 logged no /mean
    canonical("val-core/gsm8k/acc/mean@1")       # ("eval_reward", ...): verl's validation
    canonical("timing_s/gen")                    # None: not a metric the rules read

Where the names came from (read from each project's history, not from its documentation):
  * TRL: trl/trainer/grpo_trainer.py's `self._metrics[mode][...]` at each release tag. 0.14-0.15 log
    completion_length, reward, reward_std, rewards/<func> and kl (at every step); 0.16 adds clip_ratio and
    num_tokens and logs kl only when beta != 0; 0.17 renames completion_length to completions/mean_length (with
    min, max, clipped_ratio and the terminated lengths), rewards/<func> to rewards/<func>/mean (with /std, the std
    over the batch), and clip_ratio to clip_ratio/low_mean, high_mean, region_mean, low_min, high_max; 0.18 adds
    frac_reward_zero_std; 0.20 entropy; 0.23 sampling/*; 0.26 cispo_clip_ratio and tools/*; 1.0 vespo/phi_seq_mean;
    1.7 aux_loss; 1.8 policy_loss and entropy_coef. reward_std is the mean of the groups' stds up to 0.26
    (`std_grouped_rewards.mean()`) and the std over the whole batch from 0.27 (`rewards.std()`): the 0/1 check
    reads it with its own semantics (sim/yourdata/rules/zero_std.py).
  * transformers' Trainer: loss, grad_norm, learning_rate, epoch (and step_time in recent releases).
  * verl: verl/trainer/ppo/metric_utils.py (critic/score/*, response_length/*), the actors' update metrics
    (actor/pg_loss, pg_clipfrac, grad_norm, kl_loss, kl_coef, lr) and ray_trainer.py: actor/entropy_loss (0.4: the
    mean entropy of the old policy's tokens) became actor/entropy in 0.5 (later releases log actor/entropy_loss again
    as the entropy term of the loss, the same quantity); the validation's core metric is
    val-core/<data source>/<acc if logged, else reward>/mean@<n>, older releases' val/test_score/<data source>.
  * OpenRLHF: openrlhf/trainer/ray/ppo_actor.py's status (its W&B logger writes train/<name>).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TRL_116 = (  # TRL 1.16.0 GRPOTrainer's names, then transformers' Trainer's: the reader's one vocabulary
    "reward", "reward_std", "frac_reward_zero_std", "entropy", "kl",
    "clip_ratio/low_mean", "clip_ratio/high_mean", "clip_ratio/region_mean", "clip_ratio/low_min",
    "clip_ratio/high_max", "cispo_clip_ratio", "vespo/phi_seq_mean",
    "completions/mean_length", "completions/min_length", "completions/max_length", "completions/clipped_ratio",
    "completions/mean_terminated_length", "completions/min_terminated_length", "completions/max_terminated_length",
    "num_tokens", "policy_loss", "entropy_coef", "aux_loss", "tools/call_frequency", "tools/failure_frequency",
    "sampling/sampling_logp_difference/mean", "sampling/sampling_logp_difference/max",
    "sampling/importance_sampling_ratio/min", "sampling/importance_sampling_ratio/mean",
    "sampling/importance_sampling_ratio/max",
    "loss", "grad_norm", "learning_rate", "epoch", "step_time",
)  # fmt: skip
EVAL = ("eval_reward", "eval_reward_std", "eval_frac_reward_zero_std", "eval_loss", "eval_entropy",
        "eval_completions/mean_length")  # TRL's eval_ entries that are read (and eval_rewards/<f>/mean)


@dataclass(frozen=True)
class Name:
    """One row of the table: a name as a file spells it ({f}: a reward function, {src}: a data source, {n}: a
    number), what it is read as, who writes it, and how it differs from TRL 1.16.0's metric."""

    spelled: str
    means: str
    where: str
    differs: str = ""


NAMES = (
    # TRL's older names
    Name("completion_length", "completions/mean_length", "TRL 0.14-0.16"),
    Name("rewards/{f}", "rewards/{f}/mean", "TRL 0.14-0.16", "no per-function std is logged"),
    Name("clip_ratio", "clip_ratio/region_mean", "TRL 0.16", "one share of clipped tokens, low and high together"),
    Name("reward_std", "reward_std", "TRL 0.14-0.26",
         "the mean of the groups' stds, not the batch's (TRL 0.27 and later: the std over the batch)"),
    # verl
    Name("critic/score/mean", "reward", "verl",
         "the reward function's score, before any KL penalty in the reward (critic/rewards/mean is after it)"),
    Name("actor/entropy", "entropy", "verl 0.5 and later"),
    Name("actor/entropy_loss", "entropy", "verl 0.4 (and later releases' entropy term)",
         "the mean entropy of the response tokens, under its loss's name"),
    Name("actor/grad_norm", "grad_norm", "verl"),
    Name("actor/pg_loss", "policy_loss", "verl"),
    Name("actor/pg_clipfrac", "clip_ratio/region_mean", "verl", "the share of tokens whose clipped term was taken"),
    Name("actor/kl_loss", "kl", "verl (use_kl_loss)",
         "the KL to the reference in the loss; its estimator is kl_loss_type (low_var_kl is the chapter's k3)"),
    Name("response_length/mean", "completions/mean_length", "verl"),
    Name("response_length/max", "completions/max_length", "verl"),
    Name("response_length/min", "completions/min_length", "verl"),
    Name("response_length/clip_ratio", "completions/clipped_ratio", "verl"),
    Name("actor/lr", "learning_rate", "verl"),
    Name("training/epoch", "epoch", "verl"),
    Name("val-core/{src}/reward/mean@{n}", "eval_reward", "verl", "the validation reward (the first data source)"),
    Name("val-core/{src}/acc/mean@{n}", "eval_reward", "verl", "the validation accuracy, verl's core metric when a "
         "reward function returns acc"),
    Name("val/test_score/{src}", "eval_reward", "verl before 0.3", "the validation score"),
    # OpenRLHF (its W&B logger writes train/<name>)
    Name("ppo_clip_ratio", "clip_ratio/region_mean", "OpenRLHF"),
    Name("entropy_loss", "entropy", "OpenRLHF", "the masked mean entropy of the policy"),
    Name("response_length", "completions/mean_length", "OpenRLHF"),
    Name("actor_lr", "learning_rate", "OpenRLHF"),
    Name("actor_grad_norm", "grad_norm", "OpenRLHF"),
    # hand-written trainers' flat JSON Lines
    Name("mean_reward", "reward", "hand-written trainers", "read as the mean reward when no `reward` is logged"),
    Name("reward_mean", "reward", "hand-written trainers", "read as the mean reward when no `reward` is logged"),
)
SETTING_NAMES = {"actor/kl_coef": "beta"}  # verl: a setting logged at every step (kl_loss_coef), not a metric
_FIELD = {"{f}": "(?P<f>.+?)", "{src}": "(?P<src>.+)", "{n}": r"\d+"}


def _pattern(spelled: str) -> re.Pattern:
    out = re.escape(spelled)
    for field, group in _FIELD.items():
        out = out.replace(re.escape(field), group)
    return re.compile(out)


_LITERAL = {n.spelled: n for n in NAMES if "{" not in n.spelled and n.spelled != n.means}
_TEMPLATES = [(n, _pattern(n.spelled)) for n in NAMES if "{" in n.spelled]
_REWARD_FUNC = re.compile(r"rewards/(.+)/(mean|std)")
_EVAL_FUNC = re.compile(r"eval_rewards/(.+)/mean")
PREFERRED = ("reward", "entropy")  # a canonical name two spellings share in one file: TRL's own spelling wins, then
#                                   the earlier row (actor/entropy before actor/entropy_loss, a logged reward before
#                                   a hand-written trainer's mean_reward)


def canonical(key: str) -> tuple[str, Name | None] | None:
    """The metric `key` is read as (TRL 1.16.0's name) and the table's row that maps it (None: TRL 1.16.0's own
    name); None for a name the rules do not read."""
    if key in TRL_116 or key in EVAL or _REWARD_FUNC.fullmatch(key) or _EVAL_FUNC.fullmatch(key):
        return key, None
    if key in _LITERAL:
        return _LITERAL[key].means, _LITERAL[key]
    for row, pattern in _TEMPLATES:
        m = pattern.fullmatch(key)
        if m is not None and not (row.spelled == "rewards/{f}" and "/" in m.group("f")):
            return row.means.replace("{f}", m.groupdict().get("f", "")), row
    return None


def rank(key: str) -> int:
    """Where a spelling stands among those of one meaning: 0 for TRL 1.16.0's own name, else 1 + its table row."""
    hit = canonical(key)
    if hit is None or hit[1] is None:
        return 0
    return 1 + NAMES.index(hit[1])


# ---- logs that are not GRPO runs ------------------------------------------------------------------------------

NOT_GRPO = (  # (what the log is, names that say so): the first whose names a file holds
    ("a DPO-family preference run (DPO, IPO, KTO, ORPO, SimPO)", ("rewards/chosen", "rewards/rejected",
                                                                  "rewards/margins", "rewards/accuracies",
                                                                  "logps/chosen", "logps/rejected")),
    ("an ORPO run", ("log_odds_ratio", "log_odds_chosen", "nll_loss")),
    ("a PPO run (TRL's PPOTrainer)", ("objective/kl", "objective/scores", "objective/rlhf_reward")),
    ("a reward model's training", ("eval_accuracy", "accuracy")),
)
GRPO_SIGNS = ("reward", "frac_reward_zero_std", "reward_std")  # and rewards/<f>/mean: a GRPO run logs one of them


def not_grpo(keys, read: set[str]) -> str | None:
    """What the log is when it is not a GRPO run (from its file's keys and the metrics read from them), in words;
    None for a GRPO run (it logs a reward, reward_std, frac_reward_zero_std or a reward function's mean)."""
    keys = set(keys)
    for what, names in NOT_GRPO[:2]:
        if keys & set(names):
            return f"{what}: {', '.join(sorted(keys & set(names))[:4])}"
    if any(n in read for n in GRPO_SIGNS) or any(_REWARD_FUNC.fullmatch(n) for n in read):
        return None
    for what, names in NOT_GRPO[2:]:
        if keys & set(names):
            return f"{what}: {', '.join(sorted(keys & set(names))[:4])}"
    if read & {"loss", "grad_norm", "learning_rate"} or any(k.startswith("eval_") for k in keys):
        return ("a supervised or other Trainer run (" + ", ".join(sorted(read & {"loss", "grad_norm",
                                                                              "learning_rate"})[:3] or ["eval_*"])
                + "; no reward of any kind)")
    return None
