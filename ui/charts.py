"""Plotly helpers: one look for every chart (readable when projected, hover readouts on)."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

COLORS = {"main": "#1f77b4", "pin": "#ff7f0e", "good": "#2ca02c", "bad": "#d62728", "grey": "#7f7f7f"}


def figure(title: str, x: str, y: str, *, height: int = 380, y_range=None) -> go.Figure:
    """An empty figure with the house layout: big fonts, unified hover, compact margins."""
    # No plotly template: Streamlit's own chart theme styles the figure in the browser, and resolving a
    # template costs ~25 ms per figure, which would dominate every Play tick.
    layout = dict(
        title=dict(text=title, font=dict(size=18)),
        xaxis=dict(title=dict(text=x)),
        yaxis=dict(title=dict(text=y)),
        height=height,
        margin=dict(l=60, r=20, t=50, b=30),
        font=dict(size=15),
        hovermode="x unified",
        legend=dict(orientation="h", yanchor="top", y=-0.3, x=0, xanchor="left"),
    )
    fig = go.Figure(layout=layout)
    if y_range is not None:
        fig.update_yaxes(range=y_range)
    return fig


def show(fig: go.Figure, key: str) -> None:
    """Draw a figure full width (stable key so tests and the browser can find it)."""
    st.plotly_chart(fig, key=key, width="stretch", config={"displaylogo": False})
