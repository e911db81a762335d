"""What only the app's Training dynamics page has, around the view (sim/views/training.py): the pinned run, Pin,
Unpin and New seed, and the exports (the run's history as CSV, the settings as JSON, TRL's GRPOConfig), computed
in Python on click (sim/export.py: the rows `python -m sim toy --out FILE.csv` writes)."""

from __future__ import annotations

import functools

import streamlit as st

from sim.export import settings_json, toy_history_csv, trl_grpo_config, trl_snippet
from sim.toy import ToyConfig
from sim.views.controls import build_config
from sim.views.training import CONTROLS
from ui.callbacks import drop_state, fixed_by_link, new_seed, set_state
from ui.controls import current_values
from ui.copy_text import copy_text


def pinned(values: dict, lab) -> dict:
    """The pinned run for the view's show (`pinned`: its label names what differs), or nothing."""
    old = st.session_state.get("pinned")
    if old is None:
        return {}
    try:
        build_config(ToyConfig, CONTROLS, old)
    except (ValueError, KeyError):  # a pin from an older page: forget it
        del st.session_state.pinned
        return {}
    changed = [f"{k}={val}" for k, val in old.items() if val != values[k]]
    return {"pinned": {"label": "pinned" + (f" ({', '.join(changed)})" if changed else ""), "values": old}}


def buttons_and_exports(values: dict) -> None:
    """Pin (or Unpin), New seed, the CSV and settings downloads, and TRL's GRPOConfig for this setting."""
    cfg = build_config(ToyConfig, CONTROLS, values)
    row = st.container(horizontal=True)
    if "pinned" in st.session_state:
        row.button("Unpin", key="unpin", on_click=drop_state, args=("pinned",))
    else:
        row.button("Pin this run", icon=":material/push_pin:", key="pin",
                   help="keep this run and overlay it on the next", on_click=set_state,
                   args=("pinned", current_values(list(CONTROLS))))
    row.button("New seed", icon=":material/casino:", key="new_seed", on_click=new_seed,
               disabled=fixed_by_link(["seed"]) is not None, help=fixed_by_link(["seed"]))
    row.download_button("Run history (CSV)", functools.partial(toy_history_csv, cfg),
                        file_name="grpo_toy_history.csv", mime="text/csv", key="dl_csv", on_click="ignore")
    row.download_button("Settings (JSON)", settings_json(values, page="training"), file_name="grpo_settings.json",
                        mime="application/json", key="dl_json", on_click="ignore")
    with st.expander("Equivalent TRL GRPOConfig"):
        copy_text(trl_snippet(trl_grpo_config(cfg)), key="trl_config", label="Copy the GRPOConfig")
