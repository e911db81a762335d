"""Training dynamics: GRPO on the chapter's 24-prompt toy, played in the browser.

Widgets -> ToyConfig -> one cached run (S seeds) and its exact expected run, shared by every session ->
the charts, declared once and sent to the browser's player (ui/player.py). Play, Pause, Step, Reset,
the speed and the timeline run in the browser with no message to the server, so a class pressing Play
costs the server nothing; only a setting change reruns the script.
"""

import dataclasses
import functools

import streamlit as st

from sim.export import settings_json, trl_grpo_config, trl_snippet
from sim.toy import ToyConfig
from sim.views.training import PRESETS, hard_prompt_question, training_charts
from ui.callbacks import apply_preset, drop_state, fixed_by_link, new_seed, set_state
from ui.controls import build_config, current_values
from ui.copy_text import copy_text
from ui.labview import lab_switch, verdict
from ui.page import open_page, presenter
from ui.player import player
from ui.predict import predict, predict_mode
from ui.runs import student_toy_run, toy_history_csv, toy_run, toy_runs
from ui.specs import TRAINING as SPECS


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
    cfg = toy_config(v)
    run, exp = toy_runs(cfg)
except ValueError as e:  # a setting the engine refuses, or a run that diverges: say which, never a traceback
    st.error("These settings cannot run:", icon=":material/error:")
    st.text(str(e))
    st.stop()

pinned = None
if "pinned" in st.session_state:
    try:
        old = st.session_state.pinned
        changed = [f"{k}={val}" for k, val in old.items() if val != v[k]]
        pinned = ("pinned" + (f" ({', '.join(changed)})" if changed else ""), toy_run(toy_config(old)))
    except ValueError:
        del st.session_state.pinned

mine = None
if lab is not None:
    if cfg.baseline != "mean" or cfg.scale == "batch" or cfg.ddof != 0:
        st.info("Your group_advantages is the chapter's (group mean, population std, optional std division): set "
                "the baseline to mean and the std to group or none to train the toy with it.")
    else:
        table = lab.advantage_table(cfg.group_size, scale_std=cfg.scale == "group", eps=cfg.eps)
        verdict(table, f"group_advantages, tabulated for G = {cfg.group_size}", lab=lab, task="group_advantages")
        if table.student is not None:  # right or wrong, train the toy with it: a mistake shows in the run
            try:
                mine = student_toy_run(dataclasses.replace(cfg, n_seeds=1),
                                   (tuple(table.student[:, 0]), tuple(table.student[:, 1])))
            except ValueError as e:
                st.error("The toy cannot train with your advantages:")
                st.text(str(e))

question = hard_prompt_question(run)
if predict_mode() and question is not None and not predict("hard_prompt", **question):
    st.stop()  # the charts wait for the guess

ppo_cfg = dataclasses.replace(cfg, loss_type="grpo", clip_eps_high=None)  # the clip caption's comparison
ppo = toy_run(ppo_cfg) if cfg.mu > 1 and ppo_cfg != cfg else None
player("training", T=cfg.iterations,
       charts=training_charts(cfg, run, exp, pinned, mine, big=presenter(), ppo=ppo),
       columns=3 if presenter() else 2, classroom=presenter())

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
