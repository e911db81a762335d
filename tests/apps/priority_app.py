"""A tiny page for tests/test_presenter.py: open_page as every page runs it, then the priority its
computations would get in the server's gate and queue (ui/work.py's hooks), kept in the session for the test."""

import streamlit as st

from ui.host import page_server
from ui.page import open_page
from ui.work import _page_hooks, status_line

open_page(page_server(), "Priority")
st.session_state["priority_seen"] = _page_hooks(status_line())[2]
