"""The app's renderer of a view (sim/views/doc.py): the declaration's controls in the sidebar, its document drawn
with Streamlit's widgets, its charts with the shared JavaScript (the player, assets/js/player_charts.js).

    from sim.views.wasted import VIEW
    from ui.host import page_server
    from ui.view import show_view

    show_view(VIEW, page_server())          # the whole page file

sim computes the document (the view's `show`: the reference); this module only maps each block onto Streamlit:
Heading -> st.subheader, Text -> st.markdown, Formula -> st.latex, Caption -> st.caption, Metrics -> st.metric,
Charts -> the player component (drawn whole, no Play bar), Table -> a table, Note -> st.info, Ask -> predict then
reveal (ui/predict.py), Columns -> st.columns, Live -> the view the browser computes (ui/live.py), Link -> a page
link, Verdict -> the lab's verdict. A lesson draws the same blocks with assets/doc.js.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from sim.views.doc import (
    Ask,
    Caption,
    Charts,
    Columns,
    Formula,
    Heading,
    Link,
    Live,
    Metrics,
    Note,
    Table,
    Text,
    Verdict,
    View,
)
from ui.callbacks import apply_preset, fixed_by_link
from ui.labview import lab_switch, verdict
from ui.live import live_view
from ui.page import link, open_page, presenter, table
from ui.player import player
from ui.predict import predict, predict_mode
from ui.text import md

LAB_VIEWS = ("training", "one_group", "kl_clip")  # the views whose numbers a student's lab code can replace


def show_view(view: View, server, *, before: Callable | None = None, after: Callable | None = None) -> dict:
    """Draw `view` on a page: title, intro, controls (and presets), then its document for the values they hold.
    `before(values, lab)` may return extra keyword arguments for the view's show (the app's own parts: a pinned
    run, a student's table); `after(values)` draws what only the app has below the document (exports). A
    setting the engine refuses shows the engine's message, never a traceback. Returns the values."""
    intro = None if view.intro is None else (view.intro.md or md(view.intro.text))
    values = open_page(server, view.title, intro, list(view.controls), fold_intro=view.fold_intro)
    if view.presets:
        presets(view)
    lab = lab_switch(server) if view.name in LAB_VIEWS else None
    extra = before(values, lab) if before is not None else {}
    try:
        doc = view.show(values, lab=lab, **extra)
    except ValueError as e:  # a setting the engine refuses: say which, never a traceback
        st.error("These settings cannot run:", icon=":material/error:")
        st.text(str(e))
        st.stop()
    render(doc, server)
    if after is not None:
        after(values)
    return values


def presets(view: View) -> None:
    """The view's presets as sidebar buttons; a preset that would change a setting the link fixes is disabled."""
    with st.sidebar:
        st.caption("Presets")
        for name, changes in view.presets.items():
            why = fixed_by_link(changes)
            st.button(name, key=f"preset_{name}", on_click=apply_preset, args=(list(view.controls), changes),
                      width="stretch", disabled=why is not None, help=why)


def render(blocks: Sequence, server) -> None:
    """Draw a document's blocks in order (see the module's docstring for the mapping)."""
    for i, b in enumerate(blocks):
        _draw(b, server, row_caption=row_caption(blocks, i) if isinstance(b, Charts) else "")


def row_caption(blocks: Sequence, i: int) -> str:
    """The caption that follows the charts at blocks[i], before the next heading or charts (""): it describes
    (aria-describedby) those of its charts without a caption of their own (assets/js/player.js; a lesson's
    assets/js/doc.js `rowCaption` reads it the same way)."""
    for b in blocks[i + 1:]:
        if isinstance(b, Caption):
            return b.text
        if isinstance(b, (Heading, Charts)):
            break
    return ""


def _draw(b, server, row_caption: str = "") -> None:
    """One block; `row_caption`: see row_caption()."""
    if isinstance(b, Heading):
        st.subheader(b.text) if b.level <= 2 else st.markdown(f"#### {md(b.text)}")
    elif isinstance(b, Text):
        st.markdown(b.md if b.md is not None else md(b.text))
    elif isinstance(b, Formula):
        st.latex(b.latex)
    elif isinstance(b, Caption):
        st.caption(md(b.text))
    elif isinstance(b, Metrics):
        for col, item in zip(st.columns(len(b.items)), b.items, strict=True):
            label, value, *delta = item
            if delta:
                col.metric(label, value, delta[0], delta_color="off", delta_arrow="off")
            else:
                col.metric(label, value)
    elif isinstance(b, Charts):
        player(server, b.key, T=b.T, charts=list(b.charts), columns=b.columns, classroom=presenter(), bar=b.T > 1,
               row_caption=row_caption)
    elif isinstance(b, Table):
        if b.title:
            st.markdown(f"**{md(b.title)}**")
        table([dict(zip(b.columns, row, strict=True)) for row in b.rows], key=b.key)
    elif isinstance(b, Note):
        {"info": st.info, "success": st.success, "warning": st.warning, "error": st.error}[b.tone](md(b.text))
    elif isinstance(b, Ask):
        q = b.question
        if predict(b.key, q.question, answer=q.answer, kind=q.kind, options=list(q.options) or None,
                   tolerance=q.tolerance, unit=q.unit, explain=q.explain, fmt=q.fmt, lo=q.lo, hi=q.hi):
            render(b.then, server)  # in predict mode (?predict=1) only once the student has guessed
    elif isinstance(b, Columns):
        for col, blocks in zip(st.columns(len(b.columns)), b.columns, strict=True):
            with col:
                render(blocks, server)
    elif isinstance(b, Live):
        request = dict(b.request)
        big = presenter()
        columns = request.pop("classroom_columns", None) if big else request.get("columns")
        request.pop("classroom_columns", None)
        live_view(server, b.key, {**request, "columns": columns or request.get("columns", 2), "big": big,
                                  "classroom": big, "predict": predict_mode()})
    elif isinstance(b, Link):
        link(b.page, b.label, b.icon)
    elif isinstance(b, Verdict):
        verdict(b.comparison, b.what, lab=b.lab, task=b.task)
    else:
        raise TypeError(f"not a block: {type(b).__name__}")
