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
only through k, run_toy draws k ~ Binomial(G, p_j) instead of G answers (sim.binomial.BinomialSampler,
an exact inverse-CDF sampler): the cost per iteration is nearly the same at G = 8 and G = 64.
run_toy has two loops over iterations: _run_general (count_update every step, any config) and
_run_lean (mu = 1, no dynamic sampling, the defaults), which keeps only the dynamics in the loop and
computes the metrics a few iterations at a time; a test proves the two give the same history.

What the defaults show (24 prompts, d from -2 to 7, G = 8, lr = 0.2, u = w = 0), in about 200 iterations:
accuracy rises from 0.24 to about 0.94. The easy prompts saturate within a few dozen iterations, so the
share of all-correct groups (wasted, no gradient) climbs with accuracy, from 3% to about 75%. The hardest
prompt starts at p = 0.001 and its groups are all wrong (also wasted): it stays below 0.1 for about 100
iterations, until the shared skill w, pushed by the other prompts, lifts it; then it rises to about 0.6.

Shapes: S seeds, P prompts, G group size, T iterations.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit

from sim.binomial import BinomialSampler, binomial_pmf, binomial_sampler  # noqa: F401 (re-exported)
from sim.validate import check_choice, check_number

SCALES = ("group", "batch", "none")
BASELINES = ("mean", "loo", "none")

# Caps that keep a run from hanging the app.
MAX_PROMPTS = 256
MAX_GROUP_SIZE = 1024
MAX_ITERATIONS = 5000
MAX_SEEDS = 1024
MAX_MU = 16
MAX_REDRAWS = 64
MAX_CELLS = 20_000_000  # iterations * n_seeds * n_prompts: each (T+1, S, P) array is <= 160 MB


@dataclass(frozen=True)
class ToyConfig:
    """Everything a toy run depends on. Invalid values raise ValueError naming the field and its range."""

    n_prompts: int = 24  # P, number of prompts in the pool, 1..256
    d_min: float = -2.0  # difficulty of the easiest (leftmost) prompt, |d| <= 50
    d_max: float = 7.0  # difficulty of the hardest (rightmost) prompt; d_j spread linearly d_min..d_max
    difficulties: tuple[float, ...] | None = None  # explicit d_j (length n_prompts); overrides d_min/d_max
    u_init: float = 0.0  # initial per-prompt parameter u_j (same for all j), |u| <= 50
    w_init: float = 0.0  # initial shared skill w, |w| <= 50
    group_size: int = 8  # G, answers sampled per prompt, 2..1024
    lr: float = 0.2  # step size on the per-prompt parameters u, 0..1000
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
        check_number("n_prompts", self.n_prompts, 1, MAX_PROMPTS, integer=True)
        check_number("d_min", self.d_min, -50.0, 50.0)
        check_number("d_max", self.d_max, -50.0, 50.0)
        if self.difficulties is not None:
            d = tuple(self.difficulties)
            if len(d) != self.n_prompts:
                raise ValueError(f"difficulties must have n_prompts = {self.n_prompts} values, got {len(d)}")
            for x in d:
                check_number("difficulties", x, -50.0, 50.0)
        check_number("u_init", self.u_init, -50.0, 50.0)
        check_number("w_init", self.w_init, -50.0, 50.0)
        check_number("group_size", self.group_size, 2, MAX_GROUP_SIZE, integer=True)
        check_number("lr", self.lr, 0.0, 1000.0)
        if self.lr_w is not None:
            check_number("lr_w", self.lr_w, 0.0, 1000.0)
        check_number("beta", self.beta, 0.0, 100.0)
        check_choice("scale", self.scale, SCALES)
        check_choice("baseline", self.baseline, BASELINES)
        check_number("ddof", self.ddof, 0, 1, integer=True)
        check_number("eps", self.eps, 1e-8, 1.0)
        check_number("mu", self.mu, 1, MAX_MU, integer=True)
        check_number("clip_eps", self.clip_eps, 0.0, 1.0, low_open=True)
        if self.clip_eps_high is not None:
            check_number("clip_eps_high", self.clip_eps_high, 0.0, 10.0, low_open=True)
        if not isinstance(self.dynamic_sampling, (bool, np.bool_)):
            raise ValueError(f"dynamic_sampling must be True or False, got {self.dynamic_sampling!r}")
        check_number("max_redraws", self.max_redraws, 0, MAX_REDRAWS, integer=True)
        check_number("iterations", self.iterations, 1, MAX_ITERATIONS, integer=True)
        check_number("seed", self.seed, 0, 2**63 - 1, integer=True)
        check_number("n_seeds", self.n_seeds, 1, MAX_SEEDS, integer=True)
        size = self.iterations * self.n_seeds * self.n_prompts
        if size > MAX_CELLS:
            raise ValueError(f"iterations * n_seeds * n_prompts must be <= {MAX_CELLS:,} (memory), got {size:,}")

    @property
    def lr_shared(self) -> float:
        """Step size on w (lr_w, or lr when lr_w is None)."""
        return self.lr if self.lr_w is None else self.lr_w


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


# ----------------------------------------------------------------------------------------------
# The model: logits, probabilities, KL and entropy of the Bernoulli policies


def make_difficulties(cfg: ToyConfig) -> np.ndarray:
    """(P,) d_j: cfg.difficulties if given, else linearly spaced from d_min to d_max."""
    if cfg.difficulties is not None:
        return np.asarray(cfg.difficulties, dtype=float)
    return np.linspace(cfg.d_min, cfg.d_max, cfg.n_prompts)


def policy(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """pi(correct), pi(wrong), log pi(correct), log pi(wrong) for logits z, each accurate in relative terms.

    log sigmoid(-z) = log sigmoid(z) - z, so three transcendental calls instead of four.
    """
    p_c = expit(z)
    lp_c = np.where(p_c > 0, np.log(p_c), z)  # log sigmoid(z) ~ z where sigmoid underflows
    lp_w = lp_c - z
    return p_c, np.exp(lp_w), lp_c, lp_w


def bernoulli_kl(p_c, p_w, lp_c, lp_w, lr_c, lr_w) -> np.ndarray:
    """Exact KL(pi || pi_ref) of Bernoullis (nats), averaged over the last axis (prompts), from policy()
    of z and of z_ref:

        KL = p log(p / p_ref) + (1 - p) log((1 - p) / (1 - p_ref))
    """
    return (_dot(p_c, lp_c - lr_c) + _dot(p_w, lp_w - lr_w)) / p_c.shape[-1]


def bernoulli_entropy(p_c, p_w, lp_c, lp_w) -> np.ndarray:
    """Entropy H = -p log p - (1 - p) log(1 - p) of Bernoullis (nats), averaged over the last axis
    (prompts), from policy(z)."""
    return -(_dot(p_c, lp_c) + _dot(p_w, lp_w)) / p_c.shape[-1]


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sum(a * b) over the last axis, in one pass (no temporary)."""
    return np.einsum("...p,...p->...", a, b)


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


# ----------------------------------------------------------------------------------------------
# Fast path: the GRPO update from the number of correct answers per group


def count_advantages(
    k: np.ndarray,
    group_size: int,
    *,
    baseline: str = "mean",
    scale: str = "group",
    ddof: int = 0,
    eps: float = 1e-4,
    batch_std: np.ndarray | float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Advantages (A_correct, A_wrong) of a group with k of G answers correct. Broadcasts over k.

    The same convention as sim.grpo.group_advantages, written for 0/1 rewards with mean m = k/G:
      baseline "mean":  A_c = 1 - m,             A_w = -m
      baseline "loo":   A_c = (G - k) / (G - 1), A_w = -k / (G - 1)
      baseline "none":  A_c = 1,                 A_w = 0
      scale "group":    divide by sqrt(G m (1 - m) / (G - ddof)) + eps (a flat group stays undivided)
      scale "batch":    divide by batch_std + eps (the std of all rewards in the batch)
    A group with k = 0 or k = G gets 0 under "mean" and "loo".
    """
    G = group_size
    k = np.asarray(k, dtype=float)
    m = k / G
    if baseline == "mean":
        a_c, a_w = 1.0 - m, -m
    elif baseline == "loo":
        a_c, a_w = (G - k) / (G - 1), -k / (G - 1)
    else:
        a_c, a_w = np.ones_like(k), np.zeros_like(k)
    flat = (k == 0) | (k == G)
    if scale == "group":
        std = np.sqrt(G * m * (1.0 - m) / (G - ddof))
        if baseline == "none":
            std = np.where(flat, 1.0 - eps, std)
        a_c, a_w = a_c / (std + eps), a_w / (std + eps)
    elif scale == "batch":
        if batch_std is None:
            raise ValueError("scale='batch' needs batch_std")
        a_c, a_w = a_c / (batch_std + eps), a_w / (batch_std + eps)
    if baseline != "none":
        a_c, a_w = np.where(flat, 0.0, a_c), np.where(flat, 0.0, a_w)
    return a_c, a_w


@functools.lru_cache(maxsize=64)
def _advantage_table(G: int, baseline: str, scale: str, ddof: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """count_advantages for every k = 0..G, each (G+1,) (scale "group" or "none" only)."""
    return count_advantages(np.arange(G + 1), G, baseline=baseline, scale=scale, ddof=ddof, eps=eps)


def count_update(
    w: np.ndarray,
    u: np.ndarray,
    prompt: np.ndarray | None,
    k: np.ndarray,
    weight: np.ndarray,
    cfg: ToyConfig,
    d: np.ndarray,
    z_ref: np.ndarray,
    *,
    now: tuple | None = None,
    ref: tuple | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """mu GRPO steps on (w, u) from counts alone: the fast path, S seeds at once.

    The batch has N slots per seed; slot n holds a group of G answers to prompt `prompt[s, n]`, of
    which k[s, n] are correct, and counts `weight[s, n]` times (1/0 for sampled groups, a
    probability for expected_run). With z = w + u_prompt - d_prompt, rho = pi / pi_old, u = pi_ref / pi
    and B = G * sum(weight) answers, the loss of sim.grpo.policy_loss (T = 1) is

        L = -(1/B) sum_slots weight * [k (s_c - beta k3_c) + (G - k)(s_w - beta k3_w)]

    s the clipped surrogate, and since d log sigmoid(z)/dz = sigmoid(-z), d log sigmoid(-z)/dz = -sigmoid(z),

        dL/dz = -(weight/B) [k g_c sigmoid(-z) - (G - k) g_w sigmoid(z)],
        g = rho A [not clipped] - beta (1 - u)        (d objective / d log pi of one answer)

    dL/du_j sums dL/dz over the slots of prompt j; dL/dw sums over all slots. Then
    u -= lr dL/du, w -= lr_w dL/dw, repeated mu times with pi_old fixed at the sampling state.

    Shapes: w (S,), u (S, P), prompt k weight (S, N), d (P,), z_ref (S, P). prompt=None means slot n
    holds prompt n (N = P); then two optional caches: `now` = policy(z) now, `ref` = policy(z_ref).
    Returns new w (S,), new u (S, P) and metrics, each (S,): loss, grad_norm (first inner step),
    kl_k3 (first step), mean_abs_adv, clip_frac (mean over inner steps).
    """
    S, P = u.shape
    G = cfg.group_size
    k = k.astype(float)
    n_c, n_w = weight * k, weight * (G - k)  # (S, N) weighted answer counts
    B = G * weight.sum(axis=1)  # (S,) answers in the batch
    inv_B = np.divide(1.0, B, out=np.zeros_like(B), where=B > 0)[:, None]  # (S, 1); empty batch: no update
    if cfg.scale == "batch":  # the batch std couples the groups: advantages per slot
        m = n_c.sum(axis=1, keepdims=True) * inv_B  # (S, 1) mean reward of the batch
        batch_std = np.sqrt(B[:, None] * m * (1.0 - m) / np.maximum(B[:, None] - cfg.ddof, 1.0))
        a_c, a_w = count_advantages(k, G, baseline=cfg.baseline, scale=cfg.scale, ddof=cfg.ddof, eps=cfg.eps,
                                    batch_std=batch_std)  # (S, N) each
    else:  # the advantages depend on k alone: look them up in a table over k = 0..G
        table_c, table_w = _advantage_table(G, cfg.baseline, cfg.scale, cfg.ddof, cfg.eps)
        k_int = k.astype(np.int64)
        a_c, a_w = table_c[k_int], table_w[k_int]  # (S, N) each
    identity = prompt is None  # slot j holds prompt j

    def gather(x: np.ndarray) -> np.ndarray:  # (S, P) -> (S, N): the value at each slot's prompt
        return x if identity else np.take_along_axis(x, prompt, axis=1)

    d_n = d if identity else d[prompt]  # (S, N)
    pr_c, pr_w, lr_c, lr_w = ref if (identity and ref is not None) else policy(gather(z_ref))  # pi_ref per slot
    eps_low = cfg.clip_eps
    eps_high = cfg.clip_eps if cfg.clip_eps_high is None else cfg.clip_eps_high
    flat_index = None if identity else (np.arange(S)[:, None] * P + prompt).ravel()

    w, u = w.copy(), u.copy()
    metrics: dict[str, np.ndarray] = {"clip_frac": np.zeros(S)}
    for step in range(cfg.mu):
        fresh = step > 0 or not identity or now is None
        p_c, p_w, lp_c, lp_w = policy(w[:, None] + gather(u) - d_n) if fresh else now
        if step == 0:  # on-policy: rho = 1 exactly, strictly inside the clip range (clip_eps > 0)
            old_c, old_w = lp_c, lp_w
            s_c, s_w = a_c, a_w  # surrogate rho * A and its derivative in log pi
        else:
            rho_c, rho_w = np.exp(lp_c - old_c), np.exp(lp_w - old_w)
            clip_c = ((rho_c > 1.0 + eps_high) & (a_c > 0)) | ((rho_c < 1.0 - eps_low) & (a_c < 0))
            clip_w = ((rho_w > 1.0 + eps_high) & (a_w > 0)) | ((rho_w < 1.0 - eps_low) & (a_w < 0))
            s_c, s_w = np.where(clip_c, 0.0, rho_c * a_c), np.where(clip_w, 0.0, rho_w * a_w)
            clipped = (n_c * clip_c + n_w * clip_w).sum(axis=1) * inv_B[:, 0]
            metrics["clip_frac"] += clipped / cfg.mu
        g_c, g_w = s_c, s_w  # d objective / d log pi of one correct / one wrong answer
        if cfg.beta > 0 or step == 0:
            r_c, r_w = pr_c / p_c, pr_w / p_w  # u = pi_ref / pi, d k3 / d log pi = 1 - u
            if cfg.beta > 0:
                g_c, g_w = g_c - cfg.beta * (1.0 - r_c), g_w - cfg.beta * (1.0 - r_w)
        dz = -inv_B * (n_c * g_c * p_w - n_w * g_w * p_c)  # (S, N) dL/dz per slot
        du = dz if identity else np.bincount(flat_index, dz.ravel(), minlength=S * P).reshape(S, P)
        dw = du.sum(axis=1)  # (S,)
        if step == 0:
            k3_c, k3_w = r_c - (lr_c - lp_c) - 1.0, r_w - (lr_w - lp_w) - 1.0  # k3 = u - log u - 1
            # an answer with probability 0 was never sampled: weight 0, even where its k3 is infinite
            kl = (np.where(n_c > 0, n_c * k3_c, 0.0) + np.where(n_w > 0, n_w * k3_w, 0.0)).sum(axis=1) * inv_B[:, 0]
            metrics["kl_k3"] = kl
            metrics["loss"] = -(n_c * a_c + n_w * a_w).sum(axis=1) * inv_B[:, 0] + cfg.beta * kl
            metrics["mean_abs_adv"] = (n_c * np.abs(a_c) + n_w * np.abs(a_w)).sum(axis=1) * inv_B[:, 0]
            metrics["grad_norm"] = np.sqrt((du * du).sum(axis=1) + dw * dw)
        u -= cfg.lr * du
        w -= cfg.lr_shared * dw
    return w, u, metrics


# ----------------------------------------------------------------------------------------------
# Reference path: every answer sampled, sim.grpo + torch autograd


def reference_update(
    w: float,
    u: np.ndarray,
    prompt: np.ndarray,
    rewards: np.ndarray,
    cfg: ToyConfig,
    d: np.ndarray,
    z_ref: np.ndarray,
) -> tuple[float, np.ndarray, dict[str, float]]:
    """mu GRPO steps from every sampled answer, with sim.grpo and torch autograd (float64).

    rewards (N, G) 0/1 for N groups whose prompts are `prompt` (N,); u, d, z_ref (P,).
    Returns new w, new u (P,) and the same metrics as count_update (floats).
    """
    import torch

    from sim import grpo

    N, G = rewards.shape
    if N == 0:
        zero = {"loss": 0.0, "grad_norm": 0.0, "kl_k3": 0.0, "mean_abs_adv": 0.0, "clip_frac": 0.0}
        return float(w), u.copy(), zero
    w_t = torch.tensor(float(w), dtype=torch.float64, requires_grad=True)
    u_t = torch.tensor(u, dtype=torch.float64, requires_grad=True)
    d_t, zr_t = torch.as_tensor(d, dtype=torch.float64), torch.as_tensor(z_ref, dtype=torch.float64)
    idx = torch.as_tensor(np.repeat(prompt, G))  # (N*G,) prompt of each answer
    r = torch.as_tensor(rewards.reshape(-1), dtype=torch.float64)  # (N*G,)
    sign = 2.0 * r - 1.0  # +1 correct, -1 wrong: log pi(answer) = log sigmoid(sign * z)
    adv = grpo.group_advantages(r, G, baseline=cfg.baseline, scale=cfg.scale, ddof=cfg.ddof, eps=cfg.eps)
    ref_logp = torch.nn.functional.logsigmoid(sign * zr_t[idx])[:, None]  # (N*G, 1)
    mask = torch.ones_like(ref_logp)

    def logp_now() -> torch.Tensor:
        z = w_t + u_t - d_t  # (P,)
        return torch.nn.functional.logsigmoid(sign * z[idx])[:, None]  # (N*G, 1)

    old_logp = logp_now().detach()
    metrics = {"clip_frac": 0.0, "mean_abs_adv": float(adv.abs().mean())}
    for step in range(cfg.mu):
        loss, m = grpo.policy_loss(logp_now(), old_logp, ref_logp, adv, mask, beta=cfg.beta,
                                   clip_eps=cfg.clip_eps, clip_eps_high=cfg.clip_eps_high)
        if step == 0:  # grad_norm keeps the graph, so it goes before the gradient for the step
            metrics.update(loss=float(loss.detach()), kl_k3=m["kl"], grad_norm=grpo.grad_norm(loss, [w_t, u_t]))
        gw, gu = torch.autograd.grad(loss, [w_t, u_t])
        metrics["clip_frac"] += m["clip_ratio/region_mean"] / cfg.mu
        with torch.no_grad():
            w_t -= cfg.lr_shared * gw
            u_t -= cfg.lr * gu
    return float(w_t.detach()), u_t.detach().numpy().copy(), metrics


# ----------------------------------------------------------------------------------------------
# Sampled runs


def _draw_batch(rng: np.random.Generator, p: np.ndarray, cfg: ToyConfig):
    """Counts for one iteration: one group per prompt, then (dynamic sampling) refill rounds.

    p (S, P). Returns first-draw counts k0 (S, P), and the batch: prompt, k, weight (S, P) with weight 1
    for a slot holding a group and 0 for a slot left empty, plus answers drawn (S,).
    Dynamic sampling: every round, each empty slot (a group whose G rewards were all equal) draws a
    prompt uniformly from the pool and a fresh group for it; at most cfg.max_redraws rounds.
    """
    S, P = p.shape
    G = cfg.group_size
    draw = binomial_sampler(G)
    k0 = draw(rng, p)  # (S, P) correct answers per group, ~ Binomial(G, p)
    answers = np.full(S, G * P)
    if not cfg.dynamic_sampling:
        return k0, None, k0, np.ones((S, P)), answers  # prompt None: slot j holds prompt j
    k, prompt = k0.copy(), np.tile(np.arange(P), (S, 1))
    full = (k > 0) & (k < G)
    for _ in range(cfg.max_redraws):
        empty = ~full
        if not empty.any():
            break
        new_prompt = rng.integers(0, P, size=(S, P))
        new_k = draw(rng, np.take_along_axis(p, new_prompt, axis=1))
        answers += G * empty.sum(axis=1)
        fill = empty & (new_k > 0) & (new_k < G)
        prompt, k, full = np.where(fill, new_prompt, prompt), np.where(fill, new_k, k), full | fill
    return k0, prompt, k, full.astype(float), answers


STEP_METRICS = ("frac_all_correct", "frac_all_wrong", "expected_zero_frac", "mean_abs_adv", "kl_k3", "grad_norm",
                "loss", "clip_frac", "n_groups")


def _init_state(cfg: ToyConfig, S: int):
    d = make_difficulties(cfg)
    w = np.full(S, float(cfg.w_init))
    u = np.full((S, len(d)), float(cfg.u_init))
    return d, w, u, w[:, None] + u - d  # z_ref (S, P): the initial policy is the KL reference


# An array of more than ~128 kB is fresh memory from the OS on every call, and touching a fresh page
# first is costly (~10 us per 4 kB page on the 2-core VM, more than the arithmetic on it). So work over
# (T, S, P) goes a few iterations at a time, through temporaries of at most CHUNK_CELLS values.
CHUNK_CELLS = 16384
STATE_METRICS = ("accuracy", "kl", "entropy", "no_signal")


def _chunk_rows(cells: int) -> int:
    """Rows of `cells` values (an (S, P) state: S * P) per chunk, at least one."""
    return max(1, CHUNK_CELLS // cells)


def _state_metrics(out: dict, rows: slice, pol: tuple, ref: tuple, G: int) -> None:
    """Means over prompts of p, KL(pi || pi_ref), H(pi) and p^G + (1 - p)^G for the states pol =
    policy(z) (n, S, P), written to out[name][rows]; ref = (lp_c, lp_w) (S, P) of the KL reference."""
    p_c, p_w, lp_c, lp_w = pol
    out["accuracy"][rows] = p_c.mean(axis=-1)
    out["kl"][rows] = bernoulli_kl(p_c, p_w, lp_c, lp_w, *ref)
    out["entropy"][rows] = bernoulli_entropy(p_c, p_w, lp_c, lp_w)
    out["no_signal"][rows] = no_signal(p_c, p_w, G).mean(axis=-1)


def _finish(cfg: ToyConfig, d: np.ndarray, w: np.ndarray, u: np.ndarray, steps: dict, answers: np.ndarray,
            counts: np.ndarray, p: np.ndarray | None = None, states: dict | None = None) -> ToyHistory:
    """Build the history from the parameters w (T+1, S), u (T+1, S, P) and the step records. Unless the
    caller has them (p = pi(correct) (T+1, S, P) and `states` from _state_metrics), the policy and the
    state metrics are computed here, a few states at a time."""
    T1, S, P = u.shape
    G = cfg.group_size
    if states is None:
        p, states = np.empty((T1, S, P)), {name: np.empty((T1, S)) for name in STATE_METRICS}
        rows = _chunk_rows(S * P)
        for a in range(0, T1, rows):
            z = w[a : a + rows, :, None] + u[a : a + rows] - d  # (n, S, P)
            if not np.isfinite(z).all():
                t = a + int(np.argmax(~np.isfinite(z).all(axis=(1, 2))))
                raise ValueError(f"the run diverged at iteration {t} (logits not finite): lower lr, lr_w or beta")
            now = policy(z)
            if a == 0:
                ref = (now[2][0], now[3][0])  # the KL reference is the state at t = 0
            p[a : a + rows] = now[0]
            _state_metrics(states, slice(a, a + rows), now, ref, G)
    if "frac_all_correct" not in steps:  # sampled runs: from the counts (expected_run passes its own)
        steps["frac_all_correct"] = np.count_nonzero(counts == G, axis=2) / P
        steps["frac_all_wrong"] = np.count_nonzero(counts == 0, axis=2) / P
    steps["expected_zero_frac"] = states["no_signal"][:-1]
    return ToyHistory(
        config=cfg, difficulties=d, p=p, u=u, w=w, accuracy=states["accuracy"], kl=states["kl"],
        entropy=states["entropy"], answers=np.concatenate([np.zeros((1, S)), np.cumsum(answers, axis=0)]),
        counts=counts, **{name: steps[name] for name in STEP_METRICS},
    )


def run_toy(cfg: ToyConfig, on_step: Callable[[int, dict], None] | None = None) -> ToyHistory:
    """S = cfg.n_seeds independent sampled runs at once (numpy, count-based).

    Each iteration draws k_j ~ Binomial(G, p_j) per prompt (the same law as G separate answers), refills
    all-equal groups under dynamic sampling, and applies count_update. Same cfg -> same history; the
    first t iterations do not depend on cfg.iterations. Seed s of a run depends on (seed, n_seeds):
    the S runs share one Generator. `on_step(t, metrics)` is called after iteration t (1..T) with the
    step's metrics, (S,) arrays. A run whose logits overflow raises ValueError (never a NaN history).

    Two loops give the same history: _run_lean for mu = 1 without dynamic sampling, the batch std or
    on_step (the defaults; several times faster), and _run_general for everything; a test proves them equal.
    """
    if on_step is None and cfg.mu == 1 and not cfg.dynamic_sampling and cfg.scale != "batch":
        h = _run_lean(cfg)
        if h is not None:
            return h
    return _run_general(cfg, on_step)


def _run_general(cfg: ToyConfig, on_step: Callable[[int, dict], None] | None = None) -> ToyHistory:
    """run_toy for any cfg: _draw_batch and count_update every iteration."""
    S, T = cfg.n_seeds, cfg.iterations
    rng = np.random.default_rng(cfg.seed)
    d, w, u, z_ref = _init_state(cfg, S)
    P = len(d)
    ws, us = np.empty((T + 1, S)), np.empty((T + 1, S, P))
    counts, answers = np.empty((T, S, P)), np.empty((T, S))
    steps = {name: np.zeros((T, S)) for name in STEP_METRICS if not name.startswith("frac_all")}
    ws[0], us[0] = w, u
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        ref = policy(z_ref)
        for t in range(T):
            now = policy(w[:, None] + u - d)  # (S, P) each
            k0, prompt, k, weight, answers[t] = _draw_batch(rng, now[0], cfg)
            w, u, m = count_update(w, u, prompt, k, weight, cfg, d, z_ref, now=now, ref=ref)
            if not np.isfinite(u.sum() + w.sum()):
                raise ValueError(f"the run diverged at iteration {t + 1} (logits not finite): lower lr, lr_w or beta")
            m["n_groups"] = weight.sum(axis=1)
            counts[t], ws[t + 1], us[t + 1] = k0, w, u
            for name, value in m.items():
                steps[name][t] = value
            if on_step is not None:
                on_step(t + 1, m)
        return _finish(cfg, d, ws, us, steps, answers, counts)


def _run_lean(cfg: ToyConfig) -> ToyHistory | None:
    """run_toy for mu = 1 without dynamic sampling or the batch std: _run_general's arithmetic, bit for
    bit, on the same random stream, with little more than the dynamics inside the loop.

    With rho = 1, slot j holding prompt j and advantages that depend on k alone, count_update's step is

        dL/dz = -(1/B) [k g_c(k) sigmoid(-z) - (G - k) g_w(k) sigmoid(z)],   g = A(k) - beta (1 - pi_ref / pi)

    so each iteration computes the policy, draws the counts and looks k A(k) up in a table over k. The
    metrics are computed every few iterations for the whole chunk at once (_lean_step_metrics).
    Returns None where it would leave _run_general's arithmetic (a probability that underflows to 0,
    or a non-finite step, only possible with beta > 0): run_toy then takes the general loop.
    """
    S, T, G, beta = cfg.n_seeds, cfg.iterations, cfg.group_size, cfg.beta
    rng = np.random.default_rng(cfg.seed)
    d, w, u, _ = _init_state(cfg, S)
    P = len(d)
    draw = binomial_sampler(G)
    a_c, a_w = _advantage_table(G, cfg.baseline, cfg.scale, cfg.ddof, cfg.eps)  # (G+1,) each
    n_c = np.arange(G + 1.0)  # (G+1,) correct answers in a group with k correct, and G - k wrong ones
    n_w = G - n_c
    w_c, w_w = n_c * a_c, n_w * a_w  # (G+1,) n A(k): the weights of dL/dz at beta = 0
    neg_inv_B = -(1.0 / (G * float(P)))
    C = _chunk_rows(S * P)  # iterations per chunk
    p, us, ws, counts = np.empty((T + 1, S, P)), np.empty((T + 1, S, P)), np.empty((T + 1, S)), np.empty((T, S, P))
    states = {name: np.empty((T + 1, S)) for name in STATE_METRICS}
    steps = {name: np.empty((T, S)) for name in ("loss", "kl_k3", "mean_abs_adv", "grad_norm")}
    # the chunk's policy (p_c is p), dL/dz, and k A_c(k), (G - k) A_w(k) per slot
    p_w, lp_c, lp_w, dz, nA_c, nA_w = (np.empty((C, S, P)) for _ in range(6))
    k, dw, z, tmp = np.empty((C, S, P), dtype=np.intp), np.empty((C, S)), np.empty((S, P)), np.empty((S, P))
    ws[0], us[0] = w, u
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for t0 in range(0, T + 1, C):  # states t0..t1-1 and the steps taken from them
            t1 = min(t0 + C, T + 1)
            n = min(t1, T) - t0  # steps in this chunk
            uniforms = rng.random((n, S, P))  # (n, S, P) the uniforms _draw_batch would draw, in order
            offsets = draw.offsets(uniforms)
            for t in range(t0, t1):
                j = t - t0
                np.add(ws[t][:, None], us[t], out=z)
                z -= d  # (S, P) logits w + u - d
                expit(z, out=p[t])  # policy(z), less its guard for sigmoid(z) == 0 (checked below)
                np.log(p[t], out=lp_c[j])
                np.subtract(lp_c[j], z, out=lp_w[j])
                np.exp(lp_w[j], out=p_w[j])
                if t == 0:
                    ref = (p[0].copy(), p_w[0].copy(), lp_c[0].copy(), lp_w[0].copy())  # the initial policy
                if t == T:
                    break
                k[j] = draw.invert(uniforms[j], p[t], offsets[j])
                w_c.take(k[j], out=nA_c[j])
                w_w.take(k[j], out=nA_w[j])
                if beta == 0:
                    np.multiply(nA_c[j], p_w[j], out=dz[j])
                    np.multiply(nA_w[j], p[t], out=tmp)
                else:
                    g_c = a_c.take(k[j]) - beta * (1.0 - ref[0] / p[t])
                    g_w = a_w.take(k[j]) - beta * (1.0 - ref[1] / p_w[j])
                    np.multiply(n_c.take(k[j]) * g_c, p_w[j], out=dz[j])
                    np.multiply(n_w.take(k[j]) * g_w, p[t], out=tmp)
                dz[j] -= tmp
                dz[j] *= neg_inv_B  # (S, P) dL/dz = dL/du
                dw[j] = dz[j].sum(axis=1)  # (S,) dL/dw
                np.subtract(us[t], np.multiply(dz[j], cfg.lr, out=tmp), out=us[t + 1])
                ws[t + 1] = ws[t] - cfg.lr_shared * dw[j]
                if beta > 0 and not np.isfinite(us[t + 1].sum() + ws[t + 1].sum()):
                    return None
            pol = (p[t0:t1], p_w[: t1 - t0], lp_c[: t1 - t0], lp_w[: t1 - t0])
            _state_metrics(states, slice(t0, t1), pol, ref[2:], G)
            counts[t0 : t0 + n] = k[:n]
            _lean_step_metrics(steps, slice(t0, t0 + n), cfg, counts[t0 : t0 + n], tuple(x[:n] for x in pol), ref,
                               nA_c[:n], nA_w[:n], dz[:n], dw[:n])
    if not (p.min() > 0 and np.isfinite(ws[T].sum() + us[T].sum())):
        return None
    steps |= {"clip_frac": np.zeros((T, S)), "n_groups": np.full((T, S), float(P))}
    return _finish(cfg, d, ws, us, steps, np.full((T, S), float(G * P)), counts, p, states)


def _lean_step_metrics(out: dict, rows: slice, cfg: ToyConfig, n_c: np.ndarray, pol: tuple, ref: tuple,
                       nA_c: np.ndarray, nA_w: np.ndarray, dz: np.ndarray, dw: np.ndarray) -> None:
    """count_update's metrics at its first (here only) step, for n iterations at once, into out[name][rows].

    n_c (n, S, P) counts k, pol = policy of the states sampled from, ref = policy of the reference (S, P),
    nA_c, nA_w = k A_c(k), (G - k) A_w(k) (n, S, P), dz = dL/du (n, S, P), dw = dL/dw (n, S).
    A_c >= 0 >= A_w under every baseline, so sum |A| = nA_c - nA_w.
    """
    G, P = cfg.group_size, n_c.shape[2]
    inv_B = 1.0 / (G * float(P))
    p_c, p_w, lp_c, lp_w = pol
    k3_c = ref[0] / p_c - (ref[2] - lp_c) - 1.0  # k3 = u - log u - 1, u = pi_ref / pi
    k3_w = ref[1] / p_w - (ref[3] - lp_w) - 1.0
    kl = (_dot(n_c, k3_c) + _dot(G - n_c, k3_w)) * inv_B
    sum_c, sum_w = nA_c.sum(axis=2), nA_w.sum(axis=2)  # (n, S)
    out["kl_k3"][rows] = kl
    out["loss"][rows] = -(sum_c + sum_w) * inv_B + cfg.beta * kl
    out["mean_abs_adv"][rows] = (sum_c - sum_w) * inv_B
    out["grad_norm"][rows] = np.sqrt(_dot(dz, dz) + dw * dw)


def run_toy_reference(cfg: ToyConfig) -> ToyHistory:
    """The straightforward version: samples every answer, one seed at a time, reference_update in torch.

    Same distribution as run_toy, not the same random stream. The benchmark's baseline.
    """
    S, T, P, G = cfg.n_seeds, cfg.iterations, cfg.n_prompts, cfg.group_size
    rng = np.random.default_rng(cfg.seed)
    d, w, u, z_ref = _init_state(cfg, S)
    ws, us = np.empty((T + 1, S)), np.empty((T + 1, S, P))
    counts, answers = np.empty((T, S, P)), np.empty((T, S))
    steps = {name: np.zeros((T, S)) for name in STEP_METRICS if not name.startswith("frac_all")}
    ws[0], us[0] = w, u
    for s in range(S):
        w_s, u_s = float(w[s]), u[s].copy()
        for t in range(T):
            p = expit(w_s + u_s - d)  # (P,)
            rewards = (rng.random((P, G)) < p[:, None]).astype(float)  # (P, G): every answer
            k0 = rewards.sum(axis=1)
            keep = (k0 > 0) & (k0 < G)
            groups, prompts, n_empty, answers[t, s] = [rewards[keep]], [np.flatnonzero(keep)], P - keep.sum(), G * P
            for _ in range(cfg.max_redraws if cfg.dynamic_sampling else 0):
                if n_empty == 0:
                    break
                new_prompt = rng.integers(0, P, size=n_empty)
                new = (rng.random((n_empty, G)) < p[new_prompt, None]).astype(float)  # (n_empty, G)
                answers[t, s] += G * n_empty
                ok = (new.sum(axis=1) > 0) & (new.sum(axis=1) < G)
                groups.append(new[ok])
                prompts.append(new_prompt[ok])
                n_empty -= ok.sum()
            prompt = np.concatenate(prompts) if cfg.dynamic_sampling else np.arange(P)
            batch = np.concatenate(groups) if cfg.dynamic_sampling else rewards
            w_s, u_s, m = reference_update(w_s, u_s, prompt, batch, cfg, d, z_ref[s])
            m["n_groups"] = len(prompt)
            counts[t, s], ws[t + 1, s], us[t + 1, s] = k0, w_s, u_s
            for name, value in m.items():
                steps[name][t, s] = value
    return _finish(cfg, d, ws, us, steps, answers, counts)


# ----------------------------------------------------------------------------------------------
# The average run


def expected_run(cfg: ToyConfig) -> ToyHistory:
    """The "average run" (S = 1): each step applies the expected update, no sampling.

    The batch becomes every (prompt j, count k) pair, weighted by P(k_j = k) = Binomial(G, p_j), and
    count_update does the rest. What is exact:
      - mu = 1, scale "group"/"none": exactly E[update | state] for one step. The run is the
        deterministic path x_{t+1} = x_t + E[update | x_t], not E[x_t] of the sampled runs (the two
        differ by the curvature of the update, small when lr is small compared with the noise).
      - mu > 1: every inner step uses the expected gradient at the current parameters (pi_old fixed at
        the sampled state), i.e. mu steps of the mean gradient, not the mean of mu steps.
      - scale "batch": the batch std is taken at the expected counts (plug-in), an approximation.
      - dynamic sampling: exact for unlimited redraws (each empty slot ends up with prompt i with
        probability proportional to 1 - q_i, q_i = p_i^G + (1 - p_i)^G, and B = P G); the cap
        max_redraws only enters the expected answers spent and n_groups.
    Step metrics are expectations too (grad_norm is the norm of the expected gradient); counts holds G p_j.
    """
    cfg = cfg if cfg.n_seeds == 1 else dataclasses.replace(cfg, n_seeds=1)
    T = cfg.iterations
    d, w, u, z_ref = _init_state(cfg, 1)
    P, G = len(d), cfg.group_size
    ws, us = np.empty((T + 1, 1)), np.empty((T + 1, 1, P))
    counts, answers = np.empty((T, 1, P)), np.empty((T, 1))
    steps = {name: np.zeros((T, 1)) for name in STEP_METRICS}
    ws[0], us[0] = w, u
    slot_prompt, slot_k = np.repeat(np.arange(P), G + 1), np.tile(np.arange(G + 1), P)  # (P*(G+1),)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for t in range(T):
            p = expit(w[0] + u[0] - d)  # (P,)
            pmf = binomial_pmf(p, G)  # (P, G+1)
            q = pmf[:, 0] + pmf[:, G]  # (P,) chance of a flat group
            prompt, k, weight = slot_prompt, slot_k, pmf.ravel()
            answers[t], n_groups = G * P, P
            if cfg.dynamic_sampling:
                informative = pmf.copy()
                informative[:, [0, G]] = 0.0
                total = informative.sum()  # sum_i (1 - q_i)
                refill = q.sum() * informative.ravel() / total if total > 0 else np.zeros(P * (G + 1))
                prompt, k = np.concatenate([prompt, prompt]), np.concatenate([k, k])
                weight = np.concatenate([informative.ravel(), refill])
                q_bar = q.mean()  # a refill draw (uniform prompt) is flat with probability q_bar
                answers[t] = G * (P + q.sum() * sum(q_bar**r for r in range(cfg.max_redraws)))
                n_groups = P - q.sum() * q_bar**cfg.max_redraws
            w, u, m = count_update(w, u, prompt[None], k[None], weight[None], cfg, d, z_ref)
            if not np.isfinite(u.sum() + w.sum()):
                raise ValueError(f"the run diverged at iteration {t + 1} (logits not finite): lower lr, lr_w or beta")
            m |= {"frac_all_correct": pmf[:, G].mean(), "frac_all_wrong": pmf[:, 0].mean(), "n_groups": n_groups}
            counts[t], ws[t + 1], us[t + 1] = G * p, w, u
            for name, value in m.items():
                steps[name][t] = value
        return _finish(cfg, d, ws, us, steps, answers, counts)


# ----------------------------------------------------------------------------------------------
# Export


def history_rows(h: ToyHistory, per_seed: bool = True) -> list[dict]:
    """One dict per iteration t = 0..T for CSV/JSON.

    Row t holds the state after t iterations (means over seeds: accuracy, w, kl, entropy, answers, and
    p_0..p_{P-1}), the step metrics of iteration t (means over seeds; None at t = 0, which has no step),
    accuracy_std over seeds, and with per_seed each seed's accuracy as accuracy_seed{s}.
    """
    rows = []
    S = h.accuracy.shape[1]
    for t in range(h.iterations + 1):
        row: dict = {"iteration": t}
        for name in ("accuracy", "w", "kl", "entropy", "answers"):
            row[name] = float(getattr(h, name)[t].mean())
        row["accuracy_std"] = float(h.accuracy[t].std())
        for name in (*STEP_METRICS, "frac_zero"):
            row[name] = None if t == 0 else float(getattr(h, name)[t - 1].mean())
        for j, pj in enumerate(h.p[t].mean(axis=0)):
            row[f"p_{j}"] = float(pj)
        if per_seed and S > 1:
            for s in range(S):
                row[f"accuracy_seed{s}"] = float(h.accuracy[t, s])
        rows.append(row)
    return rows
