"""A tiny decoder-only transformer (nanoGPT-style) with a key/value cache for sampling.

Shapes: B batch, T tokens, C = d_model, H heads, V vocabulary (14).

    ids (B, T) -> token + position embeddings (B, T, C) -> n_layer x Block -> LayerNorm -> logits (B, T, V)

Every prompt has 6 tokens, so a whole batch is generated in lockstep: one forward over the
prompts fills the cache, then each new token costs one forward of a single position.

TinyLM computes in float64 (DTYPE). In float32 a run's figures depend on the CPU: the vectorised kernels
torch picks (AVX-512 here, AVX2 elsewhere) round differently in the last bit, one of the ~10^5 sampled
tokens of a run eventually falls on the other side of a probability boundary, and from there the two
runs differ (measured: seed 0 gave pass@1 0.841 with AVX-512 kernels, 0.846 with AVX2). In float64 the
rounding differences are ~10^-16 and no sample flips: the same seed gives the same figures with either
kernel set (tests/test_tinylm.py runs both). It costs about 1.5x the CPU time of float32.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from sim.tinylm.sampling import inverse_cdf
from sim.tinylm.tokens import MAX_NEW_TOKENS, PROMPT_LEN, VOCAB_SIZE
from sim.validate import check_number

DTYPE = torch.float64  # see the module docstring: reproducible figures across CPUs
LIMITS = {"n_layer": 32, "n_head": 64, "d_model": 4096}  # upper bounds of the architecture fields


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int = VOCAB_SIZE  # 14 characters
    block_size: int = PROMPT_LEN + MAX_NEW_TOKENS  # 10: prompt + longest response
    n_layer: int = 2  # transformer blocks
    n_head: int = 4  # attention heads
    d_model: int = 64  # width C

    def __post_init__(self):
        # vocabulary and block size are fixed by the task: the tokenizer's 14 ids, a 6-token prompt + 4 tokens
        check_number("vocab_size", self.vocab_size, VOCAB_SIZE, VOCAB_SIZE, integer=True)
        block = PROMPT_LEN + MAX_NEW_TOKENS
        check_number("block_size", self.block_size, block, block, integer=True)
        for name, high in LIMITS.items():
            check_number(name, getattr(self, name), 1, high, integer=True)
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
        causal = torch.ones(cfg.block_size, cfg.block_size, dtype=torch.bool).tril()
        self.register_buffer("causal", causal, persistent=False)  # (T, T) lower triangle

    def forward(self, x, past: tuple[torch.Tensor, torch.Tensor] | None = None):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)  # 3 x (B, T, C)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, H, T, C/H)
        if past is not None:
            k = torch.cat([past[0], k], dim=2)  # (B, H, T_past + T, C/H)
            v = torch.cat([past[1], v], dim=2)
        # New token i sits at position T_past + i and may look at every position up to its own: rows
        # T_past .. T_past+T-1 of the causal mask. One new token sees everything, so it needs no mask.
        # An explicit boolean mask rather than is_causal=True: on this CPU at B=128, T=9 the
        # forward+backward takes 3 ms instead of 5 ms.
        start = 0 if past is None else past[0].shape[2]
        mask = self.causal[start : start + T, : start + T] if T > 1 else None  # (T, T_past + T), True = may attend
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, H, T, C/H)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.proj(y), (k, v)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        C = cfg.d_model
        self.mlp = nn.Sequential(nn.Linear(C, 4 * C), nn.ReLU(), nn.Linear(4 * C, C))  # ReLU: 1/8 of GELU's cost on CPU

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
        self.to(DTYPE)  # initialised in float32 (the same draws as before), computed in float64

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids: torch.Tensor, cache: KVCache | None = None) -> tuple[torch.Tensor, KVCache]:
        """ids (B, T) -> logits (B, T, V) and the updated cache; the ids continue the cached tokens, if any."""
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


def expand_cache(cache: KVCache, group_size: int) -> KVCache:
    """Repeat each row's cache G times: (P, H, T, C/H) -> (P*G, H, T, C/H) per layer (differentiable)."""
    return [(k.repeat_interleave(group_size, dim=0), v.repeat_interleave(group_size, dim=0)) for k, v in cache]


@torch.no_grad()
def generate(
    model: TinyLM,
    prompts: torch.Tensor,
    generator: torch.Generator | torch.Tensor,
    *,
    temperature: float = 1.0,
    max_new_tokens: int = MAX_NEW_TOKENS,
    group_size: int = 1,
) -> torch.Tensor:
    """Sample `group_size` responses per prompt for a batch of equal-length prompts, with a key/value cache.

    prompts (P, 6) -> responses (P*G, max_new_tokens), grouped: rows p*G .. p*G+G-1 answer prompt p.
    Each prompt is read once and its cache copied G times (the G rows would compute the same thing).
    Every row runs all steps (batched lockstep); whatever follows a row's first <eos> is ignored by
    the verifier and masked in the loss. temperature=0 means greedy.

    `generator` is torch's generator (torch.multinomial), or a (P*G, max_new_tokens) tensor of uniforms, one per
    row and token, each turned into a token by the inverse CDF (sim/tinylm/sampling.py: the portable stream).
    """
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    uniforms = None if isinstance(generator, torch.Generator) else generator
    if uniforms is not None and tuple(uniforms.shape) != (len(prompts) * group_size, max_new_tokens):
        raise ValueError(f"uniforms must have shape {(len(prompts) * group_size, max_new_tokens)}, "
                         f"got {tuple(uniforms.shape)}")
    logits, cache = model(prompts)  # (P, 6, V)
    logits = logits[:, -1].repeat_interleave(group_size, dim=0)  # (P*G, V)
    if group_size > 1:
        cache = expand_cache(cache, group_size)
    out = []
    for t in range(max_new_tokens):
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)  # (P*G, 1)
        else:
            probs = F.softmax(logits / temperature, dim=-1)  # (P*G, V)
            if uniforms is None:
                nxt = torch.multinomial(probs, 1, generator=generator)  # (P*G, 1)
            else:
                nxt = inverse_cdf(probs, uniforms[:, t])  # (P*G, 1)
        out.append(nxt)
        if t + 1 < max_new_tokens:
            logits, cache = model(nxt, cache)
            logits = logits[:, -1]
    return torch.cat(out, dim=1)  # (P*G, max_new_tokens)


def response_logprobs(
    model: TinyLM, prompts: torch.Tensor, responses: torch.Tensor, temperature: float = 1.0, group_size: int = 1
):
    """Teacher-forced log-probabilities and entropies of the response tokens (with gradient).

    prompts (P, 6), responses (P*G, T) grouped as `generate` returns them -> logp (P*G, T),
    entropy (P*G, T), at the response positions, under the tempered distribution
    softmax(logits / temperature) that `generate` samples from.

    Each prompt is read once and its keys/values shared by its G responses, which then read only
    their own T - 1 input tokens: (6 + G*(T-1)) / (G*(6+T-1)) of a plain forward's tokens, 0.4x at
    G = 8, T = 4 (tested equal to the plain forward over prompt + response, gradients included).
    """
    logits, cache = model(prompts)  # (P, 6, V)
    first = logits[:, -1:].repeat_interleave(group_size, dim=0)  # (P*G, 1, V): predicts response token 0
    if responses.shape[1] > 1:
        rest, _ = model(responses[:, :-1], expand_cache(cache, group_size))  # (P*G, T-1, V); last token never input
        logits = torch.cat([first, rest], dim=1)  # (P*G, T, V)
    else:
        logits = first
    logp_all = F.log_softmax(logits / temperature, dim=-1)  # (P*G, T, V)
    logp = logp_all.gather(-1, responses.unsqueeze(-1)).squeeze(-1)  # (P*G, T)
    entropy = -(logp_all.exp() * logp_all).sum(-1)  # (P*G, T)
    return logp, entropy
