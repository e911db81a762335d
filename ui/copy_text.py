"""Text to copy: a plain block with a Copy button (assets/js/copy_text.js), for the share links and the TRL config.

    copy_text(link, key="share_this", label="Copy this link")

Streamlit's st.code has a copy button too, but it loads a 1.5 MB syntax highlighter, and a cold start of
Training dynamics paid about 0.5 s of the browser's main thread for it (scripts/bench_cold_start.py reports
highlighter_kb). The text travels as data and is shown as text, never as markup.
"""

from __future__ import annotations

import streamlit as st

from sim.paths import ASSETS

_COMPONENT = st.components.v2.component(
    "grpo_copy_text",
    js=(ASSETS / "js" / "copy_text.js").read_text(encoding="utf-8"),
    css=(ASSETS / "js" / "copy_text.css").read_text(encoding="utf-8"),
)


def copy_text(text: str, *, key: str, label: str = "Copy") -> None:
    """A block showing `text` (wrapped, monospace) and a Copy button; `label` names the button for screen
    readers."""
    _COMPONENT(key=key, data={"text": text, "label": label})
