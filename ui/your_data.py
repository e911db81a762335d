"""The app's Your run and Your prompts pages (sim/views/your_data.py declares them): the upload, the findings and
the tables, drawn here; the charts and their words are the declaration's (the one chart spec), and the toy on a
visitor's pool computes in the browser like Training dynamics (assets/js/live.js), so no page computes a toy run on the
server. The file stays in this session (ui/upload.py); the link holds the settings only."""

from __future__ import annotations

import dataclasses

import numpy as np
import streamlit as st

from sim.toy import ToyConfig
from sim.validate import neutral
from sim.views.controls import build_config
from sim.views.doc import Live
from sim.views.your_data import POOL_SEEDS, PROMPTS_VIEW, RUN_VIEW, plan_document, run_document
from sim.yourdata.datafile import cell_text
from sim.yourdata.diagnose import DiagnoseConfig, diagnose, json_text, step_ranges
from sim.yourdata.plan import SHOWN_PROMPTS, PlanConfig, plan, prompt_csv, rate_histogram
from ui.page import metric_row, open_page, table
from ui.text import md, show_text
from ui.upload import file_line, user_file, weak_data
from ui.view import show_doc

RUN_EXAMPLE = "data/examples/tinylm_trl_trainer_state.json"
PROMPTS_EXAMPLE = "data/examples/tinylm_prompts.csv"
MAX_RANGES = 30  # step ranges listed on the page (the JSON has every step)
FOLD_AT = 10  # a list of more prompts than this starts folded
ICON = {"warn": ":material/warning:", "info": ":material/info:", "ok": ":material/check_circle:",
        "unknown": ":material/help:"}


def _open(view, server) -> dict:
    return open_page(server, view.title, view.intro.md, list(view.controls))


# ---- Your run ----

def ranges(f) -> str:
    text = step_ranges(f.steps)
    parts = text.split(", ")
    return text if len(parts) <= MAX_RANGES else ", ".join(parts[:MAX_RANGES]) + f", … ({len(parts):,} ranges)"


def show_finding(f) -> None:
    with st.container(border=True):
        st.markdown(f"{ICON[f.status]} **{md(f.title)}**")
        lines = [f"**Rule.** {md(f.rule)}"]
        if f.holds and f.steps:
            lines.append(f"**Steps.** {md(ranges(f))}")
        if f.reading:
            lines.append(f"**Reading.** {md(f.reading)}")
        if f.remedy:
            lines.append(f"**What to do.** {md(f.remedy)}")
        st.markdown("  \n".join(lines))


def your_run(server) -> None:
    """A run's log, read with Chapter 15: the file -> sim/yourdata (runlog.py, diagnose.py)'s findings -> the findings
    first, then each metric's chart with the chapter's reading."""
    values = _open(RUN_VIEW, server)
    st.sidebar.caption("The link holds G and W, not your file: whoever opens it sees the example until they upload "
                       "their own.")
    log, name, _ = user_file(server, "run", "Your run's log", ("json", "csv", "jsonl", "txt", "log", "out"),
                             RUN_EXAMPLE,
                             "the example: a real TRL GRPOTrainer run of TinyLM, 600 steps (G = 8, β = 0, μ = 1)",
                             help="trainer_state.json (any TRL from 0.14), a saved log_history, metrics JSON Lines "
                                  "(verl's file logger or a flat one), a CSV of metrics (a W&B export or chart panel), "
                                  "the console output of a TRL or verl run, or a tinylm summary")
    file_line(name, f"File ({log.source})")
    for note in log.notes:
        show_text(f"Note: {note}")
    cfg = build_config(DiagnoseConfig, RUN_VIEW.controls, values)
    said = log.settings.get("group_size")
    if said is not None and said != cfg.group_size:
        st.warning(f"The file's config says G = {said}; the rules use the slider's G = {cfg.group_size}. Set the "
                   f"slider to {said}.", icon=":material/warning:")
    d = diagnose(log, cfg)
    if log.not_grpo is not None:  # said in one line; nothing judged, nothing drawn
        st.info(md(d.findings[0].title), icon=":material/info:")
        return
    s = d.summary
    hold = [f for f in d.findings if f.holds]
    pairs = [("Steps", f"{s['steps']:,}")]
    if "reward" in s:
        pairs.append(("Reward, first → last", f"{s['reward']['start']:.2f} → {s['reward']['end']:.2f}"))
    pairs += [("Warnings", str(sum(f.status == "warn" for f in hold))),
              ("G · window", f"{d.group_size} · {d.window}")]
    metric_row(pairs)
    st.subheader("Findings")
    for f in sorted(hold, key=lambda f: f.status != "warn"):
        show_finding(f)
    for status, label in (("ok", "Checked, does not hold"),
                          ("unknown", "Not judged: the log lacks what the rule reads")):
        rest = [f for f in d.findings if f.status == status]
        if rest:
            with st.expander(f"{label} ({len(rest)})"):
                for f in rest:
                    show_finding(f)
    show_doc(server, "run_document", run_document(d))
    if log.reward_funcs:  # a file's text: cut and its invisible and control characters escaped (issue 43 row 5)
        show_text(("Reward function: " if len(log.reward_funcs) == 1 else "Reward functions: ")
                  + ", ".join(cell_text(f) for f in log.reward_funcs))
    st.session_state["_run_diagnosis"] = d  # the download holds it weakly (ui.upload.weak_data): the session, strongly
    st.download_button("The diagnosis (JSON)", weak_data(json_text, d), file_name="grpo_diagnosis.json",
                       mime="application/json", key="dl_diagnosis", on_click="ignore",
                       help="every number and finding on this page, as `python -m sim diagnose FILE --json` prints it")
    st.caption(md("The same from a terminal: python -m sim diagnose trainer_state.json (add --json for every "
                  "number)."))


# ---- Your prompts ----

def your_prompts(server) -> None:
    """A pool's base-model pass rates read with "Groups that teach nothing": for G = 2..64 the share of dead
    groups, the answers wasted, dynamic sampling's draws, the prompts that never teach, pass@k, and the chapter's
    toy trained on this pool, computed in the browser."""
    values = _open(PROMPTS_VIEW, server)
    st.sidebar.caption("The link holds these settings, not your file: whoever opens it sees the example until they "
                       "upload their own.")
    pool, name, _ = user_file(server, "pool", "Your prompts' pass rates (CSV)", ("csv",), PROMPTS_EXAMPLE,
                              "the example: TinyLM's SFT model on 512 of its training prompts, 64 samples each",
                              help="columns correct,samples or pass_rate; optional prompt or id")
    file_line(name, "File")
    for note in pool.notes:
        show_text(f"Note: {note}")
    cfg = build_config(PlanConfig, PROMPTS_VIEW.controls, values)
    p = plan(pool, cfg)
    G, gs = cfg.group_size, p["group_sizes"]
    at = p["at_group_size"]
    metric_row([("Prompts", f"{p['summary']['prompts']:,}"), ("Mean pass rate", f"{p['summary']['mean_rate']:.3f}"),
                (f"Dead groups at G = {G}", f"{at['no_signal']:.1%}"),
                ("Never solved (c = 0)", f"{p['never_teach']['all_wrong']['count']:,}")])
    st.caption(md(p["estimator"]))
    counts, edges = rate_histogram(pool)
    show_doc(server, "plan_document", plan_document(p, cfg, counts, edges))

    st.subheader("By group size")
    ladder = sorted(set(p["ladder"]) | {G})
    table([{"G": g, "all wrong": f"{p['all_wrong'][gs.index(g)]:.3f}",
            "all correct": f"{p['all_correct'][gs.index(g)]:.3f}",
            "teach nothing": f"{p['no_signal'][gs.index(g)]:.3f}",
            "equal difficulty": f"{p['equal_difficulty'][gs.index(g)]:.3f}",
            "answers wasted / batch": f"{p['batch']['wasted_answers'][gs.index(g)]:,.0f}",
            "dynamic sampling: groups drawn": ("never fills" if (x := p["batch"]["ds_groups"][gs.index(g)]) is None
                                               else f"{x:,.1f}")} for g in ladder], key="plan_ladder")
    st.caption(md(f"Per batch of {cfg.batch_prompts:,} prompts; dynamic sampling keeps drawing prompts until "
                  f"{cfg.batch_prompts:,} groups have mixed rewards. Every G from 2 to 64 is in the JSON "
                  "(python -m sim plan FILE --json)."))

    st.subheader("Prompts that never teach")
    nt = p["never_teach"]
    for side, what in (("all_wrong", "never solved (c = 0): all wrong at every G, too hard until the model "
                                     "improves elsewhere"),
                       ("all_correct", "always solved (c = n): all correct at every G, already learned")):
        part = nt[side]
        st.markdown(md(f"{part['count']:,} prompts ({part['share']:.1%}) {what}."))
        if part["count"]:
            shown = [f"line {line}" + (f": {neutral(pid)[:80]}" if part["ids"] is not None else "")
                     for line, pid in zip(part["lines"][:SHOWN_PROMPTS],
                                          (part["ids"] or part["lines"])[:SHOWN_PROMPTS], strict=True)]
            more = part["count"] - len(shown)
            with st.expander(f"Their lines ({part['count']:,})", expanded=part["count"] <= FOLD_AT):
                show_text("\n".join(shown) + (f"\n… and {more:,} more (in the CSV below)" if more > 0 else ""))
    if "rule_of_three" in nt:
        r3 = nt["rule_of_three"]
        st.caption(md(f"c = 0 of n = {r3['median_samples']:g} samples (median) is weak evidence: the true rate may "
                      f"still be up to 3/n = {r3['rate_up_to']:.3g} (95%), where G = 64 would find a success "
                      f"{r3['signal_at_64_up_to']:.0%} of the time. Sample more before dropping them."))
    st.download_button(f"Every prompt at G = {G} (CSV)", weak_data(prompt_csv, pool, G),  # pool: the session's
                       file_name=f"prompts_G{G}.csv", mime="text/csv", key="dl_prompts", on_click="ignore",
                       help="one row per prompt: its line, counts, P(all wrong), P(all correct), P(signal); "
                            "formula-like prompt text is neutralised for spreadsheets")

    st.subheader("How this pool would train")
    d = np.array(p["toy"]["difficulties"])
    st.markdown(md(f"The chapter's toy (Training dynamics) with your prompts in place of its 24: prompt j starts at "
                   f"your base model's rate, p_j = σ(w + u_j − d_j) with d_j = −logit(rate_j) and w = u_j = 0; "
                   f"{p['toy']['reduction']}. A rate of 0 or 1 starts at d = ±10 (p = 4.5e-5 or 0.99995)."))
    try:
        toy = build_config(ToyConfig, PROMPTS_VIEW.controls, values, group_size=G, n_prompts=len(d),
                           difficulties=tuple(map(float, d)), n_seeds=POOL_SEEDS)
    except ValueError as e:
        st.error("The toy cannot run this pool:", icon=":material/error:")
        show_text(str(e))
        st.stop()
    # the browser runs the toy on this pool (the difficulties travel in the config: this session's page only)
    show_doc(server, "your_prompts_toy", [Live("your_prompts", {
        "view": "your_prompts", "config": dataclasses.asdict(toy), "columns": 2, "classroom_columns": 3,
        "reduction": p["toy"]["reduction"], "pool_size": len(pool.rate)})])
    st.caption(md("A caricature: the toy samples every prompt at every iteration, and one shared skill w stands for "
                  "what a network's weights share across prompts. It shows the shape (which prompts wait, how the dead "
                  "groups move from all wrong to all correct), not your run's speed."))
