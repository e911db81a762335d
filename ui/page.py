"""What every page does first, once: app navigation, the styles, the title, a status line, the lesson's download.

    open_page(server, "Wasted groups")

A page's settings and flags are its link's, read in the browser by one set of rules (assets/js/control_rules.js,
lesson_rules.js): the server reads no setting from a link. Presenter mode (`?classroom=1`) is one of those flags: the
page's script puts `grpo-presenter` on the page's body (assets/js/app_view.js presenter), and these styles scale what
Streamlit draws (the title, the sidebar, an upload's box) to 20 px or more under it, as doc.css scales the renderer's.
"""

from __future__ import annotations

import streamlit as st

from ui.lesson_download import lesson_download
from ui.presenter import claim
from ui.server import use_app_navigation
from ui.work import STATUS_KEY, admit

P = "body.grpo-presenter"  # presenter mode's rules apply under it (the page's script sets it from the link)
STYLES = f"""<style>
[data-testid="stMainBlockContainer"] {{ padding-top: 2.5rem; }}
/* the navigation's page names wrap rather than end in an ellipsis ("Std scaling (Exercise 1…") */
[data-testid="stSidebarNavLink"] .stMarkdownEllipsis, [data-testid="stSidebarNavLink"] .stMarkdownEllipsis p,
[data-testid="stSidebarNavLink"] span {{ white-space: normal !important; overflow: visible !important;
  text-overflow: clip !important; }}
/* the sidebar's download link (ui/lesson_download.py), drawn as a button */
a.grpo-download {{ display: inline-block; padding: 0.35rem 0.8rem; border: 1px solid #d5d5d9; border-radius: 0.5rem;
  color: inherit; text-decoration: none; }}
a.grpo-download:hover {{ border-color: #1f77b4; color: #1f77b4; }}
.grpo-download-note {{ font-size: 0.85rem; opacity: 0.8; margin: 0.3rem 0 0; }}
/* a phone: a title of one or two short lines, so that the page's first chart fits its first screen; the header's
   band is see-through there, since the title now starts beside its icons (beneath them it would be cut) */
@media (max-width: 640px) {{ h1 {{ font-size: 1.9rem !important; padding-top: 0.5rem !important;
  padding-bottom: 0.25rem !important; }} [data-testid="stHeader"] {{ background: transparent !important; }} }}
{P}, {P} .stApp {{ font-size: 20px; }}
{P} h1 {{ font-size: 2.2rem !important; padding-top: 0 !important; }}
{P} [data-testid="stMainBlockContainer"] {{ padding-top: 4rem !important; }}
{P} [data-testid="stCaptionContainer"], {P} [data-testid="stCaptionContainer"] p, {P} [data-testid="stAlert"] p,
{P} [data-testid="stWidgetLabel"] p, {P} [data-testid="stFileUploader"] span, {P} [data-testid="stFileUploader"] small,
{P} [data-testid="stFileUploader"] div, {P} button p, {P} [data-testid="stText"], {P} code,
{P} [data-testid="stMarkdownContainer"] p, {P} [data-testid="stExpander"] p, {P} [data-testid="stSidebarNavLink"] span,
{P} a.grpo-download, {P} .grpo-download-note, {P} [data-testid="stIconMaterial"] {{ font-size: 20px !important; }}
{P} .katex {{ font-size: 1.45em !important; }}
</style>"""


def apply_style() -> None:
    st.html(STYLES)


def open_page(server, title: str) -> None:
    """Navigation, styles, title, the status line of the server's gate, the lecturer's key, the lesson's download.
    `server`: the Server the page runs on (ui/host.py)."""
    if use_app_navigation():  # a page opened straight from a link before the server set it: go through app.py
        st.rerun()
    apply_style()
    st.title(title, anchor=False)  # no link icon: on a phone it wrapped to a line of its own under the title
    line = st.session_state[STATUS_KEY] = st.empty()  # every run, so the elements below keep their places
    claim(server)  # ?presenter=KEY: the lecturer's priority for this session; the key leaves the URL (ui/presenter.py)
    admit(server, line)  # the server's gate: a busy server's students queue here, the lecturer does not (ui/work.py)
    lesson_download(server)


def link(file: str, label: str, icon: str | None = None) -> None:
    """A link to another page of the app (st.page_link); a page run on its own (a test app, AppTest of one
    page) has no navigation to link through, and shows the label as text instead."""
    try:
        st.page_link(file, label=label, icon=icon)
    except st.errors.StreamlitPageNotFoundError:
        st.caption(label)
