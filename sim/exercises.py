"""One group of answers, and the chapter's exercises about groups (Chapter 15).

- "A worked example first": one group's mean, std, advantages, loss at ratio 1 and gradient norm.
- "Groups that teach nothing": P(all G rewards equal) = p^G + (1 - p)^G, and its table.
- Exercise 15.4: the mean |A| of a group with c of G correct, with and without the std division.
- "From advantages to a loss": per-token gradient weights A_i / (G |y_i|) of tokenised responses,
  and the credit each (position, token) collects across the group.

Everything GRPO-shaped goes through sim.grpo (group_advantages, policy_loss, autograd); nothing
here re-types an advantage formula. `scale` and `ddof` are sim.grpo's: "group" / "none", 0 (the
chapter's population std) / 1 (TRL's sample std). Returns plain floats, lists and numpy arrays.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.stats import binom

from sim.grpo import LOSS_TYPES, grad_norm, group_advantages, policy_loss

# The chapter's worked example: x = "37+48=", G = 4 responses 85, 75, 815, 85; rewards 1, 0, 0, 1.
WORKED_EXAMPLE_TOKENS = (("8", "5", "<eos>"), ("7", "5", "<eos>"), ("8", "1", "5", "<eos>"), ("8", "5", "<eos>"))
WORKED_EXAMPLE_REWARDS = (1.0, 0.0, 0.0, 1.0)
CORRECT_ANSWER = ("8", "5", "<eos>")
WRONG_ANSWERS = (("7", "5", "<eos>"), ("8", "1", "5", "<eos>"), ("8", "6", "<eos>"), ("9", "5", "<eos>"),
                 ("8", "4", "<eos>"), ("7", "4", "5", "<eos>"))  # near misses a model might write for 85

# CISPO's cap on the weight in the views: ScaleRL's recommended eps_max (TRL's clip_eps_high for cispo). Left
# unset, TRL caps at clip_eps = 0.2, which would scale every weight at ratio 1 by 0.2.
CISPO_CAP = 5.0

# Rows and columns of the "groups that teach nothing" table shown on the page.
TABLE_PS = (0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.99)
TABLE_GROUP_SIZES = (4, 8, 16, 64)


def _rewards(rewards) -> torch.Tensor:
    r = torch.as_tensor([float(x) for x in rewards], dtype=torch.float64)  # (G,)
    if r.numel() < 2:
        raise ValueError(f"rewards: a group needs at least 2 responses, got {r.numel()}")
    return r


def group_summary(rewards, *, scale: str = "group", ddof: int = 0, eps: float = 1e-4) -> dict:
    """One group of G rewards: mean, population and sample std, advantages, loss and gradient norm.

    Advantages are sim.grpo.group_advantages. The loss is sim.grpo.policy_loss on-policy (ratio 1, one
    token per response, beta = 0) with respect to the G log-probabilities; it reads 0 because the
    advantages sum to 0, while its gradient, -A_i / G per response, does not vanish unless every A_i does.
    """
    r = _rewards(rewards)
    G = r.numel()
    adv = group_advantages(r, G, scale=scale, ddof=ddof, eps=eps)  # (G,)
    logp = torch.full((G, 1), float(np.log(0.5)), dtype=torch.float64, requires_grad=True)  # (G, T=1)
    loss, _ = policy_loss(logp, None, None, adv, torch.ones(G, 1, dtype=torch.float64))
    return {
        "mean": float(r.mean()),
        "std_population": float(r.std(correction=0)),
        "std_sample": float(r.std(correction=1)),
        "advantages": adv.numpy(),
        "loss": float(loss.detach()),
        "grad_norm": grad_norm(loss, logp),
    }


def p_no_signal(p, group_size):
    """Probability that a group of G answers all get the same 0/1 reward: p^G + (1 - p)^G.

    Such a group has zero advantages and gives no gradient. Chapter: p = 0.05 yields signal
    (1 - this) 34% of the time at G = 8 and 96% at G = 64. Broadcasts over p and G.
    """
    p = np.asarray(p, dtype=float)
    G = np.asarray(group_size, dtype=float)
    return p**G + (1.0 - p) ** G


def no_signal_table(ps=TABLE_PS, group_sizes=TABLE_GROUP_SIZES) -> dict[str, np.ndarray]:
    """The chapter's table of P(group teaches nothing), rows p and columns G.

    Returns {"p": (Np,), "group_size": (NG,), "p_no_signal": (Np, NG), "p_signal": (Np, NG)}.
    Read it from both ends: p near 0 (too hard) and p near 1 (too easy) both teach nothing;
    bigger G rescues the extremes.
    """
    p = np.asarray(ps, dtype=float)
    G = np.asarray(group_sizes, dtype=int)
    if p.size == 0 or p.min() < 0 or p.max() > 1:
        raise ValueError("ps must be probabilities in [0, 1]")
    if G.size == 0 or G.min() < 1:
        raise ValueError("group_sizes must be integers >= 1")
    none = p_no_signal(p[:, None], G[None, :])  # (Np, NG)
    return {"p": p, "group_size": G, "p_no_signal": none, "p_signal": 1.0 - none}


def _check_group(num_correct, group_size) -> None:
    if int(group_size) != group_size or group_size < 1:
        raise ValueError(f"group_size must be an integer >= 1, got {group_size}")
    c = np.asarray(num_correct)
    if c.size and (np.any(c != np.round(c)) or c.min() < 0 or c.max() > group_size):
        raise ValueError(f"num_correct must be integers in [0, group_size={group_size}], got {num_correct!r}")


def mean_abs_advantage(num_correct, group_size: int, *, scale: str = "group", ddof: int = 0, eps: float = 1e-4):
    """Mean |A_i| over a group of G 0/1 rewards of which c are correct (Exercise 15.4).

    Computed by sim.grpo.group_advantages on the reward vector (1,...,1, 0,...,0), one group per
    entry of `num_correct` (broadcasts: pass an array of c to get an array back).
    With q = c/G and population std sigma = sqrt(q (1 - q)), the closed form is

        without std:  mean |A| = 2 q (1 - q)
        with std:     mean |A| = 2 q (1 - q) / (sigma + eps) ~= 2 sigma

    Chapter: 1 of 8 correct gives 0.66 with std and 0.22 without; 4 of 8 gives 1.0 and 0.5.
    So the std division pushes a rarely solved prompt almost as hard as a half-solved one.
    `ddof=0` is the chapter's population std, `ddof=1` TRL's sample std.
    """
    _check_group(num_correct, group_size)
    c = np.atleast_1d(np.asarray(num_correct, dtype=int))  # (P,)
    G = int(group_size)
    rewards = (torch.arange(G)[None, :] < torch.as_tensor(c)[:, None]).to(torch.float64)  # (P, G)
    adv = group_advantages(rewards.reshape(-1), G, scale=scale, ddof=ddof, eps=eps)
    out = adv.reshape(-1, G).abs().mean(dim=1).numpy()  # (P,)
    return out if np.ndim(num_correct) else float(out[0])


def expected_mean_abs_advantage(p, group_size: int, *, scale: str = "group", ddof: int = 0, eps: float = 1e-4):
    """E[mean |A|] of a group when each of the G answers is correct with probability p.

        E = sum_c Binomial(c; G, p) * mean_abs_advantage(c, G)

    Broadcasts over p. All-equal groups (c = 0 or G) contribute 0: this is where
    p_no_signal shows up again.
    """
    p = np.asarray(p, dtype=float)
    if p.size and (p.min() < 0 or p.max() > 1):
        raise ValueError("p must be in [0, 1]")
    cs = np.arange(int(group_size) + 1)  # (G+1,)
    per_c = mean_abs_advantage(cs, group_size, scale=scale, ddof=ddof, eps=eps)  # (G+1,)
    pmf = binom.pmf(cs, int(group_size), p[..., None])  # (..., G+1)
    return pmf @ per_c


def _check_responses(tokens, rewards) -> None:
    if len(tokens) == 0:
        raise ValueError("tokens must hold at least one response")
    if len(tokens) != len(rewards):
        raise ValueError(f"rewards must have one entry per response ({len(tokens)}), got {len(rewards)}")
    if any(len(t) == 0 for t in tokens):
        raise ValueError("tokens: every response needs at least one token")


def group_responses(rewards) -> list[tuple[str, ...]]:
    """Tokenised answers to x = "37+48=" for a group with these 0/1 rewards: a correct answer is 8 5 <eos>,
    the wrong ones are, in turn, WRONG_ANSWERS. The chapter's rewards 1, 0, 0, 1 give its four responses
    (85, 75, 815, 85); any other group gets answers of the same kind."""
    out, wrong = [], 0
    for r in rewards:
        if float(r) > 0:
            out.append(CORRECT_ANSWER)
        else:
            out.append(WRONG_ANSWERS[wrong % len(WRONG_ANSWERS)])
            wrong += 1
    return out


def per_token_weights(tokens, rewards, *, loss_type: str = "grpo", scale: str = "group", ddof: int = 0,
                      eps: float = 1e-4, max_completion_length: int | None = None,
                      clip_eps_high: float | None = None) -> list[list[float]]:
    """Gradient weight on each token's log-probability, for one group of tokenised responses:
    -d loss / d log pi(y_it) at ratio 1, by autograd through sim.grpo.policy_loss with `loss_type`.

        grpo, sapo    A_i / (G |y_i|)            mean over each response's tokens, then over responses
        bnpo, dapo    A_i / sum_j |y_j|          one mean over all tokens of the group
        cispo, vespo  A_i / sum_j |y_j|          the same (CISPO's weight min(1, cap), VESPO's phi(1) = 1);
                                                 CISPO's cap is clip_eps_high (TRL's rule; unset: 0.2)
        dr_grpo       A_i / (G L)                a constant, L = max_completion_length (default: longest)
        luspo         A_i / G                    each response's sum: no division by length at all

    At ratio 1 the importance level does not matter (GSPO's sequence ratio is 1 too, and its gradient
    spreads as s / |y_i| over the tokens, as the per-response mean does).

    `tokens` is a list of G token lists such as [["8", "5", "<eos>"], ...]; `rewards` has G numbers.
    Chapter: rewards 1, 0, 0, 1 with lengths 3, 3, 4, 3 give +1/12, -1/12, -1/16, +1/12 under "grpo":
    the long wrong answer is pushed down less per token only because it is longer. Under dapo every
    token gets A_i / 13, under dr_grpo A_i / 16: the length bias is gone.
    """
    _check_responses(tokens, rewards)
    G, T = len(tokens), max(len(t) for t in tokens)
    r = torch.as_tensor([float(x) for x in rewards], dtype=torch.float64)  # (G,)
    adv = group_advantages(r, G, scale=scale, ddof=ddof, eps=eps)  # (G,)
    mask = torch.tensor([[1.0] * len(t) + [0.0] * (T - len(t)) for t in tokens], dtype=torch.float64)  # (G, T)
    logp = torch.zeros(G, T, dtype=torch.float64, requires_grad=True)  # the values do not matter at ratio 1
    loss, _ = policy_loss(logp, None, None, adv, mask, loss_type=loss_type,
                          max_completion_length=max_completion_length or T, clip_eps_high=clip_eps_high)
    (grad,) = torch.autograd.grad(loss, logp)  # (G, T)
    return [[float(-grad[i, t]) + 0.0 for t in range(len(toks))] for i, toks in enumerate(tokens)]


def length_effect(tokens, rewards, *, scale: str = "group", ddof: int = 0, eps: float = 1e-4,
                  cispo_cap: float = CISPO_CAP) -> dict | None:
    """The length bias, for every loss type: the per-token weight of the shortest and the longest wrong
    answer of a group (same advantage, different lengths), by per_token_weights.

    Returns None when the group has no two wrong answers of different lengths; else {"short", "long"
    (indices), "rows": [{"loss_type", "short", "long"}], "unbiased": the loss types whose two weights are
    equal, "biased": the others}. Chapter (85, 75, 815, 85): grpo gives -1/12 = -0.083 to 75's tokens and
    -1/16 = -0.063 to 815's; bnpo, dapo, dr_grpo, cispo and vespo give both the same (-1/13, -1/16, ...);
    luspo gives both A/G = -0.25 (a sum per answer, never divided by a length); grpo and sapo keep the bias.
    """
    wrong = [i for i, r in enumerate(rewards) if float(r) == 0]
    if not wrong:
        return None
    short = min(wrong, key=lambda i: len(tokens[i]))
    long = max(wrong, key=lambda i: len(tokens[i]))
    if len(tokens[long]) == len(tokens[short]):
        return None
    rows = []
    for lt in LOSS_TYPES:
        w = per_token_weights(tokens, rewards, loss_type=lt, scale=scale, ddof=ddof, eps=eps,
                              clip_eps_high=cispo_cap if lt == "cispo" else None)
        rows.append({"loss_type": lt, "short": w[short][0], "long": w[long][0]})
    same = [r["loss_type"] for r in rows if abs(r["short"] - r["long"]) < 1e-12]
    return {"short": short, "long": long, "rows": rows, "unbiased": same,
            "biased": [r["loss_type"] for r in rows if r["loss_type"] not in same]}


def credit_table(tokens, weights, prompt_end: str = "=") -> list[dict]:
    """Sum the per-token weights of tokens chosen in the same context: same position, same tokens before.

    Returns rows {"position", "context", "token", "weight", "count"} sorted by position, then by first
    appearance; `context` is the text the token followed (`prompt_end` and the response so far). Only
    tokens that share a context compete for the same probability, so only they are added up. At
    position 0 every response shares the context "=" (the chapter's example): token "8" collects
    +1/12 + 1/12 - 1/16 ~= +0.10 (though the wrong 815 also started with it) and "7" collects -1/12
    ~= -0.083. After "8", the token "5" collects +1/12 + 1/12 and "1" collects -1/16.
    """
    if len(tokens) != len(weights) or any(len(t) != len(w) for t, w in zip(tokens, weights, strict=False)):
        raise ValueError("weights must have the same shape as tokens (one weight per token)")
    table: dict[tuple, dict] = {}
    for toks, ws in zip(tokens, weights, strict=True):
        for pos, (tok, w) in enumerate(zip(toks, ws, strict=True)):
            context = " ".join((prompt_end, *toks[:pos]))
            row = table.setdefault((pos, context, tok),
                                   {"position": pos, "context": context, "token": tok, "weight": 0.0, "count": 0})
            row["weight"] += float(w)
            row["count"] += 1
    return sorted(table.values(), key=lambda row: row["position"])  # stable: first appearance within


def first_step_size(cfg) -> float:
    """lr * E[mean |A|] of the toy's first batch (sim.toy.ToyConfig `cfg`, scale "group" or "none"): how
    far the first update moves, before the step direction. Each prompt j starts at p_j = sigmoid(w + u - d_j)
    and contributes expected_mean_abs_advantage(p_j); the batch mean |A| averages them over prompts.
    Default toy: E[mean |A|] = 0.394 with the std and 0.168 without, so at the same lr the run without
    std simply takes steps 2.3 times smaller.
    """
    from sim.toy import make_difficulties

    p0 = 1.0 / (1.0 + np.exp(-(cfg.w_init + cfg.u_init - make_difficulties(cfg))))  # (P,)
    mean_abs = expected_mean_abs_advantage(p0, cfg.group_size, scale=cfg.scale, ddof=cfg.ddof, eps=cfg.eps).mean()
    return float(cfg.lr * mean_abs)


def matched_lr(cfg, scale: str) -> float:
    """The learning rate at which the toy with `scale` takes a first step as large as `cfg` does
    (equal lr * E[mean |A|]): compares the two weightings at the same effective step size."""
    import dataclasses

    other = dataclasses.replace(cfg, scale=scale, lr=1.0)
    return first_step_size(cfg) / first_step_size(other)


def std_comparison(with_std, hard_level: float) -> dict:
    """Exercise 15.4's comparison, the toy (sim.toy.ToyConfig `with_std`) run three times: as given (with std);
    without std at the same lr; without std at the lr that gives the same first step (matched_lr). Per run, means
    over the config's seeds: lr, first step size, accuracy (T+1,), the hardest prompt's p (T+1,) and the iteration
    it passes hard_level (or None). Std scaling's page computes it in the browser (assets/js/engine.js
    stdComparison, tested equal to this)."""
    import dataclasses

    from sim.toy import first_above, run_toy

    same_step = dataclasses.replace(with_std, scale="none", lr=matched_lr(with_std, "none"))
    cfgs = {"with std": with_std, "without std, same lr": dataclasses.replace(with_std, scale="none"),
            "without std, same first step": same_step}
    out = {}
    for name, cfg in cfgs.items():
        h = run_toy(cfg)
        hard = h.p[:, :, -1].mean(axis=1)
        out[name] = {"lr": cfg.lr, "step": first_step_size(cfg), "accuracy": h.accuracy.mean(axis=1), "hard": hard,
                     "hard_starts": first_above(hard, hard_level)}
    return out
