"""TinyLM as a transformers model, and its tokenizer: what TRL's GRPOTrainer needs to train TinyLM itself.

Why wrap TinyLM rather than train a transformers architecture of the same size: the shipped SFT checkpoint
(assets/data/tinylm_sft.pt) is then the start of both trainers, the weights are the same float64 tensors, and a
comparison of `--trainer sim` with `--trainer trl` is about the trainer (sampling, batching, loss, optimizer),
not about a second model or a second SFT run.

    model = TinyLMForCausalLM.wrap(tinylm)      # shares nothing: a copy of the weights
    tok = build_tokenizer()                     # PreTrainedTokenizerFast over sim/tinylm/tokens.py's 14 ids
    tok("37+48=").input_ids                      # [3, 7, 10, 4, 8, 11]

The forward is TinyLM's own blocks (tested: the logits equal TinyLM's to 1e-10 in float64). TRL patches the
forward with a fused LM head that calls `model.base_model(...)` for hidden states and
`get_output_embeddings()` for the head, so the backbone (`TinyLMBody`) stops before the head.

Positions are absolute from 0, so a row must not be left-padded: every TinyLM prompt has 6 tokens and TRL pads
completions on the right, which a causal model never looks at. A left-padded batch raises instead of
silently shifting positions. Generation uses transformers' `generate` without a cache (at most 10 tokens).

This module imports transformers: import it only when training with TRL (sim/tinylm/trl_bridge.py).
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save_file
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    GenerationConfig,
    GenerationMixin,
    PretrainedConfig,
    PreTrainedModel,
    PreTrainedTokenizerFast,
)
from transformers.modeling_outputs import BaseModelOutput, CausalLMOutput

from sim.tinylm.model import DTYPE, ModelConfig, SelfAttention, TinyLM
from sim.tinylm.tokens import EOS, NAMES, PAD


def build_tokenizer() -> PreTrainedTokenizerFast:
    """One token per character, TinyLM's ids: "0".."9" 0..9, "+" 10, "=" 11, <eos> 12, <pad> 13."""
    vocab = {name: i for i, name in enumerate(NAMES)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token=NAMES[PAD]))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")  # every character is a token
    tok.decoder = decoders.Fuse()  # "8", "5" -> "85" (no spaces)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token=NAMES[EOS], pad_token=NAMES[PAD], unk_token=NAMES[PAD], padding_side="left"
    )


class TinyLMConfig(PretrainedConfig):
    model_type = "tinylm"

    def __init__(self, n_layer=2, n_head=4, d_model=64, vocab_size=14, block_size=10, **kwargs):
        self.n_layer, self.n_head, self.d_model = n_layer, n_head, d_model
        self.vocab_size, self.block_size = vocab_size, block_size
        kwargs.setdefault("eos_token_id", EOS)
        kwargs.setdefault("pad_token_id", PAD)
        kwargs.setdefault("use_cache", False)
        kwargs.setdefault("auto_map", {})  # no remote code: TRL 1.16 and transformers read config.auto_map
        super().__init__(**kwargs)

    def model_config(self) -> ModelConfig:
        return ModelConfig(vocab_size=self.vocab_size, block_size=self.block_size, n_layer=self.n_layer,
                           n_head=self.n_head, d_model=self.d_model)  # fmt: skip


class TinyLMBody(torch.nn.Module):
    """TinyLM up to its final LayerNorm: ids (B, T) -> hidden states (B, T, C). Holds the whole TinyLM."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.tinylm = TinyLM(cfg)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None, **_) -> BaseModelOutput:
        if attention_mask is not None and not bool(attention_mask[:, 0].all()):
            raise ValueError("TinyLM uses absolute positions: left-padded rows are not supported")
        m, T = self.tinylm, input_ids.shape[1]
        if T > m.cfg.block_size:
            raise ValueError(f"sequence of {T} tokens exceeds block_size {m.cfg.block_size}")
        x = m.tok_emb(input_ids) + m.pos_emb(torch.arange(T, device=input_ids.device))  # (B, T, C)
        for block in m.blocks:
            x, _ = block(x)
        return BaseModelOutput(last_hidden_state=m.ln_f(x))  # (B, T, C)


class TinyLMForCausalLM(PreTrainedModel, GenerationMixin):
    config_class = TinyLMConfig
    base_model_prefix = "transformer"
    main_input_name = "input_ids"
    _supports_cache_class = False

    def __init__(self, config: TinyLMConfig):
        super().__init__(config)
        self.transformer = TinyLMBody(config.model_config())
        self.generation_config = GenerationConfig(eos_token_id=EOS, pad_token_id=PAD, use_cache=False)
        self.post_init()

    def _init_weights(self, module):
        """The weights come from TinyLM or a checkpoint; only the causal mask is set here. from_pretrained (TRL's
        reference model, beta > 0) builds the model on the meta device and leaves a buffer no checkpoint holds
        (the mask is persistent=False) uninitialised: garbage, and logits 18 apart from the policy's."""
        if isinstance(module, SelfAttention):
            module.causal.copy_(torch.ones_like(module.causal).tril())

    @property
    def tinylm(self) -> TinyLM:
        """The TinyLM inside: sim's evaluation runs on it directly (same tensors)."""
        return self.transformer.tinylm

    def get_output_embeddings(self):
        return self.tinylm.head

    def get_input_embeddings(self):
        return self.tinylm.tok_emb

    def forward(self, input_ids=None, attention_mask=None, labels=None, **kwargs) -> CausalLMOutput:
        """ids (B, T) -> logits (B, T, V); with labels, the mean next-token cross-entropy (ignore -100)."""
        hidden = self.transformer(input_ids, attention_mask).last_hidden_state  # (B, T, C)
        logits = self.tinylm.head(hidden)  # (B, T, V)
        loss = None
        if labels is not None:
            loss = torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), labels[:, 1:].flatten(),
                                                     ignore_index=-100)  # fmt: skip
        return CausalLMOutput(loss=loss, logits=logits)

    def prepare_inputs_for_generation(self, input_ids, attention_mask=None, **kwargs):
        return {"input_ids": input_ids, "attention_mask": attention_mask}  # no cache: the whole row every step

    @classmethod
    def wrap(cls, model: TinyLM) -> TinyLMForCausalLM:
        """A transformers model holding a copy of `model`'s weights (float64, like TinyLM)."""
        wrapped = cls(TinyLMConfig(**model.cfg.to_dict())).to(DTYPE)
        wrapped.tinylm.load_state_dict(model.state_dict())
        return wrapped


def save_as_reference(model: TinyLMForCausalLM, folder: str | Path) -> None:
    """Save `model` into `folder` and point its config there, so that TRL can build its reference model.

    With beta > 0, TRL 1.16.0's GRPOTrainer builds the reference from the policy's config, not from the policy:
    `create_model_from_path(config._name_or_path)`, which reads the folder with AutoConfig and
    AutoModelForCausalLM. A model built in memory has an empty name ("Repo id must use alphanumeric chars ... ''"),
    so the policy's weights are saved first (0.8 MB in float64 at the default size) and the Auto classes learn
    the "tinylm" model type. The reference is then a copy of the policy at the start of GRPO, as in sim's trainer.

    Written file by file rather than with save_pretrained, which under torch.distributed writes on rank 0 only:
    every rank builds its own reference from its own temporary folder (on its own machine, maybe)."""
    AutoConfig.register(TinyLMConfig.model_type, TinyLMConfig, exist_ok=True)
    AutoModelForCausalLM.register(TinyLMConfig, TinyLMForCausalLM, exist_ok=True)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.config.architectures = [type(model).__name__]  # what save_pretrained records and TRL's loader reads
    model.config.save_pretrained(folder)  # config.json: model_type "tinylm", the sizes
    weights = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    model.config.name_or_path = str(folder)
