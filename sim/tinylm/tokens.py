"""TinyLM's vocabulary: fourteen characters, one token each.

    "0".."9" -> 0..9,  "+" -> 10,  "=" -> 11,  <eos> -> 12,  <pad> -> 13

A prompt is "ab+cd=" (always 6 tokens: both operands have two digits); a response is the
answer's digits then <eos>, e.g. "37+48=" -> "8 5 <eos>". <pad> fills batches to one length and is
never predicted.

>>> decode(encode("37+48=") + [EOS])
'37+48='
"""

from __future__ import annotations

CHARS = "0123456789+="
EOS = len(CHARS)  # 12
PAD = EOS + 1  # 13
VOCAB_SIZE = PAD + 1  # 14
PROMPT_LEN = 6  # "ab+cd="
MAX_NEW_TOKENS = 4  # up to three digits (99+99=198) then <eos>

_INDEX = {c: i for i, c in enumerate(CHARS)}
NAMES = list(CHARS) + ["<eos>", "<pad>"]


def encode(text: str) -> list[int]:
    """Characters to token ids. Raises ValueError on a character outside the vocabulary."""
    bad = [c for c in text if c not in _INDEX]
    if bad:
        raise ValueError(f"text may only contain {CHARS!r}, got {bad[0]!r} in {text!r}")
    return [_INDEX[c] for c in text]


def decode(ids: list[int]) -> str:
    """Token ids to characters, stopping at the first <eos>; <pad> is skipped."""
    out = []
    for i in ids:
        i = int(i)
        if i == EOS:
            break
        if i == PAD:
            continue
        if not 0 <= i < EOS:
            raise ValueError(f"token id must be in [0, {VOCAB_SIZE}), got {i}")
        out.append(CHARS[i])
    return "".join(out)


def show(ids: list[int]) -> str:
    """A response as the chapter writes it, with visible <eos>: [8, 5, 12] -> '8 5 <eos>'."""
    return " ".join(NAMES[int(i)] for i in ids)
