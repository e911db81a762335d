"""Supervised fine-tuning from scratch, stopped at the chapter's starting point (~50% pass@1).

Next-token cross-entropy on the response tokens only (the answer's digits and <eos>):

    loss = - mean over real response tokens of log pi(y_t | prompt, y_<t)

Training stops the first time the held-out pass@1 at temperature 1 reaches `target_pass_at_1`.
That pass@1 is computed exactly, as the mean over problems of pi(answer | prompt) (see
evaluate.expected_pass_at_1), so the stopping point is deterministic for a given seed.

The demonstrations come from an imperfect teacher (teacher.py): 30% of its answers are near misses
(off by 1 or 10), and it has a blind spot, the ripple carry (45+57 written "02" 98% of the time). The model
learns the teacher's spread, so at pass@1 ~ 0.5 its most likely answer is usually right (greedy ~0.9 on the
held-out set) while a sample often is not, and on the blind spot a sample is almost never right:
the chapter's setting, where GRPO sharpens what the model can already find and coverage at large k
is not saturated. Clean labels stop SFT with greedy ~0.7, and a GRPO run then plateaus near that.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from sim.settings import setting, validate
from sim.tinylm.data import answer_tokens, prompt_tokens, split
from sim.tinylm.evaluate import expected_pass_at_1
from sim.tinylm.model import ModelConfig, TinyLM, build_model
from sim.tinylm.optim import FlatAdamW
from sim.tinylm.teacher import teacher_targets
from sim.tinylm.tokens import PAD


@dataclass(frozen=True)
class SFTConfig:
    model: ModelConfig = field(default_factory=ModelConfig)  # architecture
    seed: int = setting(0, "model init and batch order", lo=0, hi=2**63 - 1, integer=True)
    lr: float = setting(3e-3, "AdamW learning rate", lo=0.0, hi=1.0, low_open=True)
    batch_size: int = setting(128, "problems per step", lo=1, hi=65536, integer=True)
    max_steps: int = setting(3000, "give up after this many steps", lo=1, hi=10**6, integer=True)
    target_pass_at_1: float = setting(0.5, "stop once held-out pass@1 (temperature 1) reaches this", lo=0.0, hi=1.0,
                                      low_open=True)
    eval_every: int = setting(10, "steps between held-out checks", lo=1, hi=10**6, integer=True)
    weight_decay: float = setting(0.0, "AdamW weight decay", lo=0.0, hi=10.0)
    label_noise: float = setting(0.3, "fraction of demonstrations that are near misses (answer +-1 or +-10)", lo=0.0,
                                 hi=1.0)
    ripple_slip: float = setting(0.98, "how often the teacher forgets a rippled carry (45+57 written 02); teacher.py",
                                 lo=0.0, hi=1.0)
    threads: int = setting(1, "torch threads", lo=1, hi=256, integer=True)

    def __post_init__(self):
        validate(self)

    def to_dict(self) -> dict:
        return asdict(self)


def sft_loss(model: TinyLM, prompts: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the target responses (P, 4), <pad> positions ignored."""
    ids = torch.cat([prompts, targets[:, :-1]], dim=1)  # (P, 9)
    logits, _ = model(ids)
    logits = logits[:, prompts.shape[1] - 1 :]  # (P, 4, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=PAD)


@dataclass
class SFTResult:
    model: TinyLM
    steps: int
    pass_at_1: float  # exact held-out pass@1 at temperature 1 when training stopped
    seconds: float
    history: list[dict]  # {"step", "loss", "pass_at_1"} at every held-out check


def train_sft(
    cfg: SFTConfig = SFTConfig(),
    *,
    on_step: Callable[[int, dict], None] | None = None,
    stop=None,
) -> SFTResult:
    """Train a TinyLM from scratch until held-out pass@1 >= cfg.target_pass_at_1 (or max_steps).

    `on_step(step, {"loss", "pass_at_1"})` is called at every held-out check; `stop` is an optional
    threading.Event: when set, training ends after the current step.
    """
    torch.set_num_threads(cfg.threads)
    t0 = time.perf_counter()
    train, heldout = split()
    rng = np.random.default_rng(cfg.seed)
    model = build_model(cfg.model, cfg.seed)
    opt = FlatAdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    train_prompts, train_targets = prompt_tokens(train), answer_tokens(train)  # (N, 6), (N, 4)
    history: list[dict] = []
    score = 0.0
    step = 0
    for step in range(1, cfg.max_steps + 1):
        idx = rng.integers(0, len(train), size=cfg.batch_size)
        if cfg.label_noise > 0 or cfg.ripple_slip > 0:
            targets = teacher_targets(train[idx], cfg.label_noise, cfg.ripple_slip, rng)
        else:
            targets = train_targets[idx]
        loss = sft_loss(model, train_prompts[torch.from_numpy(idx)], targets)
        opt.zero_grad()
        loss.backward()
        opt.step(opt.flat_grad())
        if step % cfg.eval_every == 0:
            score = expected_pass_at_1(model, heldout)
            row = {"step": step, "loss": loss.item(), "pass_at_1": score}
            history.append(row)
            if on_step is not None:
                on_step(step, row)
            if score >= cfg.target_pass_at_1:
                break
        if stop is not None and stop.is_set():
            break
    model.eval()
    return SFTResult(model, step, score, time.perf_counter() - t0, history)
