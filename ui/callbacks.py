"""The pages' button callbacks (Pin, Unpin, New seed, presets, the TinyLM page's).

Callbacks live here, not in a page: Streamlit keeps a session's widget callbacks for as long as it keeps the
session's state (sometimes after the student has gone), and a function written in a page holds that page's
whole namespace (its runs, its figures) alive with it.
"""

from __future__ import annotations

import random

import streamlit as st

from ui.controls import HIDE_PARAM, Spec, hidden_keys


def set_state(key: str, value: object) -> None:
    st.session_state[key] = value


def drop_state(key: str) -> None:
    st.session_state.pop(key, None)


# A button never changes a setting the link hides: the page uses the link's value for it, so the button is
# disabled (`fixed_by_link` says why) and its callback leaves hidden keys alone.


def fixed_by_link(keys) -> str | None:
    """Why a button that sets `keys` is disabled (some are hidden by the link), or None."""
    fixed = sorted(set(keys) & hidden_keys())
    return f"the link fixes {', '.join(fixed)} ({HIDE_PARAM}={','.join(fixed)})" if fixed else None


def new_seed(key: str = "seed") -> None:
    if key not in hidden_keys():
        st.session_state[key] = random.randrange(10000)


def apply_preset(specs: list[Spec], changes: dict) -> None:
    """Set every visible control to the preset's value, or to its default where the preset says nothing."""
    hidden = hidden_keys()
    for spec in specs:
        if spec.key not in hidden:
            st.session_state[spec.key] = changes.get(spec.key, spec.default)
