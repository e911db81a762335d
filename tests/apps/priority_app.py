"""A tiny page for tests/test_hardening3_presenter.py: open_page as every page runs it, then the priority its
computations would get in the server's gate and queue (ui/work.py's hooks), kept in the session for the test."""

import streamlit as st

from ui.controls import Num
from ui.page import open_page
from ui.work import _page_hooks

open_page("Priority", None, [Num("G", "Group size G", 2, 64, 8, 1)])
st.session_state["priority_seen"] = _page_hooks()[2]
