"""GRPO Playground: placeholder home page until the app issue lands."""

import streamlit as st

st.set_page_config(page_title="GRPO Playground", layout="wide")
st.title("GRPO Playground")
st.write("An interactive simulator of GRPO (Group Relative Policy Optimization), after Chapter 15.")
