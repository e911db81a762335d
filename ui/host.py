"""How a page gets the server it runs on: app.py hands its Server to each session's script run, and the page
passes it down to whatever needs it (ui/view.py, ui/page.py, ...). No module looks it up.

    # app.py, each script run, before the page runs
    st.session_state[SERVER_KEY] = server
    # a page
    show_view(VIEW, page_server())

A page run without app.py (AppTest of one page, a test app) gets a bare Server (no routes, no gate), one per
process, kept by Streamlit's own resource cache rather than by a global of ours.
"""

from __future__ import annotations

import streamlit as st

from ui.server import Server

SERVER_KEY = "_grpo_server"  # st.session_state: the Server app.py handed this session


@st.cache_resource(show_spinner=False)
def bare_server() -> Server:
    """The Server of script runs that app.py did not start (AppTest, a test app): no route, no gate."""
    return Server()


def page_server() -> Server:
    """The Server app.py handed this session, or the bare one."""
    served = st.session_state.get(SERVER_KEY)
    return served if served is not None else bare_server()
