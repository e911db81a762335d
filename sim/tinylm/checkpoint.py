"""Save and load TinyLM checkpoints, checked before anything is built: format, config, size, every tensor.

A checkpoint is a plain dict saved with torch.save and read with torch.load(weights_only=True):

    {"format": "tinylm", "version": 3, "model_config": {...}, "state_dict": {...}, "meta": {...}}

The loader checks, in this order, so that a bad file costs nothing: the file exists and is at most
MAX_FILE_BYTES; it unpickles as tensors and plain containers only; format and version; the config has
exactly ModelConfig's five fields, each an int (not a bool or a float), in range, with the tokenizer's
vocabulary and the task's block size; the model it describes fits under the memory cap (sim.tinylm.memory);
the state dict holds exactly the model's tensors with the right shapes, floating point and finite. Only
then is a model built. Anything wrong raises CheckpointError saying what and how to rebuild the file;
values read from the file appear in the message only as short plain text (`plain`).
"""

from __future__ import annotations

import json
import pickle
import re
import stat
import warnings
from pathlib import Path

import torch

from sim.paths import ASSETS
from sim.runtime.files import OutputPathError, check_writable, shown_path, write_atomically
from sim.tinylm.memory import MEMORY_CAP_BYTES, describe, model_bytes, n_params
from sim.tinylm.model import DTYPE, LIMITS, ModelConfig, TinyLM
from sim.tinylm.tokens import MAX_NEW_TOKENS, PROMPT_LEN, VOCAB_SIZE
from sim.validate import neutral

FORMAT = "tinylm"
VERSION = 3  # 2: ReLU MLP (1 held GELU weights); 3: float64 weights, SFT on the teacher with a carry blind spot
ASSET = ASSETS / "data" / "tinylm_sft.pt"  # the shipped SFT model
REGENERATE = "python -m sim tinylm --save-sft assets/data/tinylm_sft.pt --iterations 0"
HINT = f"Train a fresh SFT model with `python -m sim tinylm --from-scratch`, or rebuild the file with `{REGENERATE}`."
MAX_FILE_BYTES = 64 * 2**20  # the shipped file is ~0.8 MB; anything much larger is not ours
CONFIG_FIELDS = ("vocab_size", "block_size", "n_layer", "n_head", "d_model")
FIXED = {"vocab_size": (VOCAB_SIZE, "the tokenizer's vocabulary"),
         "block_size": (PROMPT_LEN + MAX_NEW_TOKENS, "a 6-token prompt and up to 4 response tokens")}  # fmt: skip


class CheckpointError(Exception):
    """A TinyLM checkpoint is missing, corrupt or does not match the model."""


def plain(value, limit: int = 40) -> str:
    """A value read from a file, as short plain text that no Markdown or HTML renderer will interpret.

    Keeps letters, digits, space and `_ . , = + -`; every other character becomes '?'; cut at `limit`.
    >>> plain("[x](http://a)")
    '?x??http??a?'
    """
    text = re.sub(r"[^A-Za-z0-9 _.,=+\-]", "?", str(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


class SavePathError(OutputPathError):
    """A path a checkpoint cannot be saved to (bad input: the CLI exits 2); str() says why, in one line."""


SUFFIX = ".pt"  # a checkpoint's name ends in .pt; its sidecar has the same name with .json


def sidecar_path(path: str | Path) -> Path:
    """The JSON sidecar that goes with checkpoint `path`: the same name, ending in .json."""
    return Path(path).with_suffix(".json")


def check_save_path(path: str | Path, flag: str = "--save-sft") -> Path:
    """Where a checkpoint named `path` (and its sidecar) would be written; SavePathError before any work when
    that cannot succeed or would destroy a file that is not a TinyLM checkpoint.

    The name must end in .pt: the sidecar is the same name with .json, so it never is the checkpoint itself
    (`model.json` would have been overwritten by its own sidecar), and a slip such as `--save-sft notes.txt`
    cannot replace a file that is not a checkpoint. An existing sidecar is replaced only if it is a TinyLM
    sidecar. Everything else (symlink loops, devices, directories, long names, a parent that cannot take a
    file) is sim.runtime.files.check_writable's. Returns the checkpoint's real path."""
    if Path(path).suffix != SUFFIX:
        raise SavePathError(f"{flag} {shown_path(path)}: a checkpoint's name must end in {SUFFIX} (its sidecar is "
                            f"the same name with .json)")  # fmt: skip
    try:
        target = check_writable(path, flag, also=(sidecar_path,))
    except OutputPathError as e:
        raise SavePathError(str(e)) from None
    side = sidecar_path(target)
    if side.is_file():
        try:
            ours = side.stat().st_size < 2**20 and json.loads(side.read_text()).get("format") == FORMAT
        except (OSError, ValueError, AttributeError):
            ours = False
        if not ours:
            raise SavePathError(f"{flag} {shown_path(path)}: its sidecar {neutral(side.name)} exists and is not a "
                                "TinyLM sidecar; nothing was written (move it, or choose another name)")  # fmt: skip
    return target


def save_checkpoint(model: TinyLM, path: str | Path, meta: dict | None = None) -> None:
    """Write the model and a JSON sidecar (path with .json) holding config and `meta`, atomically
    (sim.runtime.files.write_atomically: both complete, then both renamed into place, so a full disk or an
    interruption leaves the old pair or none, never half a file). SavePathError for a path check_save_path
    refuses."""
    target = check_save_path(path, "checkpoint")
    meta = dict(meta or {})
    blob = {
        "format": FORMAT,
        "version": VERSION,
        "model_config": model.cfg.to_dict(),
        "state_dict": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "meta": meta,
    }
    side = {"format": FORMAT, "version": VERSION, "model_config": model.cfg.to_dict(), **meta}
    write_atomically({target: lambda f: torch.save(blob, f),
                      sidecar_path(target): (json.dumps(side, indent=2) + "\n").encode()})


def check_model_config(raw, where: str = "checkpoint") -> ModelConfig:
    """A model config read from a file -> ModelConfig, or CheckpointError. Builds no tensor."""
    if not isinstance(raw, dict):
        raise CheckpointError(f"{where} has no model config (got {type(raw).__name__}). {HINT}")
    extra, missing = sorted(map(str, set(raw) - set(CONFIG_FIELDS))), [f for f in CONFIG_FIELDS if f not in raw]
    if extra or missing:
        what = f"unknown field {plain(extra[0])}" if extra else f"no field {missing[0]}"
        raise CheckpointError(f"{where} has an invalid model config ({what}). {HINT}")
    for name in CONFIG_FIELDS:
        if type(raw[name]) is not int:  # exactly int: a bool, a float or a string is refused
            got = type(raw[name]).__name__
            raise CheckpointError(f"{where}: model config {name} must be an integer, got {got}. {HINT}")
    ranges = {name: (want, want, why) for name, (want, why) in FIXED.items()}
    ranges |= {name: (1, high, None) for name, high in LIMITS.items()}
    for name, (low, high, why) in ranges.items():
        if not low <= raw[name] <= high:
            allowed = f"{low}{f' ({why})' if why else ''}" if low == high else f"in [{low}, {high}]"
            shown = str(raw[name]) if abs(raw[name]) < 10**12 else "a huge number"
            raise CheckpointError(f"{where}: model config {name} must be {allowed}, got {shown}. {HINT}")
    try:
        cfg = ModelConfig(**raw)
    except ValueError as e:  # d_model % n_head (the ranges were checked above)
        raise CheckpointError(f"{where} has an invalid model config ({plain(e, 160)}). {HINT}") from None
    need = 3 * model_bytes(cfg)  # the file's tensors, the model, one copy while loading
    if need > MEMORY_CAP_BYTES:
        raise CheckpointError(
            f"{where}: a model with {n_params(cfg):,} parameters needs about {describe(need)} to load, over the "
            f"cap of {describe(MEMORY_CAP_BYTES)}. {HINT}"
        )
    return cfg


def load_checkpoint(path: str | Path = ASSET) -> tuple[TinyLM, dict]:
    """Read a checkpoint into a TinyLM (eval mode, float64). Returns (model, meta). Raises CheckpointError."""
    path = Path(path)
    shown = neutral(path)  # a name from the command line, on one line
    try:
        st = path.stat()
    except FileNotFoundError:
        raise CheckpointError(f"TinyLM checkpoint not found: {shown}. {HINT}") from None
    except OSError as e:  # a symlink loop (ELOOP), a name too long, a directory we may not enter
        raise CheckpointError(f"TinyLM checkpoint {shown} cannot be read ({e.strerror}). {HINT}") from None
    if not stat.S_ISREG(st.st_mode):
        raise CheckpointError(f"TinyLM checkpoint {shown} is not a regular file. {HINT}")
    size = st.st_size
    if size > MAX_FILE_BYTES:
        raise CheckpointError(f"{shown} is {describe(size)}, too large for a TinyLM checkpoint "
                              f"(at most {describe(MAX_FILE_BYTES)}). {HINT}")  # fmt: skip
    try:
        with warnings.catch_warnings():  # torch warns about a foreign pickle protocol before refusing it: the
            warnings.simplefilter("ignore")  # refusal below is the one message
            blob = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        if "weights only" not in str(e).lower():  # not torch's refusal of an object: bytes that are no pickle
            what = "not a pickle"
            raise CheckpointError(f"TinyLM checkpoint {shown} is corrupt or unreadable ({what}). {HINT}") from None
        raise CheckpointError(f"TinyLM checkpoint {shown} holds objects other than tensors; it was refused "
                              f"without running anything. {HINT}") from None  # fmt: skip
    except Exception as e:  # torch raises many types for bad bytes; all mean the same here
        what = type(e).__name__
        raise CheckpointError(f"TinyLM checkpoint {shown} is corrupt or unreadable ({what}). {HINT}") from None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise CheckpointError(f"{shown} is not a TinyLM checkpoint (no 'format': '{FORMAT}'). {HINT}")
    if blob.get("version") != VERSION:
        raise CheckpointError(f"{shown} has format version {plain(repr(blob.get('version')))}, this code reads "
                              f"{VERSION}. {HINT}")  # fmt: skip
    cfg = check_model_config(blob.get("model_config"), shown)
    with torch.device("meta"):  # shapes only: nothing allocated
        expected = {k: v.shape for k, v in TinyLM(cfg).state_dict().items()}
    state = blob.get("state_dict")
    if not isinstance(state, dict) or set(state) != set(expected):
        missing = sorted(set(expected) - set(state if isinstance(state, dict) else {}))[:3]
        raise CheckpointError(f"{shown} does not hold the expected tensors (missing e.g. {missing}). {HINT}")
    for name, shape in expected.items():
        t = state[name]
        if not isinstance(t, torch.Tensor) or t.shape != shape:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            need = tuple(shape)
            raise CheckpointError(f"{shown}: tensor {name} has shape {plain(got)}, the config needs {need}. {HINT}")
        if not t.is_floating_point() or not torch.isfinite(t).all():
            raise CheckpointError(f"{shown}: tensor {name} holds non-finite or non-float values. {HINT}")
    model = TinyLM(cfg)
    model.load_state_dict({k: v.to(DTYPE) for k, v in state.items()})
    meta = blob.get("meta")
    return model.eval(), dict(meta) if isinstance(meta, dict) else {}
