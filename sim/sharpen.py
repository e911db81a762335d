"""The sharpening toy of the pass@k debate (Chapter 15, "Does RL teach new reasoning?").

A policy chooses one of K solution strategies with probabilities softmax(theta), and the same
theta is SHARED by every problem (a model has one set of weights, not one per problem).
Strategy k solves problem j with probability success[j, k], so the model solves problem j with

    p_j = sum_k softmax(theta)_k * success[j, k]

Default: problem A is solved by the common strategy, problem B only by a rare one; a third
strategy (a detour) solves neither. The base policy (0.6, 0.35, 0.05) gives the chapter's
p = (0.6, 0.05). GRPO samples groups of G strategies per problem, rewards them 0/1, and pushes
theta with group-relative advantages. Both problems pull on the same theta. A's groups have
signal most of the time, and each pushes the common strategy up and every other one down, the
rare one included; a B group has any success only 1 - 0.95^8 = 34% of the time. On balance the
common strategy wins, the policy's entropy collapses, and the rare strategy, the only one that
solved B, fades: with the defaults p goes to about (0.98, 0.01) (the median over seeds; seed 0 ends at
(0.97, 0.03)). pass@1 goes up and pass@64 goes down, so the pass@k curves of the base and trained models
cross (near k = 2.6 for the median run, 2.9 for seed 0).
Nothing forces this: with noisier updates (groups_per_problem=1) a run now and then lets the
rare strategy revive instead, and the std division (scale="group") makes B's rare successes count more.

Each answer is one "token" (its strategy), so the loss is sim.grpo.policy_loss on (B, 1) log-probs.

Shapes: P problems, K strategies, G group size, I iterations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from sim.grpo import advantage_table, group_advantages, policy_loss, zero_std
from sim.passk import crossover_k, mean_pass_at_k_known_p, pass_at_k_known_p
from sim.refusals import refused, shape_text
from sim.rng import sharpen_uniforms
from sim.settings import grpo_setting, setting, validate

STRATEGIES = ("common", "detour", "rare")
PROBLEMS = ("A", "B")
METHODS = ("counts", "autograd")
CHUNK_DRAWS = 16384  # answers whose uniforms train() draws at once

# The chapter's two-problem example: success probability per problem before and after RL.
CHAPTER_P_BEFORE = (0.6, 0.05)
CHAPTER_P_AFTER = (0.98, 0.01)


@dataclass(frozen=True)
class SharpenConfig:
    success: tuple[tuple[float, ...], ...] = ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0))  # (P, K) P(correct | problem, strategy)
    init_probs: tuple[float, ...] = (0.6, 0.35, 0.05)  # (K,) base policy over strategies, softmax(theta_0)
    group_size: int = grpo_setting("group_size", key="sG", label="Sharpening toy: group size G")
    groups_per_problem: int = setting(4, "groups of each problem per iteration (a batch of P x this groups)",
                                      lo=1, hi=1024, integer=True)
    iterations: int = setting(100, "GRPO updates of the shared logits", lo=0, hi=100_000, integer=True, step=10,
                              key="sT", label="Sharpening toy: iterations")
    lr: float = setting(0.5, "plain gradient step on the logits: theta -= lr * grad", lo=0.0, hi=10.0, step=0.05)
    scale: str = grpo_setting("scale", choices=("group", "none"))  # counts: batch std would couple the groups
    ddof: int = grpo_setting("ddof")
    eps: float = grpo_setting("eps")
    k_eval: int = setting(64, 'the "large k" tracked in the history as pass@k_eval', lo=1, hi=100_000, integer=True)
    seed: int = setting(0, "seeds the portable generator (sim/rng.py) that samples strategies and rewards", lo=0,
                        hi=2**63 - 1, integer=True, step=1, label="Seed")

    def __post_init__(self):
        S = np.asarray(self.success, dtype=float)
        if S.ndim != 2 or S.shape[0] < 1 or S.shape[1] < 2:
            raise refused("success_shape", shape=shape_text(S.shape))
        if not np.all((S >= 0) & (S <= 1)):
            raise refused("success_range")
        pi = np.asarray(self.init_probs, dtype=float)
        if pi.shape != (S.shape[1],):
            raise refused("init_count", strategies=S.shape[1], shape=shape_text(pi.shape))
        if not np.all(pi > 0) or abs(pi.sum() - 1) > 1e-6:
            raise refused("init_sum")
        validate(self)


# ---------------------------------------------------------------- the model


def solve_probs(probs: np.ndarray, success: np.ndarray) -> np.ndarray:
    """p_j = sum_k pi_k success[j, k]: per-problem success probability, (..., P) from pi (..., K)."""
    return np.asarray(probs) @ np.asarray(success).T


def entropy(probs: np.ndarray) -> float:
    """H(pi) = -sum_k pi_k log pi_k in nats; log K for a uniform policy, 0 for a deterministic one."""
    pi = np.asarray(probs, dtype=float)
    nz = pi[pi > 0]
    return float(-(nz * np.log(nz)).sum())


def sharpening_summary(p_before=CHAPTER_P_BEFORE, p_after=CHAPTER_P_AFTER, k: int = 64) -> dict[str, float | None]:
    """pass@1 and pass@k, averaged over problems, of a model before and after RL, from known p.

        pass@1 = mean_j p_j,     pass@k = mean_j [1 - (1 - p_j)^k]

    Chapter: p = (0.6, 0.05) -> (0.98, 0.01) gives pass@1 0.325 -> 0.495 and pass@64
    (1 + (1 - 0.95^64))/2 = 0.981 -> (1 + (1 - 0.99^64))/2 = 0.737. Also returns the k where
    the two mean curves cross (log-k interpolation, k = 1..k), None if they do not.
    """
    before, after = np.asarray(p_before, dtype=float), np.asarray(p_after, dtype=float)
    ks = np.arange(1, k + 1)
    curve_before = mean_pass_at_k_known_p(before, ks)  # (k,) one value per k
    curve_after = mean_pass_at_k_known_p(after, ks)
    return {
        "pass@1_before": float(before.mean()),
        "pass@1_after": float(after.mean()),
        f"pass@{k}_before": float(curve_before[-1]),
        f"pass@{k}_after": float(curve_after[-1]),
        "crossover_k": crossover_k(ks, curve_after, curve_before) if k > 1 else None,
    }


# ---------------------------------------------------------------- one GRPO step


def sample_groups(probs: np.ndarray, success: np.ndarray, u: np.ndarray, v: np.ndarray):
    """Sample G strategies per group from pi, then 0/1 rewards from success[problem, strategy], by inversion
    of the uniforms u (strategies) and v (rewards), (R, G) each (sim.rng.sharpen_uniforms):

        strategy = #{k : cdf_k <= u cdf_K}  (cdf = cumsum(pi)),     reward = [v < success[row, strategy]]

    `success` (R, K) has one row per group of the batch (a problem may appear several times).
    Returns strategies (R, G) int and rewards (R, G) float.
    """
    S = np.asarray(success)
    R = S.shape[0]
    cdf = np.cumsum(probs)  # (K,)
    strategies = np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), len(probs) - 1)  # (R, G)
    rewards = (v < S[np.arange(R)[:, None], strategies]).astype(float)  # (R, G)
    return strategies, rewards


def _advantage_kwargs(cfg: SharpenConfig) -> dict:
    return {"scale": cfg.scale, "ddof": cfg.ddof, "eps": cfg.eps}


def grad_autograd(theta: np.ndarray, strategies: np.ndarray, rewards: np.ndarray, cfg: SharpenConfig) -> np.ndarray:
    """d loss / d theta through sim.grpo: group_advantages, then policy_loss on (B, 1) log-probs.

    The reference path: each answer is one token (its strategy), on-policy (ratio 1), no KL.
    """
    P, G = strategies.shape
    th = torch.tensor(theta, dtype=torch.float64, requires_grad=True)  # (K,)
    r = torch.as_tensor(rewards, dtype=torch.float64).reshape(-1)  # (B,) with B = P*G
    adv = group_advantages(r, G, **_advantage_kwargs(cfg))  # (B,)
    logp = torch.log_softmax(th, dim=0)[torch.as_tensor(strategies).reshape(-1)].unsqueeze(1)  # (B, 1)
    loss, _ = policy_loss(logp, None, None, adv, torch.ones_like(logp), loss_type="grpo")
    (grad,) = torch.autograd.grad(loss, th)
    return grad.numpy()


def grad_counts(theta: np.ndarray, strategies: np.ndarray, rewards: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The same gradient as grad_autograd, from counts (tests prove them equal).

    At ratio 1 with one token per answer, loss_type="grpo" has gradient

        d loss / d theta = -(1/B) sum_i A_i (onehot(y_i) - pi)

    with A_i looked up in `table` (sim.grpo.advantage_table, (G+1, 2)) by the group's count of correct answers.
    """
    P, G = strategies.shape
    K = theta.shape[0]
    pi = _softmax(theta)  # (K,)
    c = rewards.sum(axis=1).astype(int)  # (P,)
    adv = np.where(rewards > 0, table[c, 0][:, None], table[c, 1][:, None])  # (P, G)
    per_strategy = np.bincount(strategies.reshape(-1), weights=adv.reshape(-1), minlength=K)  # (K,)
    return -(per_strategy - adv.sum() * pi) / (P * G)


# ---------------------------------------------------------------- training


@dataclass(frozen=True)
class SharpenHistory:
    """Per-iteration record of a run: index 0 is the base policy, index i the policy after i updates."""

    config: SharpenConfig
    probs: np.ndarray  # (I+1, K) strategy probabilities softmax(theta)
    p: np.ndarray  # (I+1, P) per-problem success probability
    entropy: np.ndarray  # (I+1,) policy entropy in nats
    pass_at_1: np.ndarray  # (I+1,) mean_j p_j
    pass_at_k: np.ndarray  # (I+1,) mean_j 1 - (1 - p_j)^k_eval
    reward: np.ndarray  # (I,) mean sampled reward of the iteration's groups (TRL: "reward")
    frac_reward_zero_std: np.ndarray  # (I,) share of groups with all-equal rewards (TRL's name)

    def curves(self, ks=None, *, at: int = -1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mean pass@k curves of the base policy and of iteration `at`: (ks, before, after)."""
        ks = np.arange(1, self.config.k_eval + 1) if ks is None else np.asarray(ks)
        return ks, mean_pass_at_k_known_p(self.p[0], ks), mean_pass_at_k_known_p(self.p[at], ks)

    def crossover(self, ks=None, *, at: int = -1) -> float | None:
        """The k where the trained curve falls below the base curve (log-k interpolation), or None."""
        ks, before, after = self.curves(ks, at=at)
        return crossover_k(ks, after, before)


def train(
    cfg: SharpenConfig = SharpenConfig(),
    *,
    method: str = "counts",
    on_step: Callable[[int, dict], None] | None = None,
) -> SharpenHistory:
    """Run GRPO on the shared strategy logits and record the history.

    Per iteration: sample groups_per_problem groups of G strategies for every problem, reward
    them 0/1, take the gradient of the GRPO loss and one plain gradient step on theta.
    method="autograd" differentiates sim.grpo.policy_loss (the reference); method="counts" uses
    the equal closed form of grad_counts (tests prove them equal), ~30x faster.
    `on_step(i, metrics)` is called after update i. Deterministic for a given cfg.seed: the draws come from
    sim/rng.py's portable generator (iteration i, group b, answer g), so assets/js/engine.js draws the same.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    S = np.asarray(cfg.success, dtype=float)  # (P, K)
    theta = np.log(np.asarray(cfg.init_probs, dtype=float))  # (K,) softmax(theta) = init_probs
    table = advantage_table(cfg.group_size, **_advantage_kwargs(cfg)).numpy() if method == "counts" else None

    batch = np.repeat(S, cfg.groups_per_problem, axis=0)  # (R, K) with R = P * groups_per_problem: the batch's rows
    R, G, I = batch.shape[0], cfg.group_size, cfg.iterations
    chunk = max(1, CHUNK_DRAWS // (R * G))  # iterations whose uniforms are drawn at once
    probs = [_softmax(theta)]
    reward, zero_frac = [], []
    for i in range(I):
        if i % chunk == 0:
            u, v = sharpen_uniforms(cfg.seed, i, min(chunk, I - i), R, G)  # (n, R, G) each
        strategies, rewards = sample_groups(probs[-1], batch, u[i % chunk], v[i % chunk])  # (R, G) each
        if table is not None:
            g = grad_counts(theta, strategies, rewards, table)
        else:
            g = grad_autograd(theta, strategies, rewards, cfg)
        theta = theta - cfg.lr * g  # (K,) plain SGD
        probs.append(_softmax(theta))
        reward.append(rewards.mean())
        zero_frac.append(zero_std(rewards).mean())
        if on_step is not None:
            metrics = {"reward": reward[-1], "frac_reward_zero_std": zero_frac[-1], "p": solve_probs(probs[-1], S)}
            on_step(i + 1, metrics)

    pi = np.stack(probs)  # (I+1, K)
    p = solve_probs(pi, S)  # (I+1, P)
    return SharpenHistory(
        config=cfg,
        probs=pi,
        p=p,
        entropy=np.array([entropy(x) for x in pi]),
        pass_at_1=p.mean(axis=1),
        pass_at_k=pass_at_k_known_p(p, cfg.k_eval).mean(axis=1),
        reward=np.array(reward),
        frac_reward_zero_std=np.array(zero_frac),
    )


def _softmax(theta: np.ndarray) -> np.ndarray:
    e = np.exp(theta - theta.max())
    return e / e.sum()
