"""The chapter's "Watching it train" toy: GRPO on 24 prompts in logit space.

Each prompt j is solved with probability

    p_j = sigmoid(z_j),   z_j = w + u_j - d_j

with d_j a fixed difficulty (increasing left to right), u_j a per-prompt parameter and w a shared
"skill" that every prompt's gradient moves. The policy for prompt j is a Bernoulli over two one-token
answers {correct, wrong}: log pi(correct) = log sigmoid(z_j), log pi(wrong) = log sigmoid(-z_j).
Each iteration samples G answers per prompt, scores them 1/0, computes group advantages and takes one
policy-gradient step (or mu clipped inner steps) on (u, w). GRPO's loss (sim/grpo.py, T = 1 token,
mask all ones) is then exactly a function of z, and every aggregation ("grpo", "dapo", "dr_grpo")
coincides because every response has one token.

Two code paths compute the same update:
  reference_update   samples every answer, sim.grpo.group_advantages + policy_loss + autograd (torch)
  count_update       closed form from the number k of correct answers per group (numpy, S seeds at once)
The second is the fast path; tests prove it equal to the first. Since the update depends on a group
only through k, run_toy draws k ~ Binomial(G, p_j) instead of G answers: cost per iteration does not
depend on G.

Shapes: S seeds, P prompts, G group size, T iterations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

SCALES = ("group", "batch", "none")
BASELINES = ("mean", "loo", "none")

# Caps that keep a run from hanging the app.
MAX_PROMPTS = 256
MAX_GROUP_SIZE = 1024
MAX_ITERATIONS = 5000
MAX_SEEDS = 1024
MAX_MU = 16
MAX_REDRAWS = 64


@dataclass(frozen=True)
class ToyConfig:
    """Everything a toy run depends on. Invalid values raise ValueError naming the field and its range."""

    n_prompts: int = 24  # P, number of prompts in the pool, 1..256
    d_min: float = -3.0  # difficulty of the easiest (leftmost) prompt, |d| <= 50
    d_max: float = 6.0  # difficulty of the hardest (rightmost) prompt; d_j spread linearly d_min..d_max
    difficulties: tuple[float, ...] | None = None  # explicit d_j (length n_prompts); overrides d_min/d_max
    u_init: float = 0.0  # initial per-prompt parameter u_j (same for all j), |u| <= 50
    w_init: float = 0.0  # initial shared skill w, |w| <= 50
    group_size: int = 8  # G, answers sampled per prompt, 2..1024
    lr: float = 1.0  # step size on the per-prompt parameters u, 0..1000
    lr_w: float | None = None  # step size on the shared w; None = same as lr, 0..1000
    beta: float = 0.0  # weight of the k3 KL penalty to the initial policy, 0..100
    scale: str = "group"  # advantage divisor: "group" std (GRPO), "batch" std (TRL), "none" (Dr. GRPO)
    baseline: str = "mean"  # "mean" (GRPO), "loo" (RLOO leave-one-out), "none" (plain REINFORCE)
    ddof: int = 0  # std convention: 0 population (chapter), 1 sample (TRL)
    eps: float = 1e-4  # added to the std before dividing, 0..1
    mu: int = 1  # inner gradient steps per batch (GRPO's mu), 1..16; mu > 1 makes the clip matter
    clip_eps: float = 0.2  # PPO clip range below 1, (0, 1]
    clip_eps_high: float | None = None  # clip range above 1; None = clip_eps (DAPO clip-higher: 0.28), (0, 10]
    dynamic_sampling: bool = False  # DAPO: drop all-equal groups, draw more to refill the batch
    max_redraws: int = 8  # cap on refill rounds per iteration (each draws one group per empty slot), 0..64
    iterations: int = 200  # T, training iterations, 1..5000
    seed: int = 0  # seed of numpy's Generator, 0..2**63-1
    n_seeds: int = 1  # S, independent runs simulated at once, 1..1024

    def __post_init__(self) -> None:
        raise NotImplementedError


@dataclass
class ToyHistory:
    """What a run records. Index t of a *state* array is the state after t iterations (t = 0 initial);
    index t of a *step* array describes iteration t + 1, which samples from state t and produces
    state t + 1. Sampled runs have S = n_seeds; expected_run has S = 1 and stores expectations.
    """

    config: ToyConfig
    difficulties: np.ndarray  # (P,) d_j
    # state arrays, leading axis T + 1
    p: np.ndarray  # (T+1, S, P) probability that prompt j is solved
    accuracy: np.ndarray  # (T+1, S) mean_j p_j (expected accuracy over the pool)
    w: np.ndarray  # (T+1, S) shared skill
    u: np.ndarray  # (T+1, S, P) per-prompt parameters
    kl: np.ndarray  # (T+1, S) exact KL(pi || pi_init) of the Bernoullis, mean over prompts (nats)
    entropy: np.ndarray  # (T+1, S) Bernoulli entropy of pi, mean over prompts (nats)
    answers: np.ndarray  # (T+1, S) cumulative answers sampled (incl. dynamic-sampling redraws); [0] = 0
    # step arrays, leading axis T
    counts: np.ndarray  # (T, S, P) correct answers in prompt j's first group (float; expectation G p_j in expected_run)
    frac_all_correct: np.ndarray  # (T, S) share of first-draw groups with all G answers correct
    frac_all_wrong: np.ndarray  # (T, S) share of first-draw groups with all G answers wrong
    expected_zero_frac: np.ndarray  # (T, S) mean_j p_j^G + (1 - p_j)^G at the sampled state (closed form)
    mean_abs_adv: np.ndarray  # (T, S) mean |A| over the answers of the batch trained on
    kl_k3: np.ndarray  # (T, S) k3 estimate of KL(pi || pi_init): mean over the batch's sampled answers
    grad_norm: np.ndarray  # (T, S) L2 norm of d loss / d (u, w) at the first inner step
    loss: np.ndarray  # (T, S) GRPO loss at the first inner step (ratio 1: the KL term only, for mean/loo)
    clip_frac: np.ndarray  # (T, S) share of answers in the clipped region, mean over the mu inner steps
    n_groups: np.ndarray  # (T, S) groups in the batch trained on (P, or fewer when redraws ran out)
    extra: dict = field(default_factory=dict)  # anything else a caller wants to attach

    @property
    def frac_zero(self) -> np.ndarray:
        """(T, S) share of first-draw groups that give no gradient (all correct or all wrong)."""
        return self.frac_all_correct + self.frac_all_wrong

    @property
    def iterations(self) -> int:
        return self.p.shape[0] - 1


def make_difficulties(cfg: ToyConfig) -> np.ndarray:
    """(P,) d_j: cfg.difficulties if given, else linearly spaced from d_min to d_max."""
    raise NotImplementedError


def count_advantages(k: np.ndarray, group_size: int, *, baseline: str = "mean", scale: str = "group",
                     ddof: int = 0, eps: float = 1e-4, batch_std: np.ndarray | float | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Advantages (A_correct, A_wrong) of a group with k of G answers correct; same formula as
    sim.grpo.group_advantages, written for counts. Broadcasts over k."""
    raise NotImplementedError


def count_update(w: np.ndarray, u: np.ndarray, prompt: np.ndarray, k: np.ndarray, valid: np.ndarray,
                 cfg: ToyConfig, d: np.ndarray, u0: np.ndarray, w0: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """mu GRPO steps from the counts alone (fast path). Shapes: w (S,), u (S, P), prompt/k/valid (S, N) for
    N batch slots. Returns new (w, u) and step metrics (S,) each."""
    raise NotImplementedError


def reference_update(w: float, u: np.ndarray, prompt: np.ndarray, rewards: np.ndarray, cfg: ToyConfig,
                     d: np.ndarray, u0: np.ndarray, w0: float) -> tuple[float, np.ndarray, dict]:
    """mu GRPO steps from every sampled answer with sim.grpo and torch autograd (reference path).
    rewards (N, G) 0/1 for N groups of prompts `prompt` (N,). Returns new (w, u (P,)) and metrics."""
    raise NotImplementedError


def run_toy(cfg: ToyConfig, on_step: Callable[[int, dict], None] | None = None) -> ToyHistory:
    """S = cfg.n_seeds independent sampled runs at once (numpy, count-based). Same cfg -> same history;
    the first t iterations do not depend on cfg.iterations."""
    raise NotImplementedError


def run_toy_reference(cfg: ToyConfig) -> ToyHistory:
    """The straightforward version: samples every answer, one seed at a time, reference_update in torch.
    Same distribution as run_toy (not the same random stream); the benchmark's baseline."""
    raise NotImplementedError


def expected_run(cfg: ToyConfig) -> ToyHistory:
    """The "average run": each step applies the expected update, summed over the binomial distribution
    of each prompt's count, no sampling. S = 1."""
    raise NotImplementedError


def history_rows(h: ToyHistory, per_seed: bool = True) -> list[dict]:
    """One dict per iteration t = 0..T for CSV/JSON: means over seeds, per-prompt mean p, and (per_seed)
    each seed's accuracy. Row t carries the state after t iterations and the step metrics of iteration t
    (None at t = 0)."""
    raise NotImplementedError

