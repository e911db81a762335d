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
import functools
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np
import torch

from sim.grpo import group_advantages, policy_loss
from sim.settings import GRPOSettings, grpo_setting, loss_kwargs, setting, validate
from sim.tinylm.data import completion_mask, prompt_text, prompt_tokens, response_text, rewards, split
from sim.tinylm.evaluate import expected_pass_at_1
from sim.tinylm.model import DTYPE, TinyLM, generate, response_logprobs
from sim.tinylm.optim import FlatAdamW, clip_grad
from sim.tinylm.sampling import RNGS, prompt_indices, token_uniforms
from sim.tinylm.teacher import ripple_carry
from sim.tinylm.tokens import MAX_NEW_TOKENS

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
class GRPOConfig(GRPOSettings):
    URL_PREFIX = "tl_"  # the TinyLM page's keys (tl_G, tl_beta, ...) stay apart from the toy pages' (G, beta, ...)
    clip_eps: float = grpo_setting("clip_eps", key="clip")  # tl_clip, as the page's links always wrote it
    iterations: int = setting(300, "GRPO iterations (one batch of P*G samples each)", lo=0, hi=100_000, integer=True,
                              step=1, key="iters", label="Iterations")
    prompts_per_iter: int = setting(16, "P, prompts per iteration", lo=1, hi=4096, integer=True, step=1, key="P",
                                    label="Prompts per iteration P")
    group_size: int = grpo_setting("group_size")
    lr: float = setting(1e-3, "AdamW peak learning rate (constant 1e-3 oscillates; decayed it ends stable)", lo=0.0,
                        hi=1.0, label="Peak learning rate")
    warmup: int = setting(10, "iterations of linear learning-rate warmup from 0 to lr", lo=0, hi=100_000, integer=True)
    lr_schedule: str = setting("linear", "after warmup: constant, or linear decay to 0 at the last iteration (TRL's "
                               "default)", choices=LR_SCHEDULES)
    adam_beta1: float = setting(0.98, "AdamW first-moment decay (TRL's name; its default 0.9 is noisier at P*G = 128)",
                                lo=0.0, hi=0.9999)
    adam_beta2: float = setting(0.999, "AdamW second-moment decay", lo=0.0, hi=0.99999)
    importance_sampling_level: str = grpo_setting("importance_sampling_level")
    blind_spot_prompts: bool = setting(True, "train on the teacher's blind-spot problems too (ripple carries, 45+57): "
                                       "off, GRPO never sees a prompt whose right answer SFT almost never samples")
    temperature: float = setting(1.0, "sampling temperature (the loss uses the same tempered distribution)", lo=0.05,
                                 hi=10.0)
    max_grad_norm: float = setting(1.0, "gradient clipping, as TRL; 0 turns it off", lo=0.0, hi=1e6)
    weight_decay: float = setting(0.0, "AdamW weight decay", lo=0.0, hi=10.0)
    eval_every: int = setting(10, "iterations between held-out pass@1 checks (exact, temperature 1)", lo=1,
                              hi=100_000, integer=True)
    kl_every: int = setting(10, "with beta = 0 the KL is only a metric: measure it every kl_every iterations", lo=1,
                            hi=100_000, integer=True)
    keep_groups: int = setting(8, "groups kept for the completions table", lo=0, hi=4096, integer=True)
    seed: int = setting(0, "prompt order and sampling", lo=0, hi=2**63 - 1, integer=True, step=1, label="Seed")
    rng: str = setting("torch", "the random stream of prompts and samples: torch (numpy's and torch's generators, "
                       "sim's recorded runs) or philox (sim/rng.py's portable one, the browser trainer's: the same "
                       "seed samples the same completions there)", choices=RNGS)
    threads: int = setting(1, "torch threads", lo=1, hi=256, integer=True)

    def __post_init__(self):
        validate(self)
        _check_loss(tuple(sorted(self.loss_kwargs().items())))

    def to_dict(self) -> dict:
        return asdict(self)

    def loss_kwargs(self) -> dict:
        """The keyword arguments of sim.grpo.policy_loss that this config sets, in one place."""
        return loss_kwargs(self) | {"max_completion_length": MAX_NEW_TOKENS}


@functools.lru_cache(maxsize=256)
def _check_loss(kwargs: tuple) -> None:
    """Refuse, before a run starts, a combination policy_loss refuses (its own rule and message): one call on
    two one-token responses, off-policy and with a reference so that every branch's checks run."""
    z = torch.zeros(2, 1, dtype=DTYPE)
    policy_loss(z, z, z, torch.tensor([1.0, -1.0], dtype=DTYPE), torch.ones(2, 1, dtype=DTYPE), **dict(kwargs))


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
        if not cfg.blind_spot_prompts:  # the held-out set stays the same 300: only the training prompts change
            self.train_problems = self.train_problems[~ripple_carry(self.train_problems)]
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
        if cfg.rng == "torch":
            unique = self.rng.integers(0, len(self.train_problems), size=cfg.prompts_per_iter)  # (P,)
            draws = self.gen
        else:  # the portable stream: prompts and tokens named by (iteration, row), as the browser draws them
            unique = prompt_indices(cfg.seed, self.iteration, len(self.train_problems), cfg.prompts_per_iter)
            draws = token_uniforms(cfg.seed, self.iteration, cfg.prompts_per_iter * G)
        idx = np.repeat(unique, G)  # (P*G,)
        problems = self.train_problems[idx]  # (P*G, 2), grouped: G copies of each prompt in a row
        prompts = self.train_prompts[torch.from_numpy(unique)]  # (P, 6), each read once for its G responses
        self.policy.eval()
        responses = generate(self.policy, prompts, draws, temperature=cfg.temperature, group_size=G)  # (P*G, T)
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
            loss, m = policy_loss(logp, old_logp, ref_logp, adv, mask, **cfg.loss_kwargs())
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

    def steps(self, stop=None) -> Iterator[dict]:
        """Run the remaining iterations, yielding each one's metrics. `stop`, an optional threading.Event
        (or multiprocessing.Event), is checked before every iteration and ends the run when set. (Pausing is
        the caller's: job.py's worker waits between iterations.)"""
        while self.iteration < self.cfg.iterations:
            if stop is not None and stop.is_set():
                return
            yield self.step()


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> float:
    return float((x * mask).sum() / mask.sum().clamp(min=1.0))
