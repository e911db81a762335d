"""The player's payload: what the browser receives for a run, as JSON with each array once.

`build_payload` is the one place the charts of sim/player/spec.py become data. The app's page (ui/view.py)
and a static lesson (sim/lesson) both call it, so the same run gives them the same bytes.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence

import numpy as np

from sim.player.spec import REVEALS, Band, Bars, BarSeries, Chart, Heatmap, Line, Trace


# ---- payload: each array once, float32 or uint8, base64 ----
def encode_array(a) -> dict:
    """A numpy array as {"dtype": "f4" | "u1", "shape": [...], "b64": base64 of little-endian bytes}.

    Integers in 0..255 travel as bytes; everything else as float32 (7 significant digits, NaN kept).
    """
    a = np.asarray(a)
    if a.dtype.kind in "biu" and (a.size == 0 or (a.min() >= 0 and a.max() <= 255)):
        dtype, raw = "u1", a.astype(np.uint8)
    else:
        dtype, raw = "f4", a.astype("<f4")
    return {"dtype": dtype, "shape": list(a.shape), "b64": base64.b64encode(raw.tobytes()).decode("ascii")}


def decode_array(d: dict) -> np.ndarray:
    """Inverse of encode_array (what player.js does in the browser)."""
    dtype = {"f4": "<f4", "u1": np.uint8}[d["dtype"]]
    return np.frombuffer(base64.b64decode(d["b64"]), dtype=dtype).reshape(d["shape"])


class _Arrays:
    """Collects encoded arrays; identical contents are sent once and referenced by index."""

    def __init__(self):
        self.items: list[dict] = []
        self._index: dict[tuple, int] = {}

    def ref(self, a, ndim: int, what: str) -> int:
        a = np.asarray(a)
        if a.ndim != ndim or a.size == 0:
            raise ValueError(f"{what}: expected a non-empty {ndim}-D array, got shape {a.shape}")
        enc = encode_array(a)
        k = (enc["dtype"], tuple(enc["shape"]), enc["b64"])
        if k not in self._index:
            self._index[k] = len(self.items)
            self.items.append(enc)
        return self._index[k]


def _trace_spec(tr: Trace, arrays: _Arrays, T: int) -> dict:
    if isinstance(tr, Line):
        if tr.reveal not in REVEALS:
            raise ValueError(f"Line {tr.name!r}: reveal must be one of {REVEALS}, got {tr.reveal!r}")
        spec = {
            "kind": "line", "y": arrays.ref(tr.y, 1, f"Line {tr.name!r}"), "x0": int(tr.x0), "reveal": tr.reveal,
            "name": tr.name, "color": tr.color, "width": tr.width, "dash": tr.dash, "stackgroup": tr.stackgroup,
            "fill": tr.fill, "showlegend": tr.showlegend,
        }  # fmt: skip
        if tr.x is not None:
            if np.shape(tr.x) != np.shape(tr.y) or tr.reveal != "full":
                raise ValueError(f"Line {tr.name!r}: x needs one value per y and reveal='full'")
            spec["x"] = arrays.ref(tr.x, 1, f"Line {tr.name!r} x")
        if tr.mode not in MODES:
            raise ValueError(f"Line {tr.name!r}: mode must be one of {MODES}, got {tr.mode!r}")
        n = len(np.ravel(tr.y))
        for what, each in (("symbols", tr.symbols), ("marker_colors", tr.marker_colors), ("text", tr.text)):
            if each is not None and len(each) != n:
                raise ValueError(f"Line {tr.name!r}: {what} needs one entry per point")
        extra = {"mode": tr.mode, "size": float(tr.size), "symbol": tr.symbol,
                 "symbols": None if tr.symbols is None else list(tr.symbols),
                 "marker_colors": None if tr.marker_colors is None else list(tr.marker_colors), "outline": tr.outline,
                 "text": None if tr.text is None else [str(t) for t in tr.text], "text_position": tr.text_position,
                 "hover": bool(tr.hover)}
        spec |= {k: v for k, v in extra.items() if v != LINE_DEFAULTS[k]}
        return spec
    if isinstance(tr, Band):
        if np.shape(tr.lo) != np.shape(tr.hi):
            raise ValueError(f"Band {tr.name!r}: lo {np.shape(tr.lo)} and hi {np.shape(tr.hi)} differ")
        lo, hi = arrays.ref(tr.lo, 1, f"Band {tr.name!r}"), arrays.ref(tr.hi, 1, f"Band {tr.name!r}")
        spec = {"kind": "band", "lo": lo, "hi": hi, "x0": int(tr.x0), "name": tr.name, "color": tr.color}
        if tr.x is not None:
            if np.shape(tr.x) != np.shape(tr.lo):
                raise ValueError(f"Band {tr.name!r}: x needs one value per point")
            spec["x"] = arrays.ref(tr.x, 1, f"Band {tr.name!r} x")
        if tr.showlegend:
            spec["showlegend"] = True
        return spec
    if isinstance(tr, BarSeries):
        y = np.asarray(tr.y, dtype=float)
        labels = list(tr.x)
        if y.ndim != 1 or len(labels) != y.size or y.size == 0:
            raise ValueError(f"BarSeries {tr.name!r}: one x per bar, at least one bar")
        colors = [tr.colors] * y.size if isinstance(tr.colors, str) else list(tr.colors)
        if len(colors) != y.size:
            raise ValueError(f"BarSeries {tr.name!r}: one colour, or one per bar")
        spec = {"kind": "barseries", "x": [_label(v) for v in labels], "y": arrays.ref(y, 1, f"BarSeries {tr.name!r}"),
                "name": tr.name, "colors": colors, "opacity": float(tr.opacity), "hatch": tr.hatch}
        if tr.width is not None:
            spec["width"] = arrays.ref(np.broadcast_to(np.asarray(tr.width, dtype=float), y.shape), 1, "width")
        return spec
    if isinstance(tr, Bars):
        y = np.asarray(tr.y)
        if len(tr.colors) != len(tr.names):
            raise ValueError(f"Bars: {len(tr.colors)} colors but {len(tr.names)} names")
        spec = {"kind": "bars", "y": arrays.ref(y, 2, "Bars y"), "colors": list(tr.colors), "names": list(tr.names)}
        if y.shape[0] < T + 1:
            raise ValueError(f"Bars y: needs a row for each iteration 0..{T}, got {y.shape[0]} rows")
        if tr.categories is not None:
            cat = np.asarray(tr.categories)
            if cat.shape != y.shape:
                raise ValueError(f"Bars categories: shape {cat.shape} differs from y {y.shape}")
            if cat.dtype.kind not in "biu" or cat.min() < 0 or cat.max() >= len(tr.colors):
                raise ValueError(f"Bars categories: integers in [0, {len(tr.colors)}) expected")
            spec["categories"] = arrays.ref(cat.astype(np.uint8), 2, "Bars categories")
        labels = list(range(y.shape[1])) if tr.x is None else list(tr.x)
        if len(labels) != y.shape[1]:
            raise ValueError(f"Bars x: {len(labels)} labels for {y.shape[1]} bars")
        spec["x"] = labels
        return spec
    if isinstance(tr, Heatmap):
        spec = {
            "kind": "heatmap", "z": arrays.ref(tr.z, 2, "Heatmap z"), "x0": int(tr.x0), "zmin": tr.zmin,
            "zmax": tr.zmax, "colorscale": tr.colorscale, "colorbar_title": tr.colorbar_title,
        }  # fmt: skip
        if (tr.x is None) != (tr.y is None):
            raise ValueError("Heatmap: x and y go together (a heatmap over two axes)")
        if tr.x is not None:
            if np.shape(tr.z) != (len(tr.x), len(tr.y)):
                raise ValueError(f"Heatmap z: shape {np.shape(tr.z)} is not (len(x), len(y))")
            spec["x"], spec["y"] = arrays.ref(tr.x, 1, "Heatmap x"), arrays.ref(tr.y, 1, "Heatmap y")
        return spec
    raise TypeError(f"not a player trace: {type(tr).__name__}")


MODES = ("lines", "markers", "lines+markers")
LINE_DEFAULTS = {"mode": "lines", "size": 8.0, "symbol": None, "symbols": None, "marker_colors": None,
                 "outline": None, "text": None, "text_position": "top left", "hover": True}  # left out of a payload


def _label(v):
    """A bar's x as JSON: a number stays a number, anything else is its text."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        return str(v)
    return int(v) if isinstance(v, (int, np.integer)) else float(v)


def timeline(c: Chart) -> bool:
    """Is the chart drawn over a run's iterations (the player reveals it up to t) rather than over its own x?"""
    return any(isinstance(tr, Bars) or (isinstance(tr, (Line, Band, Heatmap)) and tr.x is None) for tr in c.traces)


def build_payload(
    key: str,
    *,
    T: int,
    charts: Sequence[Chart],
    columns: int = 2,
    speed: float = 16,
    classroom: bool = False,
    label: str = "iteration {t} / {T}",
    plotly_url: str = "",
    meta: dict | None = None,
    bar: bool = True,
) -> dict:
    """The JSON-ready dict the browser receives: settings, chart specs and each array once. bar=False: no
    Play bar (charts that do not change with t)."""
    if int(T) < 1:
        raise ValueError(f"T must be at least 1 iteration, got {T}")
    if not charts:
        raise ValueError("the player needs at least one chart")
    arrays = _Arrays()
    specs = []
    for c in charts:
        specs.append({
            "title": c.title, "x_title": c.x_title, "y_title": c.y_title,
            "y_range": None if c.y_range is None else [float(v) for v in c.y_range],
            "x_range": None if c.x_range is None else [float(v) for v in c.x_range],
            "height": int(c.height), "span": max(1, min(int(c.span), columns)), "caption": c.caption or "",
            "legend": bool(c.legend), "traces": [_trace_spec(tr, arrays, int(T)) for tr in c.traces],
        })  # fmt: skip
        if c.x_log:
            specs[-1]["x_log"] = True
        if c.x_ticks is not None:
            specs[-1]["x_ticks"] = [float(v) for v in c.x_ticks]
        if c.vlines:
            specs[-1]["vlines"] = [[float(x), str(label)] for x, label in c.vlines]
        if not timeline(c):
            specs[-1]["timeline"] = False
        for name, value in (("y_log", c.y_log or None),
                            ("y_ticks", None if c.y_ticks is None else [float(v) for v in c.y_ticks]),
                            ("tick_text", None if c.tick_text == (None, None) else
                             [None if t is None else [str(v) for v in t] for t in c.tick_text]),
                            ("hlines", [[float(y), str(label), dash] for y, label, dash in c.hlines] or None),
                            ("shade", [[float(a), float(b), color] for a, b, color in c.shade] or None),
                            ("barmode", None if c.barmode == "overlay" else c.barmode),
                            ("reads", list(c.reads) or None), ("given", [str(g) for g in c.given] or None)):
            if value is not None:
                specs[-1][name] = value
    payload = {
        "v": 1, "key": key, "T": int(T), "columns": int(columns), "speed": float(speed), "classroom": bool(classroom),
        "label": label, "plotly_url": plotly_url, "meta": dict(meta or {}),
        "charts": specs, "arrays": arrays.items,
    }  # fmt: skip
    if not bar:
        payload["bar"] = False
    return payload


def payload_bytes(payload: dict) -> int:
    """Size of the payload as Streamlit serialises it (compact JSON, UTF-8)."""
    return len(json.dumps(payload).encode("utf-8"))
