"""Helpers shared by the Streamlit pages: URL-bound validated controls, classroom mode, charts.

They live outside `pages/` because every file in `pages/` becomes a page. No GRPO math here:
formulas are in `sim/`.
"""
