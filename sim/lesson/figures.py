"""The lesson's static charts: series over any x axis (p, u, the ratio ρ, the answer i), drawn once.

The player (sim/player) draws series over iterations and reveals them frame by frame; the exercise views'
charts have another x axis and nothing to play. They are declared here as plain data, computed at build
time by the same sim/ functions the app's pages call, and drawn by assets/lesson.js with the lesson's own
Plotly.js. The page only maps these fields onto Plotly's; it computes nothing.

    Row("The KL leash, per token", [Figure("KL estimators against u = π_ref / π", [
        Curve(u, k["k3"], "k3", color=COLORS["main"], width=3),
        Curve([chk["u"]], [chk["k3"]], "your token", color="black", markers=True, size=12),
    ], x_title="u = π_ref / π", y_title="per-token estimate", y_range=(-1.5, 3))], caption="...")

All text is shown as plain text (Plotly's titles and names, the page's headings and captions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DIGITS = 4  # decimals kept for every number of a chart (what a screen can show, and a small data file)


def _numbers(values) -> list[float]:
    return [round(float(v), DIGITS) + 0.0 for v in np.asarray(values, dtype=float).ravel()]


def _axis(values) -> list[float] | dict:
    """An x series: evenly spaced ones (a grid over p, u or ρ) as {"start", "step", "n"}, which the page lays out
    as start + i * step, so that a file stores each grid once per curve in three numbers; others as a list."""
    x = np.asarray(values, dtype=float).ravel()
    if x.size > 2:
        step = (x[-1] - x[0]) / (x.size - 1)
        if step > 0 and np.allclose(np.diff(x), step, rtol=0, atol=1e-9):
            return {"start": round(float(x[0]), 9), "step": round(float(step), 9), "n": int(x.size)}
    return _numbers(x)


@dataclass(frozen=True)
class Curve:
    """y against x: a line, or markers (a point, "your setting")."""

    x: Sequence[float]
    y: Sequence[float]
    name: str
    color: str | None = None
    width: float = 2.0
    dash: str | None = None  # Plotly dash: "dash", "dot"
    markers: bool = False  # markers instead of a line
    size: float = 10.0  # marker size
    outline: str | None = None  # a marker's outline colour
    hover: bool = True

    def to_json(self) -> dict:
        return {"kind": "curve", "x": _axis(self.x), "y": _numbers(self.y), "name": self.name,
                "color": self.color, "width": self.width, "dash": self.dash, "markers": self.markers,
                "size": self.size, "outline": self.outline, "hover": self.hover}


@dataclass(frozen=True)
class Bars:
    """One bar per x, each with its own colour; `hatch` a Plotly pattern shape ("/")."""

    x: Sequence
    y: Sequence[float]
    name: str
    colors: Sequence[str]
    opacity: float = 1.0
    hatch: str | None = None

    def to_json(self) -> dict:
        if len(self.colors) != len(self.y) or len(self.x) != len(self.y):
            raise ValueError("Bars: x, y and colors need one entry per bar")
        return {"kind": "bars", "x": list(self.x), "y": _numbers(self.y), "name": self.name,
                "colors": list(self.colors), "opacity": self.opacity, "hatch": self.hatch}


@dataclass(frozen=True)
class Figure:
    """One chart: its traces, axes, vertical lines (x, dash) and shaded x bands (x0, x1, fill colour)."""

    title: str
    traces: Sequence[Curve | Bars]
    x_title: str
    y_title: str
    height: int = 380
    x_range: tuple[float, float] | None = None
    y_range: tuple[float, float] | None = None
    legend: bool = True
    vlines: Sequence[float] = ()
    bands: Sequence[tuple[float, float, str]] = ()
    barmode: str = "overlay"  # "group": bars side by side

    def to_json(self) -> dict:
        return {"title": self.title, "traces": [t.to_json() for t in self.traces], "x_title": self.x_title,
                "y_title": self.y_title, "height": self.height,
                "x_range": None if self.x_range is None else _numbers(self.x_range),
                "y_range": None if self.y_range is None else _numbers(self.y_range), "legend": self.legend,
                "vlines": _numbers(self.vlines), "bands": [[*_numbers(b[:2]), b[2]] for b in self.bands],
                "barmode": self.barmode}


@dataclass(frozen=True)
class Row:
    """A section of charts side by side (`columns` per line), with a heading, a text above and a caption."""

    heading: str
    figures: Sequence[Figure]
    columns: int = 1
    text: str = ""
    caption: str = ""

    def to_json(self) -> dict:
        return {"heading": self.heading, "figures": [f.to_json() for f in self.figures], "columns": self.columns,
                "text": self.text, "caption": self.caption}


def rows_json(rows: Sequence[Row]) -> list[dict]:
    """An entry's "figures": the rows as plain data for assets/lesson.js."""
    return [r.to_json() for r in rows]
