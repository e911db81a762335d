"""What every page does first, once: app navigation, presenter styling, the title, a status line, the settings
sidebar.

    values = open_page(server, "Wasted groups", "If a prompt is solved ...", SPECS)

Presenter mode (`?classroom=1`) scales everything a class must read in the main area to 20 px or more: the page's
own text here, the documents through the renderer's presenter sizes (assets/js/doc.css .ls-classroom).
"""

from __future__ import annotations

import streamlit as st

from ui.controls import Spec, check_hide, classroom_active, classroom_link_builder, control
from ui.lesson_download import lesson_download
from ui.presenter import claim
from ui.server import use_app_navigation
from ui.work import STATUS_KEY, admit

PRESENTER_CSS = """<style>
html, .stApp { font-size: 20px; }
.stMarkdown p, .stMarkdown li { font-size: 1.1rem; }
h1 { font-size: 2.2rem !important; padding-top: 0 !important; }
[data-testid="stMain"] [data-testid="stCaptionContainer"], [data-testid="stMain"] [data-testid="stCaptionContainer"] p,
[data-testid="stMain"] [data-testid="stAlert"] p, [data-testid="stMain"] [data-testid="stPageLink"] p,
[data-testid="stMain"] [data-testid="stPageLink"] span, [data-testid="stMain"] [data-testid="stWidgetLabel"] p,
[data-testid="stMain"] [data-testid="stFileUploader"] span, [data-testid="stMain"] [data-testid="stFileUploader"] small,
[data-testid="stMain"] button p, [data-testid="stMain"] [data-testid="stText"], [data-testid="stMain"] code,
[data-testid="stMain"] [data-testid="stMarkdownContainer"] p, [data-testid="stMain"] [data-testid="stExpander"] p
{ font-size: 20px !important; }
.katex { font-size: 1.45em !important; }
[data-testid="stTable"] table, [data-testid="stTable"] th, [data-testid="stTable"] td { font-size: 20px !important; }
[data-testid="stMetricValue"], [data-testid="stMain"] [data-testid="stMetricValue"] p { font-size: 2.4rem !important; }
[data-testid="stMetricLabel"] p { font-size: 1.1rem !important; }
[data-testid="stMainBlockContainer"] { padding-top: 4rem !important; }
</style>"""

COMPACT_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.5rem; }
</style>"""
# the sidebar's download link (ui/lesson_download.py), drawn as a button; in every mode
DOWNLOAD_CSS = """<style>
a.grpo-download { display: inline-block; padding: 0.35rem 0.8rem; border: 1px solid #d5d5d9; border-radius: 0.5rem;
  color: inherit; text-decoration: none; }
a.grpo-download:hover { border-color: #1f77b4; color: #1f77b4; }
.grpo-download-note { font-size: 0.85rem; opacity: 0.8; margin: 0.3rem 0 0; }
</style>"""


def presenter() -> bool:
    """True in presenter mode (?classroom=1): larger type only. The lecturer's priority is ui/presenter.py's."""
    return classroom_active()


def apply_style() -> None:
    """The page's CSS: presenter sizes under ?classroom=1, a tighter top margin always."""
    st.html((PRESENTER_CSS if presenter() else COMPACT_CSS) + DOWNLOAD_CSS)


def open_page(server, title: str, intro: str | None = None, specs: list[Spec] = (), *, fold_intro: bool = False,
              controls: list[Spec] | None = None, page_reads_link: bool = False) -> dict[str, object]:
    """Navigation, style, title, an optional intro (`fold_intro`: in an expander, so the charts come
    first), and the sidebar: one URL-bound control per spec, then the share / classroom link. `controls`:
    every control the page draws, if it draws some itself (default: `specs`); ?hide= names outside them are
    warned about and dropped, unless `page_reads_link` (a view the browser computes reads its own link, ui/view.py).
    `server`: the Server the page runs on (ui/host.py). Returns {spec.key: value}."""
    if use_app_navigation():  # a page opened straight from a link before the server set it: go through app.py
        st.rerun()
    apply_style()
    st.title(title, anchor=False)  # no link icon: on a phone it wrapped to a line of its own under the title
    line = st.session_state[STATUS_KEY] = st.empty()  # every run, so the elements below keep their places
    claim(server)  # ?presenter=KEY: the lecturer's priority for this session; the key leaves the URL (ui/presenter.py)
    admit(server, line)  # the server's gate: a busy server's students queue here, the lecturer does not (ui/work.py)
    if not page_reads_link:
        check_hide(specs if controls is None else controls)
    if intro and fold_intro:
        with st.expander("What this page shows"):
            st.markdown(intro)
    elif intro:
        st.markdown(intro)
    values = {}
    if specs:
        with st.sidebar:
            st.header("Settings")
            for s in specs:
                values[s.key] = control(s, values=values)
        classroom_link_builder(list(specs))
    lesson_download(server)
    return values


def link(file: str, label: str, icon: str | None = None) -> None:
    """A link to another page of the app (st.page_link); a page run on its own (a test app, AppTest of one
    page) has no navigation to link through, and shows the label as text instead."""
    try:
        st.page_link(file, label=label, icon=icon)
    except st.errors.StreamlitPageNotFoundError:
        st.caption(label)


def table(rows: list[dict], *, key: str) -> None:
    """A small table: an HTML table in presenter mode (CSS can enlarge it), else an interactive grid."""
    if presenter():
        st.table(rows)
    else:
        st.dataframe(rows, hide_index=True, key=key)


def metric_row(pairs: list[tuple[str, str]]) -> None:
    """One row of st.metric, a column each: (label, value) pairs, the values already formatted."""
    for col, (label, value) in zip(st.columns(len(pairs)), pairs, strict=True):
        col.metric(label, value)
