"""The toy's straightforward version: sample every answer, score it, and let sim.grpo + autograd do the rest.

Slow and simple on purpose: it is the oracle the count-based fast path (sim/toy/update.py, sim/toy/runs.py)
is tested against, and the benchmark's baseline. One seed at a time, torch float64.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.special import expit

from sim import grpo
from sim.toy.history import History, ToyHistory
from sim.toy.model import ToyConfig, init_state
from sim.toy.update import CLIP


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
    N, G = rewards.shape
    if N == 0:
        zero = {"loss": 0.0, "grad_norm": 0.0, "kl": 0.0, "mean_abs_adv": 0.0, CLIP: 0.0}
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
    metrics = {CLIP: 0.0, "mean_abs_adv": float(adv.abs().mean())}
    for step in range(cfg.mu):
        loss, m = grpo.policy_loss(logp_now(), old_logp, ref_logp, adv, mask, loss_type=cfg.loss_type,
                                   beta=cfg.beta, clip_eps=cfg.clip_eps, clip_eps_high=cfg.clip_eps_high)
        if step == 0:  # grad_norm keeps the graph, so it goes before the gradient for the step
            metrics.update(loss=float(loss.detach()), kl=m["kl"], grad_norm=grpo.grad_norm(loss, [w_t, u_t]))
        gw, gu = torch.autograd.grad(loss, [w_t, u_t])
        # TRL logs CISPO's capped share as cispo_clip_ratio; the toy keeps it under clip_ratio/region_mean
        metrics[CLIP] += m["cispo_clip_ratio" if cfg.loss_type == "cispo" else CLIP] / cfg.mu
        with torch.no_grad():
            w_t -= cfg.lr_shared * gw
            u_t -= cfg.lr * gu
    return float(w_t.detach()), u_t.detach().numpy().copy(), metrics


def run_toy_reference(cfg: ToyConfig) -> ToyHistory:
    """The straightforward version: samples every answer, one seed at a time, reference_update in torch.

    Same distribution as run_toy, not the same random stream. The benchmark's baseline.
    """
    S, T, P, G = cfg.n_seeds, cfg.iterations, cfg.n_prompts, cfg.group_size
    rng = np.random.default_rng(cfg.seed)
    d, w, u, z_ref = init_state(cfg, S)
    h = History(cfg, S, d, w, u)
    for s in range(S):
        w_s, u_s = float(w[s]), u[s].copy()
        for t in range(T):
            p = expit(w_s + u_s - d)  # (P,)
            rewards = (rng.random((P, G)) < p[:, None]).astype(float)  # (P, G): every answer
            keep = ~grpo.zero_std(rewards)  # (P,) groups with signal
            groups, prompts, n_empty, answers = [rewards[keep]], [np.flatnonzero(keep)], P - keep.sum(), G * P
            for _ in range(cfg.max_redraws if cfg.dynamic_sampling else 0):
                if n_empty == 0:
                    break
                new_prompt = rng.integers(0, P, size=n_empty)
                new = (rng.random((n_empty, G)) < p[new_prompt, None]).astype(float)  # (n_empty, G)
                answers += G * n_empty
                ok = ~grpo.zero_std(new)
                groups.append(new[ok])
                prompts.append(new_prompt[ok])
                n_empty -= ok.sum()
            prompt = np.concatenate(prompts) if cfg.dynamic_sampling else np.arange(P)
            batch = np.concatenate(groups) if cfg.dynamic_sampling else rewards
            w_s, u_s, m = reference_update(w_s, u_s, prompt, batch, cfg, d, z_ref[s])
            m["n_groups"] = len(prompt)
            h.w[t + 1, s], h.u[t + 1, s], h.counts[t, s], h.answers[t, s] = w_s, u_s, rewards.sum(axis=1), answers
            for name, value in m.items():
                h.metrics[name][t, s] = value
    return h.finish()
