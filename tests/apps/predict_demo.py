"""A tiny page for tests/test_predict.py: one number question gating a "chart", one choice question."""

import streamlit as st

from ui.predict import predict

if predict("wasted", "At p = 0.05 and G = 8, what share of groups teaches nothing?", answer=66, unit="%",
           tolerance=5, explain="0.95^8 + 0.05^8 = 0.66."):
    st.text("CHART: wasted groups")
else:
    st.text("chart hidden")

predict("clip", "A token's probability rose from 0.40 to 0.50 (A > 0, eps = 0.2). Does it still get a gradient?",
        answer="No: rho = 1.25 > 1.2, clipped", kind="choice",
        options=["Yes: A > 0 pushes it up", "No: rho = 1.25 > 1.2, clipped"])
