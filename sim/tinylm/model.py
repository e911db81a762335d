"""A tiny decoder-only transformer (nanoGPT-style) with a key/value cache for sampling.

Shapes: B batch, T tokens, C = d_model, H heads, V vocabulary (14).

    ids (B, T) -> token + position embeddings (B, T, C) -> n_layer x Block -> LayerNorm -> logits (B, T, V)

Every prompt has 6 tokens, so a whole batch is generated in lockstep: one forward over the
prompts fills the cache, then each new token costs one forward of a single position.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from sim.tinylm.tokens import MAX_NEW_TOKENS, PROMPT_LEN, VOCAB_SIZE


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = VOCAB_SIZE  # 14 characters
    block_size: int = PROMPT_LEN + MAX_NEW_TOKENS  # 10: prompt + longest response
    n_layer: int = 2  # transformer blocks
    n_head: int = 4  # attention heads
    d_model: int = 64  # width C

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "d_model"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.d_model % self.n_head:
            raise ValueError(f"d_model must be a multiple of n_head ({self.n_head}), got {self.d_model}")

    def to_dict(self) -> dict:
        return asdict(self)


KVCache = list[tuple[torch.Tensor, torch.Tensor]]  # per layer: keys, values (B, H, T_past, C/H)


class SelfAttention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, x, past: tuple[torch.Tensor, torch.Tensor] | None = None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)  # 3 x (B, T, C)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, H, T, C/H)
        if past is not None:
            k = torch.cat([past[0], k], dim=2)  # (B, H, T_past + T, C/H)
            v = torch.cat([past[1], v], dim=2)
        # Without a cache the mask is causal. With one, we only ever feed one new token, which may
        # look at everything before it, so no mask is needed.
        causal = past is None and T > 1
        if past is not None and T > 1:
            raise ValueError("with a cache, feed one token at a time")
        y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # (B, H, T, C/H)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.proj(y), (k, v)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        C = cfg.d_model
        self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.GELU(), nn.Linear(4 * C, C))

    def forward(self, x, past=None):
        a, kv = self.attn(self.ln1(x), past)
        x = x + a
        return x + self.mlp(self.ln2(x)), kv


class TinyLM(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.block_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2's scaled init of the residual projections
            if name.endswith("proj.weight") or name.endswith("mlp.2.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids: torch.Tensor, cache: KVCache | None = None) -> tuple[torch.Tensor, KVCache]:
        """ids (B, T) -> logits (B, T, V) and the updated cache. With a cache, T must be 1."""
        B, T = ids.shape
        start = 0 if cache is None else cache[0][0].shape[2]
        if start + T > self.cfg.block_size:
            raise ValueError(f"sequence of {start + T} tokens exceeds block_size {self.cfg.block_size}")
        pos = torch.arange(start, start + T, device=ids.device)  # (T,)
        x = self.tok_emb(ids) + self.pos_emb(pos)  # (B, T, C)
        new_cache: KVCache = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, None if cache is None else cache[i])
            new_cache.append(kv)
        return self.head(self.ln_f(x)), new_cache  # (B, T, V)


def build_model(cfg: ModelConfig, seed: int) -> TinyLM:
    """A freshly initialised model; the initialisation depends only on `seed` (global RNG untouched)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return TinyLM(cfg)


@torch.no_grad()
def generate(
    model: TinyLM,
    prompts: torch.Tensor,
    generator: torch.Generator,
    *,
    temperature: float = 1.0,
    max_new_tokens: int = MAX_NEW_TOKENS,
) -> torch.Tensor:
    """Sample responses for a batch of equal-length prompts with a key/value cache.

    prompts (B, 6) -> responses (B, max_new_tokens). Every row runs all steps (batched lockstep);
    whatever follows a row's first <eos> is ignored by the verifier and masked in the loss.
    temperature=0 means greedy.
    """
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    logits, cache = model(prompts)  # (B, 6, V)
    logits = logits[:, -1]  # (B, V)
    out = []
    for t in range(max_new_tokens):
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)  # (B, 1)
        else:
            probs = F.softmax(logits / temperature, dim=-1)  # (B, V)
            nxt = torch.multinomial(probs, 1, generator=generator)  # (B, 1)
        out.append(nxt)
        if t + 1 < max_new_tokens:
            logits, cache = model(nxt, cache)
            logits = logits[:, -1]
    return torch.cat(out, dim=1)  # (B, max_new_tokens)


def response_logprobs(model: TinyLM, prompts: torch.Tensor, responses: torch.Tensor, temperature: float = 1.0):
    """Teacher-forced log-probabilities and entropies of the response tokens (with gradient).

    prompts (B, 6), responses (B, T) -> logp (B, T), entropy (B, T), both at the response positions,
    under the tempered distribution softmax(logits / temperature) that `generate` samples from.
    """
    ids = torch.cat([prompts, responses[:, :-1]], dim=1)  # (B, 6 + T - 1): the last token is never input
    logits, _ = model(ids)
    logits = logits[:, prompts.shape[1] - 1 :]  # (B, T, V): the positions that predict the response
    logp_all = F.log_softmax(logits / temperature, dim=-1)  # (B, T, V)
    logp = logp_all.gather(-1, responses.unsqueeze(-1)).squeeze(-1)  # (B, T)
    entropy = -(logp_all.exp() * logp_all).sum(-1)  # (B, T)
    return logp, entropy
