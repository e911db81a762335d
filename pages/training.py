"""Training dynamics: GRPO on the chapter's 24-prompt toy, computed and played in the browser.

Widgets -> a validated ToyConfig -> the browser (ui/live.py), which runs the engine, draws the five charts with
their captions and plays them: Play, Pause, Step, Reset, the speed and the timeline never talk to the server, and
a new setting costs the server a script run, no numpy. A pinned run is a second config; "Use my lab code" sends
the student's advantage table, tabulated in the lab's sandbox. The exports (CSV, settings, TRL) compute here, on
click.
"""

import dataclasses
import functools

import streamlit as st

from sim.export import settings_json, toy_history_csv, trl_grpo_config, trl_snippet
from sim.toy import ToyConfig, check_table
from sim.views.training import CONTROLS as SPECS
from sim.views.training import PRESETS
from ui.callbacks import apply_preset, drop_state, fixed_by_link, new_seed, set_state
from ui.controls import build_config, current_values
from ui.copy_text import copy_text
from ui.labview import lab_switch, verdict
from ui.live import live_view
from ui.page import open_page, presenter
from ui.predict import predict_mode


def toy_config(v: dict) -> ToyConfig:
    return build_config(ToyConfig, SPECS, v)


v = open_page(
    "Training dynamics",
    "GRPO on a pool of prompts whose difficulty increases left to right. Prompt $j$ is solved with probability "
    "$p_j = \\sigma(w + u_j - d_j)$: $d_j$ a fixed difficulty, $u_j$ the prompt's own parameter, $w$ a shared "
    "skill every prompt's gradient moves (a stand-in for a network's shared weights). Each iteration samples "
    "$G$ answers per prompt, computes group advantages and takes one policy-gradient step. Press Play: the "
    "charts replay the run in your browser.",
    SPECS,
    fold_intro=True,
)
with st.sidebar:
    st.caption("Presets")
    for name, changes in PRESETS.items():
        why = fixed_by_link(changes)
        st.button(name, key=f"preset_{name}", on_click=apply_preset, args=(SPECS, changes), width="stretch",
                  disabled=why is not None, help=why)
lab = lab_switch()

try:
    cfg = toy_config(v)  # every field checked by its declaration, the memory cap included (sim/settings.py)
except ValueError as e:  # a setting the engine refuses: say which, never a traceback
    st.error("These settings cannot run:", icon=":material/error:")
    st.text(str(e))
    st.stop()

pinned = None
if "pinned" in st.session_state:
    try:
        old = st.session_state.pinned
        changed = [f"{k}={val}" for k, val in old.items() if val != v[k]]
        pinned = {"label": "pinned" + (f" ({', '.join(changed)})" if changed else ""),
                  "config": dataclasses.asdict(toy_config(old))}
    except ValueError:
        del st.session_state.pinned

table = None
if lab is not None:
    if cfg.baseline != "mean" or cfg.scale == "batch" or cfg.ddof != 0:
        st.info("Your group_advantages is the chapter's (group mean, population std, optional std division): set "
                "the baseline to mean and the std to group or none to train the toy with it.")
    else:
        tab = lab.advantage_table(cfg.group_size, scale_std=cfg.scale == "group", eps=cfg.eps)
        verdict(tab, f"group_advantages, tabulated for G = {cfg.group_size}", lab=lab, task="group_advantages")
        if tab.student is not None:  # right or wrong, the browser trains the toy with it: a mistake shows in the run
            try:
                a_c, a_w = check_table(cfg, (tab.student[:, 0], tab.student[:, 1]))
                table = [a_c.tolist(), a_w.tolist()]
            except ValueError as e:
                st.error("The toy cannot train with your advantages:")
                st.text(str(e))

live_view("training", {"view": "training", "config": dataclasses.asdict(cfg), "pinned": pinned, "table": table,
                       "big": presenter(), "columns": 3 if presenter() else 2, "classroom": presenter(),
                       "predict": predict_mode()})

row = st.container(horizontal=True)
if pinned is not None:
    row.button("Unpin", key="unpin", on_click=drop_state, args=("pinned",))
else:
    row.button("Pin this run", icon=":material/push_pin:", key="pin", help="keep this run and overlay it on the next",
               on_click=set_state, args=("pinned", current_values(SPECS)))
row.button("New seed", icon=":material/casino:", key="new_seed", on_click=new_seed,
           disabled=fixed_by_link(["seed"]) is not None, help=fixed_by_link(["seed"]))
row.download_button("Run history (CSV)", functools.partial(toy_history_csv, cfg),
                    file_name="grpo_toy_history.csv", mime="text/csv", key="dl_csv", on_click="ignore")
row.download_button("Settings (JSON)", settings_json(v, page="training"), file_name="grpo_settings.json",
                    mime="application/json", key="dl_json", on_click="ignore")
with st.expander("Equivalent TRL GRPOConfig"):
    copy_text(trl_snippet(trl_grpo_config(cfg)), key="trl_config", label="Copy the GRPOConfig")
