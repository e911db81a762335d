"""A player that animates a precomputed run in the browser: Play, Pause, Step, Reset, speed, timeline.

The server computes a run once per setting and calls `player(...)`; the browser receives every series
once and reveals it up to the current iteration t, frame by frame, redrawing the charts with
`Plotly.react` (`assets/player_charts.js`, `assets/player.js`). While playing nothing is sent to the
server, so a class of students pressing Play costs the server nothing.

Declare the charts, not the frames:

    from ui.player import Band, Bars, Chart, Heatmap, Line, player

    T = cfg.iterations
    band = seed_band(run.accuracy)                         # (T+1,) arrays: lo, hi, mean over seeds
    player(
        "toy",
        T=T,
        charts=[
            Chart("Mean accuracy (G = 8)", [
                Band(band["lo"], band["hi"], "10–90% of 16 seeds"),
                Line(band["mean"], "mean of seeds", color="#1f77b4", width=3),
                Line(exp.accuracy[:, 0], "expected (exact)", reveal="full", color="black", dash="dash"),
            ], y_title="accuracy", y_range=(0, 1)),
            Chart("Each prompt's p_j at iteration {t}", [
                Bars(run.p[:, 0], categories=signal, colors=("#7f7f7f", "#1f77b4"), names=("no signal", "signal")),
            ], x_title="prompt j", y_range=(0, 1)),
            Chart("p_j over time", [Heatmap(run.p[:, 0], colorbar_title="p_j")], y_title="prompt j"),
        ],
        classroom=classroom,
    )

How each trace is revealed at iteration t (series index i is iteration x0 + i):
  Line(reveal="upto")  points with iteration <= t (stack areas with `stackgroup`, fill with `fill`)
  Line(reveal="full")  the whole line from the start (an exact expectation, a target)
  Band                 a filled lo..hi band up to t
  Bars                 row t of a (T+1, P) array, coloured by a (T+1, P) category array
  Heatmap              columns (iterations) <= t of a (T+1, P) array; later columns are covered
Titles may contain {t} and {T}. All text is shown as plain text.

Plotly.js is not sent with the page. app.py's server serves it from the installed `plotly` package on its
own route (ui/server.py: gzipped once, cached by the browser for a year). A script started without that
server (the test apps) falls back to copying it into the app's `static/` folder, served by Streamlit's static
file serving (`ensure_plotly_js`; `scripts/bench_player.py` measures).

How `st.components.v2` behaves in Streamlit 1.67 (read in its source and checked in Chromium):
  - `data` travels as one JSON string per rerun; the browser parses it and calls the JS module's
    default export again only if the string changed. So a rerun with the same setting costs the
    browser nothing (it still costs the wire: send the same data, do not put timestamps in it).
  - With a stable `key` the element persists across reruns: the default export is called again on
    the same parent element, which is where the player keeps its state (t, playing, Plotly charts).
    Its cleanup runs only when the element unmounts (another page, or the key changes).
  - The JS (inline, about 20 kB) is evaluated once per content hash; it is resent with each rerun.
  - `setStateValue` sends a widget value and reruns the script: the player uses it only when the
    caller asks (`on_t_change`) and only once playing has stopped.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import streamlit as st

from ui.server import current

ASSETS = Path(__file__).resolve().parents[1] / "assets"
COMPONENT_NAME = "grpo_player"
REVEALS = ("upto", "full")
# one ES module from two files: the charts (Plotly) first, then the player that exports the component
_JS = "\n".join((ASSETS / f).read_text(encoding="utf-8") for f in ("player_charts.js", "player.js"))
_CSS = (ASSETS / "player.css").read_text(encoding="utf-8")
# isolate_styles=False: Plotly puts its own CSS in the document head, which a shadow root would not see.
_COMPONENT = st.components.v2.component(COMPONENT_NAME, css=_CSS, js=_JS, isolate_styles=False)


# ---- the declarative spec: what each chart draws and how it is revealed ----
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


@dataclass(frozen=True)
class Band:
    """A filled band between lo and hi (e.g. the 10-90% spread over seeds), revealed up to t."""

    lo: np.ndarray  # (n,)
    hi: np.ndarray  # (n,)
    name: str
    x0: int = 0
    color: str = "rgba(31,119,180,0.2)"


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

    z: np.ndarray  # (T+1, P)
    x0: int = 0
    zmin: float = 0.0
    zmax: float = 1.0
    colorscale: str = "Viridis"
    colorbar_title: str = ""


Trace = Line | Band | Bars | Heatmap


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
        return {
            "kind": "line", "y": arrays.ref(tr.y, 1, f"Line {tr.name!r}"), "x0": int(tr.x0), "reveal": tr.reveal,
            "name": tr.name, "color": tr.color, "width": tr.width, "dash": tr.dash, "stackgroup": tr.stackgroup,
            "fill": tr.fill, "showlegend": tr.showlegend,
        }  # fmt: skip
    if isinstance(tr, Band):
        if np.shape(tr.lo) != np.shape(tr.hi):
            raise ValueError(f"Band {tr.name!r}: lo {np.shape(tr.lo)} and hi {np.shape(tr.hi)} differ")
        lo, hi = arrays.ref(tr.lo, 1, f"Band {tr.name!r}"), arrays.ref(tr.hi, 1, f"Band {tr.name!r}")
        return {"kind": "band", "lo": lo, "hi": hi, "x0": int(tr.x0), "name": tr.name, "color": tr.color}
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
        return {
            "kind": "heatmap", "z": arrays.ref(tr.z, 2, "Heatmap z"), "x0": int(tr.x0), "zmin": tr.zmin,
            "zmax": tr.zmax, "colorscale": tr.colorscale, "colorbar_title": tr.colorbar_title,
        }  # fmt: skip
    raise TypeError(f"not a player trace: {type(tr).__name__}")


def build_payload(
    key: str,
    *,
    T: int,
    charts: Sequence[Chart],
    columns: int = 2,
    speed: float = 16,
    classroom: bool = False,
    label: str = "iteration {t} / {T}",
    report: bool = False,
    plotly_url: str = "",
    meta: dict | None = None,
) -> dict:
    """The JSON-ready dict the browser receives: settings, chart specs and each array once."""
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
    return {
        "v": 1, "key": key, "T": int(T), "columns": int(columns), "speed": float(speed), "classroom": bool(classroom),
        "label": label, "report": bool(report), "plotly_url": plotly_url, "meta": dict(meta or {}),
        "charts": specs, "arrays": arrays.items,
    }  # fmt: skip


def payload_bytes(payload: dict) -> int:
    """Size of the payload as Streamlit serialises it (compact JSON, UTF-8)."""
    return len(json.dumps(payload).encode("utf-8"))


# ---- Plotly.js: served once from the app's static folder, never from the internet ----
def ensure_plotly_js(app_dir: Path) -> str:
    """Copy plotly.min.js from the installed plotly package to app_dir/static/ (once); return its URL path.

    The file name carries the Plotly.js version, so a browser never keeps a stale copy. copy2 keeps
    the package's modification time, which lets the browser cache the file without asking again.
    The copy is not committed (static/ is in .gitignore).
    """
    from plotly.offline import get_plotlyjs_version

    name = f"plotly-{get_plotlyjs_version()}.min.js"
    src = Path(__import__("plotly").__file__).parent / "package_data" / "plotly.min.js"
    dest = app_dir / "static" / name
    if not dest.exists() or dest.stat().st_size != src.stat().st_size:
        dest.parent.mkdir(exist_ok=True)
        tmp = dest.with_suffix(f".tmp{id(dest)}")
        shutil.copy2(src, tmp)
        tmp.replace(dest)  # atomic: two servers starting together never serve half a file
    return f"app/static/{name}"


def _plotly_url() -> str | None:
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    if (url := current().plotly_url()) is not None:
        return url
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    ctx = get_script_run_ctx()
    if ctx is None or not ctx.main_script_path:
        return None
    rel = ensure_plotly_js(Path(ctx.main_script_path).resolve().parent)
    return f"/{base}/{rel}" if base else f"/{rel}"


def player(
    key: str,
    *,
    T: int,
    charts: Sequence[Chart],
    columns: int = 2,
    speed: float = 16,
    classroom: bool = False,
    label: str = "iteration {t} / {T}",
    on_t_change: Callable[[], None] | None = None,
    meta: dict | None = None,
) -> int | None:
    """Draw the player: a bar (Play/Pause, Step, Reset, speed, timeline) above the charts.

    key: stable per page; keeps the browser's player (its t, playing or not) across reruns, so a
        setting change mid-play keeps the iteration and keeps playing (t clamped to the new T).
    T: iterations; t runs 0..T. speed: initial iterations per second. columns: chart grid width.
    classroom: presenter sizes (chart text >= 16 px, titles >= 22 px, a big player bar).
    on_t_change: if given, the browser reports t when playing stops (Pause, Step, Reset, end of a
        scrub; never while playing) and this callback runs; the return value is that t (None before).
    meta: small JSON-able dict passed through to the browser (the tests put the script time in it).
        Keep it the same across reruns of the same setting: any change counts as new data.
    """
    if current().plotly_path is None and not st.get_option("server.enableStaticServing"):
        st.error(
            "The player needs Streamlit's static file serving for Plotly.js: set "
            "`enableStaticServing = true` under `[server]` in .streamlit/config.toml and restart."
        )
        return None
    try:
        plotly_url = _plotly_url() or ""
    except OSError as e:  # e.g. the app folder is read-only: say so instead of a traceback
        st.error(f"The player could not put Plotly.js into the app's static/ folder: {e}")
        return None
    payload = build_payload(
        key, T=T, charts=charts, columns=columns, speed=speed, classroom=classroom, label=label,
        report=on_t_change is not None, plotly_url=plotly_url, meta=meta,
    )  # fmt: skip
    kwargs = {"on_t_change": on_t_change} if on_t_change is not None else {}
    result = _COMPONENT(key=key, data=payload, **kwargs)
    t = getattr(result, "t", None) if on_t_change is not None else None
    return None if t is None else int(t)
