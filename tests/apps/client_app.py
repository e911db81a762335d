"""A tiny page for tests/test_presenter.py: appends the client address the presenter key's slowing counts
(ui.presenter.client_of of st.context.ip_address) to the file $CLIENT_LOG names, once per script run."""

import os

import streamlit as st

from ui.presenter import client_of

with open(os.environ["CLIENT_LOG"], "a", encoding="utf-8") as f:
    f.write(client_of(st.context.ip_address) + "\n")
st.write("ok")
