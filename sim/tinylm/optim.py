"""AdamW and global-norm gradient clipping on one flat buffer that holds every parameter.

    m <- beta1 m + (1 - beta1) g            v <- beta2 v + (1 - beta2) g^2
    theta <- theta (1 - lr wd) - lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)

the same update as torch.optim.AdamW (tests/test_tinylm.py checks them equal). Why not use that one:
on this 2-core CPU its first construction imports torch._dynamo (2.5-4 s, a third of a GRPO run) and
each step loops in Python over the model's ~30 tensors (~12 ms, as long as the forward and backward
of TinyLM). Here the parameters become views into one flat tensor, so a step is six tensor ops.
"""

from __future__ import annotations

import math

import torch


class FlatAdamW:
    """AdamW over `params`, which are rebound to views of one contiguous buffer `self.flat`.

    >>> opt = FlatAdamW(model.parameters(), lr=3e-4)       # doctest: +SKIP
    >>> loss.backward(); g = opt.flat_grad(); opt.step(g)    # doctest: +SKIP
    """

    def __init__(self, params, lr: float, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        with torch.no_grad():
            self.flat = torch.cat([p.detach().reshape(-1) for p in self.params])  # (N,)
            offset = 0
            for p in self.params:
                p.data = self.flat[offset : offset + p.numel()].view_as(p)  # same values, now a view
                offset += p.numel()
        self.m = torch.zeros_like(self.flat)  # first moment
        self.v = torch.zeros_like(self.flat)  # second moment
        self.t = 0  # steps taken

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def flat_grad(self) -> torch.Tensor:
        """Every parameter's gradient in one (N,) tensor (zeros where a parameter got none)."""
        grads = [torch.zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.reshape(-1) for p in self.params]
        return torch.cat(grads)

    @torch.no_grad()
    def step(self, grad: torch.Tensor) -> None:
        """One AdamW update with the flat gradient `grad` (N,)."""
        b1, b2 = self.betas
        self.t += 1
        self.m.lerp_(grad, 1 - b1)
        self.v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
        self.flat.mul_(1 - self.lr * self.weight_decay)
        denom = (self.v / (1 - b2**self.t)).sqrt_().add_(self.eps)
        self.flat.addcdiv_(self.m, denom, value=-self.lr / (1 - b1**self.t))


def clip_grad(grad: torch.Tensor, max_norm: float) -> float:
    """Scale the flat gradient in place to L2 norm <= max_norm (0: leave it); return the norm before.

    Same rule as torch.nn.utils.clip_grad_norm_: g <- g * min(1, max_norm / (||g|| + 1e-6)).
    """
    norm = float(torch.linalg.vector_norm(grad))
    if max_norm > 0 and math.isfinite(norm):
        grad.mul_(min(1.0, max_norm / (norm + 1e-6)))
    return norm
