"""Plotly helpers: one look for every chart (readable when projected, hover readouts on)."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from sim.player.spec import COLORS, rgba  # noqa: F401  (the house colours, shared with a lesson)
from ui.page import font


def figure(title: str, x: str, y: str, *, height: int = 380, y_range=None) -> go.Figure:
    """An empty figure with the house layout: explicit font sizes (larger in presenter mode), unified hover,
    compact margins, legend below the plot."""
    # No plotly template: Streamlit's own chart theme styles the figure in the browser, and resolving a
    # template costs ~25 ms per figure. Sizes are explicit, so they win over the theme's 12 px.
    tick, axis, legend = dict(size=font("tick")), dict(size=font("axis")), dict(size=font("legend"))
    layout = dict(
        title=dict(text=title, font=dict(size=font("title"))),
        xaxis=dict(title=dict(text=x, font=axis), tickfont=tick),
        yaxis=dict(title=dict(text=y, font=axis), tickfont=tick),
        height=height,
        margin=dict(l=60, r=20, t=50, b=30),
        font=dict(size=font("tick")),
        hovermode="x unified",
        hoverlabel=dict(font=dict(size=font("tick"))),
        legend=dict(orientation="h", yanchor="top", y=-0.3, x=0, xanchor="left", font=legend),
    )
    fig = go.Figure(layout=layout)
    if y_range is not None:
        fig.update_yaxes(range=y_range)
    return fig


def show(fig: go.Figure, key: str) -> None:
    """Draw a figure full width (stable key so tests and the browser can find it)."""
    st.plotly_chart(fig, key=key, width="stretch", config={"displaylogo": False})


def add_pinned(fig: go.Figure, x, y, label: str, *, dash: str | None = None) -> None:
    """Overlay a pinned run's line (orange) on a chart of the current run."""
    fig.add_scatter(x=x, y=y, mode="lines", name=label, line=dict(color=COLORS["pin"], width=3, dash=dash))


def passk_axis(fig: go.Figure, k_max: int = 64) -> None:
    """A pass@k chart's x axis: log k with ticks at 1, 2, 4, ..., k_max and a dotted marker at k_max."""
    ticks = [2**i for i in range(k_max.bit_length()) if 2**i <= k_max]
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(t) for t in ticks], range=[-0.05, 1.87])
    fig.add_vline(x=k_max, line_dash="dot", line_color=COLORS["grey"], annotation_text=f"k = {k_max}",
                  annotation_position="top left")
