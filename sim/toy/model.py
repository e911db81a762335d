"""The toy's model: 24 prompts in logit space, and what a state of it looks like.

Prompt j is solved with probability

    p_j = sigmoid(z_j),   z_j = w + u_j - d_j

with d_j a fixed difficulty (increasing left to right), u_j a per-prompt parameter and w a shared
"skill" that every prompt's gradient moves. The policy for prompt j is a Bernoulli over two one-token
answers {correct, wrong}: log pi(correct) = log sigmoid(z_j), log pi(wrong) = log sigmoid(-z_j).

This file holds the configuration (every field declared once, with its range, via sim.settings) and
the closed forms of one state: the policy, KL to the reference, entropy and the chance that a group
teaches nothing. Shapes: S seeds, P prompts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from sim.refusals import refused
from sim.settings import grpo_setting, setting, validate

# With one token per answer the four aggregations (grpo, bnpo, dapo, dr_grpo) are one loss here: "grpo"
# stands for PPO's clipped surrogate; "cispo" is TRL's loss_type="cispo" (sim/toy/update.surrogate_grad).
TOY_LOSS_TYPES = ("grpo", "cispo")

# Caps that keep a run from hanging the app or the machine.
MAX_PROMPTS = 256
MAX_GROUP_SIZE = 1024
MAX_ITERATIONS = 5000
MAX_SEEDS = 1024
HISTORY_ARRAYS = 3  # (T+1, S, P) float64 arrays a history keeps: p, u and the counts
MAX_MEMORY_MB = 480.0  # a run whose history would hold more is refused before anything is allocated


@dataclass(frozen=True)
class ToyConfig:
    """Everything a toy run depends on. An invalid value raises ValueError naming the field and its range."""

    n_prompts: int = setting(24, "number of prompts P in the pool", lo=1, hi=MAX_PROMPTS, integer=True)
    d_min: float = setting(-2.0, "difficulty of the easiest (leftmost) prompt", lo=-50.0, hi=50.0, step=0.5,
                           label="Difficulty of the easiest prompt")
    d_max: float = setting(7.0, "difficulty of the hardest prompt; d_j spread linearly d_min..d_max",
                           lo=-50.0, hi=50.0, step=0.5, label="Difficulty of the hardest prompt")
    difficulties: tuple[float, ...] | None = setting(
        None, "explicit difficulties d_j, one per prompt, overriding d_min/d_max", kind="numbers", lo=-50.0,
        hi=50.0, optional=True)
    u_init: float = setting(0.0, "initial per-prompt parameter u_j (the same for every j)", lo=-50.0, hi=50.0)
    w_init: float = setting(0.0, "initial shared skill w", lo=-50.0, hi=50.0)
    group_size: int = grpo_setting("group_size", hi=MAX_GROUP_SIZE)
    lr: float = setting(0.2, "step size on the per-prompt parameters u", lo=0.0, hi=1000.0, step=0.05,
                        label="Learning rate on each prompt's u_j")
    lr_w: float | None = setting(None, "step size on the shared skill w (none: the same as lr; 0 switches the "
                                 "shared skill off)", lo=0.0, hi=1000.0, step=0.05, optional=True,
                                 label="Learning rate on the shared skill w")
    beta: float = grpo_setting("beta")
    scale: str = grpo_setting("scale")
    baseline: str = grpo_setting("baseline")
    ddof: int = grpo_setting("ddof")
    eps: float = grpo_setting("eps")
    mu: int = grpo_setting("mu")
    clip_eps: float = grpo_setting("clip_eps")
    clip_eps_high: float | None = grpo_setting("clip_eps_high", label="Clip ε high (CISPO: ε_max)")
    # "grpo" stands for PPO's clipped surrogate here (one token per answer: the four aggregations are one loss)
    loss_type: str = grpo_setting("loss_type", choices=TOY_LOSS_TYPES)
    dynamic_sampling: bool = setting(False, "DAPO dynamic sampling: drop all-equal groups, draw more to refill",
                                     key="dyn", label="Dynamic sampling (DAPO)")
    max_redraws: int = setting(8, "refill rounds per iteration under dynamic sampling", lo=0, hi=64, integer=True)
    iterations: int = setting(200, "training iterations T", lo=1, hi=MAX_ITERATIONS, integer=True, step=10, key="T",
                              label="Iterations")
    seed: int = setting(0, "seed of the random generator", lo=0, hi=2**63 - 1, integer=True, step=1, label="Seed")
    n_seeds: int = setting(1, "independent runs S simulated at once", lo=1, hi=MAX_SEEDS, integer=True, step=1,
                           key="seeds", label="Seeds in the band")

    def __post_init__(self) -> None:
        validate(self)
        if self.difficulties is not None and len(self.difficulties) != self.n_prompts:
            raise refused("difficulties_count", n_prompts=self.n_prompts, got=len(self.difficulties))
        if memory_mb(self) > MAX_MEMORY_MB:
            raise refused("memory", mb=f"{memory_mb(self):,.0f}", arrays=HISTORY_ARRAYS, rows=self.iterations + 1,
                          seeds=self.n_seeds, prompts=self.n_prompts, cap=f"{MAX_MEMORY_MB:,.0f}")

    @property
    def lr_shared(self) -> float:
        """Step size on w (lr_w, or lr when lr_w is None)."""
        return self.lr if self.lr_w is None else self.lr_w


def memory_mb(cfg: ToyConfig) -> float:
    """Memory a run's history holds, in MB: HISTORY_ARRAYS float64 arrays of (T+1, S, P)."""
    return HISTORY_ARRAYS * 8 * (cfg.iterations + 1) * cfg.n_seeds * cfg.n_prompts / 1e6


def make_difficulties(cfg: ToyConfig) -> np.ndarray:
    """(P,) d_j: cfg.difficulties if given, else linearly spaced from d_min to d_max."""
    if cfg.difficulties is not None:
        return np.asarray(cfg.difficulties, dtype=float)
    return np.linspace(cfg.d_min, cfg.d_max, cfg.n_prompts)


def policy(z: np.ndarray, out: tuple | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """pi(correct), pi(wrong), log pi(correct), log pi(wrong) for logits z, each accurate in relative terms,
    into `out` (four arrays of z's shape) if given: run_toy computes one state an iteration without allocating.

    log sigmoid(-z) = log sigmoid(z) - z, so three transcendental calls instead of four.
    """
    if out is None:
        z = np.asarray(z, dtype=float)
        out = tuple(np.empty_like(z) for _ in range(4))
    p_c, p_w, lp_c, lp_w = out
    expit(z, out=p_c)
    if np.count_nonzero(p_c) == p_c.size:  # (count_nonzero: the cheapest test, run_toy's every iteration)
        np.log(p_c, out=lp_c)
    else:  # log sigmoid(z) ~ z where sigmoid underflows (z < -745)
        np.log(p_c, out=lp_c, where=p_c > 0)
        np.copyto(lp_c, z, where=p_c == 0)
    np.subtract(lp_c, z, out=lp_w)
    np.exp(lp_w, out=p_w)
    return p_c, p_w, lp_c, lp_w


def bernoulli_kl(p_c, p_w, lp_c, lp_w, lr_c, lr_w) -> np.ndarray:
    """Exact KL(pi || pi_ref) of Bernoullis (nats), averaged over the last axis (prompts), from policy()
    of z and of z_ref:

        KL = p log(p / p_ref) + (1 - p) log((1 - p) / (1 - p_ref))
    """
    return (dot(p_c, lp_c - lr_c) + dot(p_w, lp_w - lr_w)) / p_c.shape[-1]


def bernoulli_entropy(p_c, p_w, lp_c, lp_w) -> np.ndarray:
    """Entropy H = -p log p - (1 - p) log(1 - p) of Bernoullis (nats), averaged over the last axis
    (prompts), from policy(z)."""
    return -(dot(p_c, lp_c) + dot(p_w, lp_w)) / p_c.shape[-1]


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sum(a * b) over the last axis, in one pass (no temporary)."""
    return np.einsum("...p,...p->...", a, b)


def sum_p(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Sum over the last axis (the prompts), row by row in one order whatever the number of rows (so a run's
    first iterations do not depend on its length): about 3x faster than x.sum(axis=-1) over 24 prompts."""
    return np.einsum("...p->...", x, out=out)


def mean_p(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis (the prompts): sum_p(x) / P."""
    return sum_p(x) / x.shape[-1]


def no_signal(p_c: np.ndarray, p_w: np.ndarray, group_size: int) -> np.ndarray:
    """sim.exercises.p_no_signal, p^G + (1 - p)^G, from p and 1 - p = policy(z)[:2] (accurate near p = 1),
    by repeated squaring: ~3x cheaper than exp(G log p) or pow here. A test proves it equal to p_no_signal."""
    return _int_power(p_c, group_size) + _int_power(p_w, group_size)


def _int_power(x: np.ndarray, n: int) -> np.ndarray:
    """x**n for an integer n >= 1 by binary exponentiation (at most 2 log2 n multiplications)."""
    out = None
    while True:
        if n & 1:
            out = x if out is None else out * x
        n >>= 1
        if not n:
            return out
        x = x * x


def gave_signal(counts: np.ndarray, group_size: int) -> np.ndarray:
    """Which groups had a non-zero advantage: 0 < k < G correct answers. With 0/1 rewards this is
    `not sim.grpo.zero_std(rewards)` written on the count k of correct answers."""
    k = np.asarray(counts)
    return (k > 0) & (k < group_size)


def init_state(cfg: ToyConfig, S: int):
    """d (P,), w (S,), u (S, P) at t = 0 and z_ref (S, P): the initial policy is the KL reference."""
    d = make_difficulties(cfg)
    w = np.full(S, float(cfg.w_init))
    u = np.full((S, len(d)), float(cfg.u_init))
    return d, w, u, w[:, None] + u - d
