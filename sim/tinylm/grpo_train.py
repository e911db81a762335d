"""GRPO on TinyLM against the exact-match verifier: the chapter's algorithm box, for real.

One iteration (Chapter 15, "GRPO, one iteration"):
  1. draw P training prompts; 2. sample G responses each with the current policy (pi_old);
  3. score them with the verifier; 4. group advantages (sim.grpo.group_advantages);
  5. log pi_old (needed when mu > 1) and log pi_ref (needed when beta > 0; otherwise only for the
     "kl" metric, every kl_every iterations) of every sampled token, without gradients;
  6. mu times: loss = sim.grpo.policy_loss(...), one AdamW step; 7. the policy becomes pi_old.

Every formula comes from sim/grpo.py; this file only moves tensors between them.

Cost: each prompt is read once for its G responses, in sampling and in the loss (model.py), and
AdamW runs on one flat buffer (optim.py). On one core of the 2-core dev box an iteration at the
defaults (P = 16, G = 8) takes ~45 ms of CPU in float64: the 300 default iterations ~13-16 s, pass@1 0.51 -> ~0.86.
Metrics carry TRL's names so they read the same as a TRL log.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np
import torch

from sim.grpo import BASELINES, LOSS_TYPES, SCALES, group_advantages, policy_loss
from sim.tinylm.data import completion_mask, prompt_text, prompt_tokens, response_text, rewards, split
from sim.tinylm.evaluate import expected_pass_at_1
from sim.tinylm.model import DTYPE, TinyLM, generate, response_logprobs
from sim.tinylm.optim import FlatAdamW, clip_grad
from sim.tinylm.tokens import MAX_NEW_TOKENS
from sim.validate import check_number

# Logged every iteration, except "kl": with beta = 0 only every kl_every iterations (and iteration 1).
LR_SCHEDULES = ("constant", "linear")
METRICS = (
    "reward",
    "reward_std",
    "frac_reward_zero_std",
    "kl",
    "entropy",
    "clip_ratio/region_mean",
    "completions/mean_length",
    "loss",
    "grad_norm",
    "step_time",
)


@dataclass(frozen=True)
class GRPOConfig:
    iterations: int = 300  # GRPO iterations (one batch of P*G samples each)
    prompts_per_iter: int = 16  # P, prompts per iteration
    group_size: int = 8  # G, responses per prompt
    lr: float = 1e-3  # AdamW peak learning rate; constant 1e-3 oscillates, decayed it ends stable
    warmup: int = 10  # iterations of linear learning-rate warmup from 0 to lr
    lr_schedule: str = "linear"  # after warmup: "constant" or "linear" decay to 0 at the last iteration (TRL's default)
    adam_beta1: float = 0.98  # AdamW first-moment decay (TRL name; its default 0.9 is noisier at P*G = 128)
    adam_beta2: float = 0.999  # AdamW second-moment decay
    beta: float = 0.0  # KL coefficient (TRL's default 0; DeepSeekMath 0.04)
    mu: int = 1  # inner gradient steps per batch (TRL's num_iterations); > 1 makes the clip matter
    clip_eps: float = 0.2  # PPO clip range, low side (and high side unless clip_eps_high is set)
    clip_eps_high: float | None = None  # DAPO clip-higher, e.g. 0.28
    baseline: str = "mean"  # "mean" (GRPO), "loo" (RLOO), "none"
    scale: str = "group"  # std scaling: "group" (GRPO), "batch" (TRL option), "none" (Dr. GRPO)
    ddof: int = 0  # std convention: 0 population (chapter), 1 sample (TRL)
    eps: float = 1e-4  # added to the std
    loss_type: str = "grpo"  # "grpo" (chapter), "bnpo", "dapo" (TRL default), "dr_grpo"
    temperature: float = 1.0  # sampling temperature (the loss uses the same tempered distribution)
    max_grad_norm: float = 1.0  # gradient clipping, as TRL; 0 turns it off
    weight_decay: float = 0.0  # AdamW weight decay
    eval_every: int = 10  # iterations between held-out pass@1 checks (exact, temperature 1)
    kl_every: int = 10  # with beta = 0 the KL is only a metric: measure it every kl_every iterations
    keep_groups: int = 8  # groups kept for the completions table
    seed: int = 0  # prompt order and sampling
    threads: int = 1  # torch.set_num_threads

    def __post_init__(self):
        check_number("iterations", self.iterations, 0, 100_000)
        check_number("prompts_per_iter", self.prompts_per_iter, 1, 4096)
        check_number("group_size", self.group_size, 2, 1024)
        check_number("lr", self.lr, 0.0, 1.0)
        check_number("warmup", self.warmup, 0, 100_000)
        check_number("adam_beta1", self.adam_beta1, 0.0, 0.9999)
        check_number("adam_beta2", self.adam_beta2, 0.0, 0.99999)
        check_number("beta", self.beta, 0.0, 100.0)
        check_number("mu", self.mu, 1, 64)
        check_number("clip_eps", self.clip_eps, 0.0, 1.0)
        if self.clip_eps_high is not None:
            check_number("clip_eps_high", self.clip_eps_high, 0.0, 10.0)
        choices = (("baseline", BASELINES), ("scale", SCALES), ("loss_type", LOSS_TYPES), ("lr_schedule", LR_SCHEDULES))
        for name, allowed in choices:
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.ddof not in (0, 1):
            raise ValueError(f"ddof must be 0 (population std) or 1 (sample std), got {self.ddof}")
        check_number("eps", self.eps, 0.0, 1.0)
        check_number("temperature", self.temperature, 0.05, 10.0)
        check_number("max_grad_norm", self.max_grad_norm, 0.0, 1e6)
        check_number("weight_decay", self.weight_decay, 0.0, 10.0)
        check_number("eval_every", self.eval_every, 1, 100_000)
        check_number("kl_every", self.kl_every, 1, 100_000)
        check_number("keep_groups", self.keep_groups, 0, 4096)
        check_number("seed", self.seed, 0, 2**63 - 1)
        check_number("threads", self.threads, 1, 256)

    def to_dict(self) -> dict:
        return asdict(self)


def learning_rate(cfg: GRPOConfig, iteration: int) -> float:
    """The learning rate of iteration `iteration` (0-based): linear warmup, then constant or linear decay.

        lr_t = lr * min(1, (t + 1) / (warmup + 1)) * (1 - t / iterations if lr_schedule == "linear" else 1)
    """
    lr = cfg.lr * min(1.0, (iteration + 1) / (cfg.warmup + 1))
    if cfg.lr_schedule == "linear":
        lr *= max(0.0, 1.0 - iteration / max(cfg.iterations, 1))
    return lr


class GRPOTrainer:
    """Owns a trainable copy of the policy, a frozen reference copy and the optimizer.

    >>> trainer = GRPOTrainer(sft_model, GRPOConfig(iterations=5))   # doctest: +SKIP
    >>> for metrics in trainer.steps(): print(metrics["reward"])     # doctest: +SKIP
    """

    def __init__(self, policy: TinyLM, cfg: GRPOConfig = GRPOConfig()):
        self.cfg = cfg
        torch.set_num_threads(cfg.threads)
        self.policy = copy.deepcopy(policy).train()
        self.ref = copy.deepcopy(policy).eval().requires_grad_(False)  # pi_ref, frozen
        self.opt = FlatAdamW(
            self.policy.parameters(), lr=cfg.lr, betas=(cfg.adam_beta1, cfg.adam_beta2), weight_decay=cfg.weight_decay
        )
        self.train_problems, self.heldout = split()
        self.train_prompts = prompt_tokens(self.train_problems)  # (N, 6), tokenised once
        self.rng = np.random.default_rng(cfg.seed)
        self.gen = torch.Generator().manual_seed(cfg.seed)
        self.iteration = 0
        self.history: list[dict] = []  # one metrics dict per iteration
        self.latest_groups: list[dict] = []  # prompt, responses, rewards, advantages
        self.pass_at_1: list[tuple[int, float]] = [(0, expected_pass_at_1(self.policy, self.heldout))]

    def step(self) -> dict:
        """One GRPO iteration; returns its metrics (TRL names, plus "iteration" and maybe "pass_at_1")."""
        cfg, G = self.cfg, self.cfg.group_size
        t0 = time.perf_counter()
        unique = self.rng.integers(0, len(self.train_problems), size=cfg.prompts_per_iter)  # (P,)
        idx = np.repeat(unique, G)  # (P*G,)
        problems = self.train_problems[idx]  # (P*G, 2), grouped: G copies of each prompt in a row
        prompts = self.train_prompts[torch.from_numpy(unique)]  # (P, 6), each read once for its G responses
        self.policy.eval()
        responses = generate(self.policy, prompts, self.gen, temperature=cfg.temperature, group_size=G)  # (P*G, T)
        self.policy.train()
        mask = completion_mask(responses)  # (P*G, T)
        r = rewards(responses, problems).to(DTYPE)  # (P*G,), float64 like everything the loss sees
        adv = group_advantages(r, G, baseline=cfg.baseline, scale=cfg.scale, ddof=cfg.ddof, eps=cfg.eps)

        # pi_ref costs a forward pass; with beta = 0 it only feeds the "kl" metric, so skip it mostly
        want_ref = cfg.beta > 0 or self.iteration % cfg.kl_every == 0
        with torch.no_grad():
            ref_logp = response_logprobs(self.ref, prompts, responses, cfg.temperature, G)[0] if want_ref else None
            old_logp = response_logprobs(self.policy, prompts, responses, cfg.temperature, G)[0] if cfg.mu > 1 else None

        self.opt.lr = learning_rate(cfg, self.iteration)
        sums: dict[str, float] = {}
        for _ in range(cfg.mu):
            logp, entropy = response_logprobs(self.policy, prompts, responses, cfg.temperature, G)
            loss, m = policy_loss(
                logp, old_logp, ref_logp, adv, mask,
                loss_type=cfg.loss_type, beta=cfg.beta, clip_eps=cfg.clip_eps, clip_eps_high=cfg.clip_eps_high,
                max_completion_length=MAX_NEW_TOKENS,
            )  # fmt: skip
            self.opt.zero_grad()
            loss.backward()
            grad = self.opt.flat_grad()  # (N,) every parameter's gradient
            gn = clip_grad(grad, cfg.max_grad_norm)
            self.opt.step(grad)
            m |= {"loss": loss.item(), "grad_norm": gn, "entropy": _masked_mean(entropy.detach(), mask)}
            for k, v in m.items():
                sums[k] = sums.get(k, 0.0) + v

        self.iteration += 1
        groups = r.view(-1, G)  # (P, G)
        metrics = {k: v / cfg.mu for k, v in sums.items()}
        metrics |= {
            "iteration": self.iteration,
            "reward": r.mean().item(),
            "reward_std": r.std().item(),  # TRL: sample std over the batch
            "frac_reward_zero_std": (groups.max(1).values == groups.min(1).values).float().mean().item(),
            "completions/mean_length": mask.sum(1).mean().item(),
        }
        self._keep_groups(problems, responses, r, adv)
        if self.iteration % cfg.eval_every == 0 or self.iteration == cfg.iterations:
            metrics["pass_at_1"] = expected_pass_at_1(self.policy, self.heldout)
            self.pass_at_1.append((self.iteration, metrics["pass_at_1"]))
        metrics["step_time"] = time.perf_counter() - t0
        self.history.append(metrics)
        return metrics

    def _keep_groups(self, problems, responses, r, adv) -> None:
        G, rows = self.cfg.group_size, []
        for p in range(min(self.cfg.keep_groups, len(problems) // G)):
            sl = slice(p * G, (p + 1) * G)
            a, b = problems[p * G]
            rows.append({
                "prompt": prompt_text(a, b),
                "responses": [response_text(x.tolist()) for x in responses[sl]],
                "rewards": r[sl].tolist(),
                "advantages": adv[sl].tolist(),
            })  # fmt: skip
        self.latest_groups = rows

    def steps(self, stop=None, pause=None) -> Iterator[dict]:
        """Run the remaining iterations, yielding each one's metrics.

        `stop` and `pause` are optional threading.Event objects checked before every iteration:
        stop ends the run; while pause is set the loop waits (still honouring stop).
        """
        while self.iteration < self.cfg.iterations:
            while pause is not None and pause.is_set():
                if stop is not None and stop.wait(0.05):
                    return
            if stop is not None and stop.is_set():
                return
            yield self.step()


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> float:
    return float((x * mask).sum() / mask.sum().clamp(min=1.0))
