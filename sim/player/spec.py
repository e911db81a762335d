"""The one chart spec of the app and of a lesson: plain data, no plotting library, any x axis.

Every chart of every view is declared here and drawn by the same JavaScript (assets/js/player_charts.js, through the
player, assets/js/player.js): over the iterations of a run, where the player reveals it frame by frame, or over any
other axis (p, u, the ratio rho, k, the answer i, a training step), where it is drawn whole. Declare the charts,
not the frames:

    T = cfg.iterations
    band = seed_band(run.accuracy)                         # (T+1,) arrays: lo, hi, mean over seeds
    charts = [
        Chart("Mean accuracy (G = 8)", [
            Band(band["lo"], band["hi"], "10–90% of 16 seeds"),
            Line(band["mean"], "mean of seeds", color="#1f77b4", width=3),
            Line(exp.accuracy[:, 0], "expected (exact)", reveal="full", color="black", dash="dash"),
        ], y_title="accuracy", y_range=(0, 1)),
        Chart("Each prompt's p_j at iteration {t}", [
            Bars(run.p[:, 0], categories=signal, colors=("#7f7f7f", "#1f77b4"), names=("no signal", "signal")),
        ], x_title="prompt j", y_range=(0, 1)),
        Chart("p_j over time", [Heatmap(run.p[:, 0], colorbar_title="p_j")], y_title="prompt j"),
    ]

How each trace is revealed at iteration t (series index i is iteration x0 + i):
  Line(reveal="upto")  points with iteration <= t (stack areas with `stackgroup`, fill with `fill`)
  Line(reveal="full")  the whole line from the start (an exact expectation, a target)
  Band                 a filled lo..hi band up to t
  Bars                 row t of a (T+1, P) array, coloured by a (T+1, P) category array
  Heatmap              columns (iterations) <= t of a (T+1, P) array; later columns are covered
A line with its own x (`Line(y, name, x=ks, reveal="full")`) is drawn against that x, whole: a chart of such
lines (pass@k against k, on `x_log`) stays the same while the player plays. The traces of a chart over another
axis: Line (with x; mode "markers" for points, "lines+markers"), Band (with x), BarSeries (one bar per x, each its
own colour) and Heatmap (with x and y). Such a chart is drawn whole, with no Play bar when a page has nothing else
(`build_payload(..., bar=False)`); its decorations are vertical and horizontal marker lines with a label
(`vlines`, `hlines`) and shaded x ranges (`shade`).
Titles may contain {t} and {T}. All text is shown as plain text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

REVEALS = ("upto", "full")
# the house colours of every chart, in the app and in a lesson
COLORS = {"main": "#1f77b4", "pin": "#ff7f0e", "good": "#2ca02c", "bad": "#d62728", "grey": "#7f7f7f",
          "expected": "#111111"}


def rgba(hex_color: str, alpha: float) -> str:
    """'#1f77b4', 0.2 -> 'rgba(31,119,180,0.2)': a translucent fill of a house colour."""
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


@dataclass(frozen=True)
class Line:
    """A line over iterations: y[i] is the value at iteration x0 + i."""

    y: np.ndarray  # (n,)
    name: str
    reveal: str = "upto"  # "upto": drawn up to the current iteration; "full": whole line from the start
    x0: int = 0  # iteration of y[0] (1 for per-update metrics that start after the first step)
    color: str | None = None
    width: float = 2.0
    dash: str | None = None  # Plotly dash: "dash", "dot", "dashdot"
    stackgroup: str | None = None  # lines sharing a stackgroup are stacked as filled areas
    fill: str | None = None  # Plotly fill, e.g. "tozeroy"
    showlegend: bool = True
    x: np.ndarray | None = None  # (n,) x values of a line drawn against something else (k, p): reveal="full"
    mode: str = "lines"  # Plotly's: "lines", "markers", "lines+markers"
    size: float = 8.0  # marker size
    symbol: str | None = None  # marker symbol: "x", "diamond", one per point with `symbols`
    symbols: tuple[str, ...] | None = None
    marker_colors: tuple[str, ...] | None = None  # one colour per point (markers)
    outline: str | None = None  # the markers' outline colour
    text: tuple[str, ...] | None = None  # a label beside each point ("SFT 0.742")
    text_position: str = "top left"
    hover: bool = True  # False: no hover label (a guide line)


@dataclass(frozen=True)
class Band:
    """A filled band between lo and hi (e.g. the 10-90% spread over seeds), revealed up to t, or drawn whole
    against its own x."""

    lo: np.ndarray  # (n,)
    hi: np.ndarray  # (n,)
    name: str
    x0: int = 0
    color: str = "rgba(31,119,180,0.2)"
    x: np.ndarray | None = None  # (n,)
    showlegend: bool = False


@dataclass(frozen=True)
class BarSeries:
    """One bar per x, drawn whole (a chart over answers, rates, ...): each bar its own colour, optionally hatched
    and translucent; bars of several series side by side with the chart's barmode "group"."""

    x: Sequence  # (n,) numbers or labels
    y: np.ndarray  # (n,)
    name: str
    colors: tuple[str, ...] | str = "#1f77b4"  # one colour, or one per bar
    opacity: float = 1.0
    hatch: str | None = None  # a Plotly pattern shape: "/"
    width: float | np.ndarray | None = None  # bar width in x units (a histogram's bins)


@dataclass(frozen=True)
class Bars:
    """One bar per item at the current iteration: row t of y, coloured by category.

    categories[t, j] indexes `colors` and `names` (the legend); None = one category.
    """

    y: np.ndarray  # (T+1, P)
    categories: np.ndarray | None = None  # (T+1, P) ints in [0, len(colors))
    colors: tuple[str, ...] = ("#1f77b4",)
    names: tuple[str, ...] = ("",)
    x: tuple | None = None  # P bar labels; default 0 .. P-1


@dataclass(frozen=True)
class Heatmap:
    """z[i, j] at iteration x0 + i and row j (drawn as P rows by iterations), revealed up to t."""

    z: np.ndarray  # (T+1, P), or (n_x, n_y) against x and y
    x0: int = 0
    zmin: float = 0.0
    zmax: float = 1.0
    colorscale: str = "Viridis"
    colorbar_title: str = ""
    x: np.ndarray | None = None  # (n_x,) a heatmap over something else (p): drawn whole
    y: np.ndarray | None = None  # (n_y,) its rows' values (G)


Trace = Line | Band | Bars | BarSeries | Heatmap


@dataclass(frozen=True)
class Chart:
    """One chart of the player. Titles may contain {t} (current iteration) and {T}."""

    title: str
    traces: Sequence[Trace]
    x_title: str = "iteration"
    y_title: str = ""
    y_range: tuple[float, float] | None = None
    x_range: tuple[float, float] | None = None  # default: 0 .. T (bars: all items)
    height: int = 340
    span: int = 1  # grid columns this chart spans
    caption: str | None = None  # plain text under the chart
    legend: bool = True
    x_log: bool = False  # a log x axis (x_range then in log10 units, as Plotly takes it)
    x_ticks: tuple[float, ...] | None = None  # the x axis's tick values (default: the axis's own)
    vlines: tuple[tuple[float, str], ...] = ()  # dotted vertical markers (x, label)
    y_log: bool = False
    y_ticks: tuple[float, ...] | None = None
    tick_text: tuple[tuple[str, ...] | None, tuple[str, ...] | None] = (None, None)  # x and y ticks' text
    hlines: tuple[tuple[float, str, str], ...] = ()  # horizontal markers (y, label, "dash" or "dot")
    shade: tuple[tuple[float, float, str], ...] = ()  # shaded x ranges (x0, x1, fill colour)
    barmode: str = "overlay"  # "group": a BarSeries per category side by side
    reads: list = field(default_factory=list)  # how its caption's numbers were read off it (read())
    given: list = field(default_factory=list)  # numbers its caption gives that are not its data (a setting, a constant)


READ_FORMAT = re.compile(r"\+?\.\d+[f%]\Z")


def read_value(chart: Chart, name: str, at: str, *, row: int | None = None, level: float | None = None,
               x: float | None = None, y: float | None = None, stack: bool = False) -> float | None:
    """A number off the chart's own data, as its caption says it (assets/js/chart_spec.js readValue, the same
    readings; tests/test_player.py runs both on the same charts): the trace `name` (a heatmap: "heatmap"),
    `at` "first", "last", "max", "min", "argmax" (the x of the largest value), "above" (the first x past `level`;
    None if never), "x" (the value at x), "cell" (a heatmap's value at x, y); `row`: a heatmap's row over the
    iterations; `stack`: a stacked line's top."""
    i = next((k for k, tr in enumerate(chart.traces) if getattr(tr, "name", None) == name
              or (isinstance(tr, Heatmap) and name == "heatmap")), None)
    if i is None:
        raise ValueError(f"read: the chart {chart.title!r} has no trace {name!r}")
    tr = chart.traces[i]
    if at == "cell":  # z (n_x, n_y) over x and y: the cell nearest (x, y)
        i, j = (int(np.abs(np.asarray(axis, float) - v).argmin()) for axis, v in ((tr.x, x), (tr.y, y)))
        return float(np.asarray(tr.z)[i, j])
    if isinstance(tr, Heatmap):
        vals = np.asarray(tr.z, float)[:, row]
        xs = tr.x0 + np.arange(len(vals), dtype=float)
    else:
        vals = np.array(tr.y, float)
        if stack:
            for other in chart.traces[:i]:
                if isinstance(other, Line) and other.stackgroup == tr.stackgroup:
                    vals = vals + np.asarray(other.y, float)
        xs = np.asarray(tr.x, float) if tr.x is not None else tr.x0 + np.arange(len(vals), dtype=float)
    ok = np.flatnonzero(np.isfinite(vals))
    if not ok.size:
        return None
    if at in ("first", "last"):
        return float(vals[ok[0] if at == "first" else ok[-1]])
    if at in ("max", "min", "argmax"):
        best = ok[np.argmin(vals[ok])] if at == "min" else ok[np.argmax(vals[ok])]
        return float(xs[best] if at == "argmax" else vals[best])
    if at == "above":
        past = ok[vals[ok] > level]
        return float(xs[past[0]]) if past.size else None
    if at == "x":
        return float(vals[int(np.abs(xs - x).argmin())])
    raise ValueError(f"read: unknown reading {at!r}")


def read(chart: Chart, name: str, at: str, fmt: str, **where) -> str | None:
    """read_value(...) as its caption prints it (`fmt`: ".3f", ".1%"), recorded in chart.reads so that the
    browser tests read it again off what the chart draws; None where there is no such value."""
    if not READ_FORMAT.match(fmt):
        raise ValueError(f"read: format {fmt!r} (use .Nf or .N%)")
    value = read_value(chart, name, at, **where)
    text = None if value is None else format(value, fmt)
    chart.reads.append({"trace": name, "at": at, "fmt": fmt, "text": text, **where})
    return text
