"""Controls whose values live in the URL, validated before Streamlit sees them.

Every control is declared once as a spec (`Num`, `Choice`, `Flag`): key (= the URL parameter),
label, allowed range or options, default. `control(spec)` draws the widget with
`bind="query-params"`, so the value is written to the URL and restored from it (Streamlit 1.67
drops values equal to the default from the URL).

Values arriving from a URL are user input. Streamlit on its own silently drops an out-of-range
or unparsable value and accepts an off-step one (`?G=7.5` on an integer slider becomes 7). Here
the raw value is checked first (`parse_url_value`): a non-number falls back to the default, an
out-of-range number is clamped to the nearest end, a fraction for an integer control is
truncated (what Streamlit does), and each correction shows a visible `st.warning` naming the
parameter and the value used.

Classroom mode: `?classroom=1` enlarges the type; `?hide=G,beta` hides those controls and uses
the value the link carries (validated the same way). `classroom_link_builder` writes such links.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from urllib.parse import urlencode

import streamlit as st

CLASSROOM_PARAM = "classroom"
HIDE_PARAM = "hide"
RESERVED = (CLASSROOM_PARAM, HIDE_PARAM)


@dataclass(frozen=True)
class Num:
    """A number on a slider: lo <= value <= hi, on the grid lo + k * step."""

    key: str
    label: str
    lo: float
    hi: float
    default: float
    step: float
    help: str | None = None
    fmt: str | None = None  # printf format for the slider, e.g. "%.3f"

    def __post_init__(self):
        if not (self.lo <= self.default <= self.hi) or self.step <= 0:
            raise ValueError(f"{self.key}: default {self.default} must lie in [{self.lo}, {self.hi}], step > 0")

    @property
    def integer(self) -> bool:
        return all(isinstance(v, int) for v in (self.lo, self.hi, self.default, self.step))

    def describe(self) -> str:
        return f"a number from {self.lo} to {self.hi}"


@dataclass(frozen=True)
class Choice:
    """One of a few named options (a horizontal radio)."""

    key: str
    label: str
    options: tuple[str, ...]
    default: str
    help: str | None = None

    def __post_init__(self):
        if self.default not in self.options:
            raise ValueError(f"{self.key}: default {self.default!r} is not one of {self.options}")

    def describe(self) -> str:
        return "one of " + ", ".join(self.options)


@dataclass(frozen=True)
class Flag:
    """On/off (a toggle); in the URL as true/false."""

    key: str
    label: str
    default: bool
    help: str | None = None

    def describe(self) -> str:
        return "true or false"


Spec = Num | Choice | Flag


def parse_url_value(spec: Spec, raw: str) -> tuple[object, str | None]:
    """(value to use, problem or None) for the raw URL string `raw` of `spec`.

    Non-numbers and unknown options fall back to the default; numbers out of range are clamped to
    the nearest end; a fraction for an integer control is truncated, as Streamlit itself does.
    """
    if isinstance(spec, Flag):
        low = raw.strip().lower()
        if low in ("true", "false"):
            return low == "true", None
        return spec.default, f"is not {spec.describe()}"
    if isinstance(spec, Choice):
        if raw in spec.options:
            return raw, None
        return spec.default, f"is not {spec.describe()}"
    try:
        x = float(raw)
    except ValueError:
        x = math.nan
    if not math.isfinite(x):
        return spec.default, f"is not {spec.describe()}"
    if x < spec.lo or x > spec.hi:
        return min(max(x, spec.lo), spec.hi), f"is outside the allowed range {spec.lo} to {spec.hi}"
    if spec.integer and not x.is_integer():
        return int(x), "is not a whole number"
    return (int(x) if spec.integer else x), None


def _number(raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        return math.nan


def hidden_keys() -> set[str]:
    """Controls the link asks to hide (?hide=G,beta)."""
    raw = st.query_params.get(HIDE_PARAM, "")
    return {k.strip() for k in raw.split(",") if k.strip()}


def _warn(spec: Spec, raw: str, value: object, problem: str) -> None:
    st.warning(f"URL parameter `{spec.key}={raw}` {problem}; using {spec.key} = {value}.", icon="⚠️")


def _url_value(spec: Spec) -> tuple[object, bool]:
    """Validated value carried by the URL for `spec`, and whether the URL had one."""
    raw = st.query_params.get(spec.key)
    if raw is None:
        return spec.default, False
    value, problem = parse_url_value(spec, raw)
    if problem:
        _warn(spec, raw, value, problem)
    return value, True


def _prepare_bound(spec: Spec) -> None:
    """Before a bound widget is first created, replace an invalid URL value by the corrected one."""
    if spec.key in st.session_state or spec.key not in st.query_params:
        return
    raw = st.query_params[spec.key]
    value, problem = parse_url_value(spec, raw)
    if problem is None:
        return  # Streamlit seeds the widget from the URL itself
    _warn(spec, raw, value, problem)
    if isinstance(spec, Num) and spec.lo <= _number(raw) <= spec.hi:
        return  # in range but fractional: Streamlit seeds int(x) itself, which is the value we announced
    try:
        del st.query_params[spec.key]  # stop Streamlit seeding the raw value; the widget rewrites it
    except Exception:  # already bound in this session: the URL value is ignored anyway
        pass
    st.session_state[spec.key] = value


def control(spec: Spec, *, where=None, disabled: bool = False):
    """Draw `spec` bound to the URL (or, if the link hides it, just read it) and return its value."""
    if spec.key in hidden_keys():
        return _url_value(spec)[0]
    _prepare_bound(spec)
    host = where if where is not None else st
    common = dict(key=spec.key, help=spec.help, bind="query-params", disabled=disabled)
    if isinstance(spec, Num):
        if spec.integer:
            return host.slider(spec.label, spec.lo, spec.hi, spec.default, spec.step, **common)
        return host.slider(
            spec.label, float(spec.lo), float(spec.hi), float(spec.default), float(spec.step), format=spec.fmt, **common
        )
    if isinstance(spec, Choice):
        return host.radio(spec.label, spec.options, index=spec.options.index(spec.default), horizontal=True, **common)
    return host.toggle(spec.label, value=spec.default, **common)


def current_values(specs: list[Spec]) -> dict[str, object]:
    """Each spec's current value (widget state, else a hidden control's URL value, else default)."""
    out = {}
    for s in specs:
        if s.key in st.session_state:
            out[s.key] = st.session_state[s.key]
        elif s.key in st.query_params:
            out[s.key] = parse_url_value(s, st.query_params[s.key])[0]
        else:
            out[s.key] = s.default
    return out


def _url_text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def share_query(specs: list[Spec], values: dict[str, object], *, hide=(), classroom: bool = False) -> str:
    """The query string that reproduces `values` (defaults left out), optionally in classroom mode."""
    params = {s.key: _url_text(values[s.key]) for s in specs if values[s.key] != s.default or s.key in hide}
    if classroom:
        params[CLASSROOM_PARAM] = "1"
    if hide:
        params[HIDE_PARAM] = ",".join(hide)
    return urlencode(params, safe=",")


def classroom_active() -> bool:
    return st.query_params.get(CLASSROOM_PARAM, "") in ("1", "true")


def apply_classroom_style() -> None:
    """Presenter mode: larger type for projection, when the link says ?classroom=1."""
    if classroom_active():
        st.html(
            "<style>html, .stApp { font-size: 22px; } .stMarkdown p, .stMarkdown li { font-size: 1.25rem; }"
            " h1 { font-size: 2.6rem !important; } .js-plotly-plot .gtitle { font-size: 22px !important; }</style>"
        )


def classroom_link_builder(specs: list[Spec]) -> None:
    """Sidebar box: pick controls to hide, get a presenter link with the current settings."""
    with st.sidebar.expander("Share / classroom link"):
        values = current_values(specs)
        base = st.context.url or ""
        st.caption("This setup, seed included, as one link:")
        st.code(f"{base}?{share_query(specs, values)}".rstrip("?"), language=None, wrap_lines=True)
        labels = {s.key: s.label for s in specs}
        hide = st.multiselect(
            "Hide these controls", [s.key for s in specs], format_func=lambda k: labels[k], key="_classroom_hide"
        )
        big = st.checkbox("Presenter mode (larger type)", value=True, key="_classroom_big")
        st.caption("Classroom link (hidden controls keep the values above):")
        st.code(f"{base}?{share_query(specs, values, hide=tuple(hide), classroom=big)}", language=None, wrap_lines=True)


def ensure_app_navigation() -> None:
    """Make a page opened straight from a link go through app.py's st.navigation.

    Streamlit 1.67 treats a `pages/` folder beside the main script as a v1 multipage app until
    some session runs `st.navigation`: on a freshly started server, a first visit to /training
    runs pages/training.py on its own (lowercase file names in the sidebar, no wide layout). Here
    the page switches the process to v2 and reruns, so app.py runs and resolves the same URL.
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a later Streamlit without the v1 fallback
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()
