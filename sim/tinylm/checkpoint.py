"""Save and load TinyLM checkpoints, checked: format version, config and every tensor's shape.

A checkpoint is a plain dict saved with torch.save and read with torch.load(weights_only=True):

    {"format": "tinylm", "version": 1, "model_config": {...}, "state_dict": {...}, "meta": {...}}

Anything wrong (missing file, unreadable bytes, another format, mismatched shapes) raises
CheckpointError with a message that says what is wrong and how to rebuild the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from sim.tinylm.model import ModelConfig, TinyLM

FORMAT = "tinylm"
VERSION = 2  # 2: ReLU MLP (version 1 files hold GELU weights and would load silently into the wrong model)
ASSET = Path(__file__).resolve().parents[2] / "assets" / "tinylm_sft.pt"  # the shipped SFT model
REGENERATE = "python -m sim tinylm --save-sft assets/tinylm_sft.pt --iterations 0"
HINT = f"Train a fresh SFT model with `python -m sim tinylm --from-scratch`, or rebuild the file with `{REGENERATE}`."


class CheckpointError(Exception):
    """A TinyLM checkpoint is missing, corrupt or does not match the model."""


def save_checkpoint(model: TinyLM, path: str | Path, meta: dict | None = None) -> None:
    """Write the model and a JSON sidecar (path with .json) holding config and `meta`."""
    path = Path(path)
    meta = dict(meta or {})
    blob = {
        "format": FORMAT,
        "version": VERSION,
        "model_config": model.cfg.to_dict(),
        "state_dict": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "meta": meta,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(blob, path)
    side = {"format": FORMAT, "version": VERSION, "model_config": model.cfg.to_dict(), **meta}
    path.with_suffix(".json").write_text(json.dumps(side, indent=2) + "\n")


def load_checkpoint(path: str | Path = ASSET) -> tuple[TinyLM, dict]:
    """Read a checkpoint into a TinyLM (eval mode). Returns (model, meta). Raises CheckpointError."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"TinyLM checkpoint not found: {path}. {HINT}")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for bad bytes; all mean the same here
        raise CheckpointError(f"TinyLM checkpoint {path} is corrupt or unreadable ({type(e).__name__}). {HINT}") from e
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a TinyLM checkpoint (no 'format': '{FORMAT}'). {HINT}")
    if blob.get("version") != VERSION:
        raise CheckpointError(f"{path} has format version {blob.get('version')!r}, this code reads {VERSION}. {HINT}")
    try:
        cfg = ModelConfig(**blob["model_config"])
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{path} has an invalid model config ({e}). {HINT}") from e
    model = TinyLM(cfg)
    expected = model.state_dict()
    state = blob.get("state_dict")
    if not isinstance(state, dict) or set(state) != set(expected):
        missing = sorted(set(expected) - set(state or {}))[:3]
        raise CheckpointError(f"{path} does not hold the expected tensors (missing e.g. {missing}). {HINT}")
    for name, t in expected.items():
        if not isinstance(state[name], torch.Tensor) or state[name].shape != t.shape:
            got = tuple(state[name].shape) if isinstance(state[name], torch.Tensor) else type(state[name]).__name__
            raise CheckpointError(f"{path}: tensor {name} has shape {got}, the config needs {tuple(t.shape)}. {HINT}")
        if not torch.isfinite(state[name]).all():
            raise CheckpointError(f"{path}: tensor {name} holds non-finite values. {HINT}")
    model.load_state_dict(state)
    return model.eval(), dict(blob.get("meta") or {})
