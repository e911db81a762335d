"""Controls whose values live in the URL, validated before Streamlit sees them.

Every control is a spec (`Num`, `Choice`, `Flag`, `Picks`: sim/views/controls.py): key (= the URL parameter),
label, allowed range or options, default, all from the setting's declaration (`Num.of(ToyConfig, "group_size",
hi=64)`): its range may only narrow the field's, so whatever the page accepts the engine accepts too, and the spec
keeps the class and field it sets, so a page builds its config with one call, `build_config(ToyConfig, SPECS,
values)`. `control(spec)` draws the widget with `bind="query-params"`, so the value is written to the URL and
restored from it (Streamlit 1.67 drops values equal to the default from the URL).

Values arriving from a URL are user input. The raw value is checked first (`parse_url_value`): a
non-number or unknown option falls back to the default, an out-of-range number is clamped, an off-step
number snaps to the slider's grid. Each correction shows a warning naming the parameter, with the raw
value shown as plain text (`plain`), and the corrected value is written back to the address bar on the
same run, so a copied link always reproduces what the page shows.

Classroom mode: `?classroom=1` enlarges the type; `?hide=G,beta` hides those controls and uses the value
the link carries (validated the same way). `classroom_link_builder` writes such links.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from urllib.parse import urlencode

import streamlit as st

from sim.validate import neutral
from sim.views.controls import (  # noqa: F401  (declared with the views; drawn here)
    Choice,
    Flag,
    Num,
    Picks,
    Spec,
    build_config,
    default_config,
    defaults,
    url_text,
)
from ui.copy_text import copy_text

CLASSROOM_PARAM = "classroom"
CLASSROOM_KEY = "_classroom_on"  # session_state: the session's presenter mode (kept across pages)
HIDE_PARAM = "hide"
PLAIN_LIMIT = 40  # characters of a URL value shown back to the user


def plain(value: object, limit: int = PLAIN_LIMIT) -> str:
    """`value` as Markdown that renders as the same plain text: a code span, inside which Markdown forms no
    link, autolink, image, emphasis, HTML, colour directive, emoji code or formula. Its fence is one backtick
    longer than any run of backticks in the value. The text is cut to `limit` characters with an ellipsis,
    then every character that is not printable is written as a visible escape (`neutral`): control
    characters, bidi overrides and isolates (U+202E would reverse the rest of the warning), U+0085,
    U+2028/2029, zero-width characters."""
    text = str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    text = neutral(text)
    if not text.strip():
        return "(empty)"
    fence = "`" * (1 + max((len(run) for run in re.findall("`+", text)), default=0))
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def parse_url_value(spec: Spec, raw: str) -> tuple[object, str | None]:
    """(value to use, problem or None) for the raw URL string `raw` of `spec`.

    Non-numbers and unknown options fall back to the default; numbers out of range are clamped to
    the nearest end; a number off the slider's grid (a fraction for an integer control) snaps to it.
    """
    if isinstance(spec, Flag):
        low = raw.strip().lower()
        if low in ("true", "false"):
            return low == "true", None
        return spec.default, f"is not {spec.describe()}"
    if isinstance(spec, Choice):
        for option in spec.options:
            if raw == url_text(option) or _same_number(raw, option):
                return option, None
        return spec.default, f"is not {spec.describe()}"
    x = decimal(raw)
    if not math.isfinite(x):
        return spec.default, f"is not {spec.describe()}"
    if x < spec.lo or x > spec.hi:
        return _typed(spec, min(max(x, spec.lo), spec.hi)), f"is outside the allowed range {spec.lo} to {spec.hi}"
    snapped = spec.snap(x)
    # off the grid: a value that rounds to another one is said, even 1e-308 -> 0; a whole number's grid is exact
    if not _same_float(x, snapped) or (spec.integer and x != snapped):
        return _typed(spec, snapped), f"is not on the slider's steps of {spec.step}"
    return _typed(spec, snapped), None


DECIMAL = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*\Z", re.ASCII)


def decimal(raw: str) -> float:
    """A link's number: decimal ASCII digits only, as docs/security.md says (Python's float() would also take
    "1_6", Arabic-Indic or full-width digits, "nan" and "inf"); NaN for anything else. The page's twin:
    assets/js/lesson_rules.js `decimal` (tests/test_link_rules.py runs both on the same links)."""
    return float(raw) if DECIMAL.match(raw) else math.nan  # 1e400 is inf: refused as not a number


def picks_from_link(key: str, raw: list[str], most: int) -> tuple[list[int], str | None]:
    """A Picks control's numbers from a link (`pick=1&pick=4` or `pick=1,4`): whole numbers 1..most, sorted, each
    once, and a note naming what was left out (assets/js/lesson_rules.js `picksFromLink`, the same rule)."""
    out, bad = set(), []
    for part in (p for r in raw for p in r.split(",")):
        if not part.strip():
            continue
        x = decimal(part)
        if math.isfinite(x) and x.is_integer() and 1 <= x <= most:
            out.add(int(x))
        else:
            bad.append(part)
    note = None
    if bad:
        note = f"URL parameter {key}={plain(','.join(bad))} is not a whole number from 1 to {most}; left out"
    return sorted(out), note


def _same_float(x: float, value: float) -> bool:
    """x is `value` written another way: equal but for the last bits of a float (0.1 + 0.2 for 0.3), never a
    value a user would tell apart (1e-308 is not 0, 0.0400000000001 is not 0.04)."""
    return x == value or (value != 0 and abs(x - value) <= 4 * math.ulp(value))  # nothing is 0 but 0


def _same_number(raw: str, option) -> bool:
    """A numeric option written another way (3e-4 for 0.0003, 16.0 for 16)."""
    if isinstance(option, bool) or not isinstance(option, int | float):
        return False
    x = decimal(raw)
    return math.isfinite(x) and _same_float(x, option)


def _typed(spec: Num, x: float):
    return int(round(x)) if spec.integer else float(x)


def url_param(key: str) -> str | None:
    """The raw text of URL parameter `key` (None if absent), by one rule for every parameter: a key the link
    repeats (`?G=4&G=16`) takes its last value, as `st.query_params[key]` does, with a warning naming it,
    and the address bar is rewritten to that one value. (Streamlit 1.67's `bind="query-params"` seeds a
    widget from `QueryParams.get_initial_value`, which returns the list for a repeated key: a slider reads
    it as a range and falls back to its default, a radio takes the last; so the list is resolved here,
    before any widget is created.)"""
    values = st.query_params.get_all(key)
    if len(values) > 1:
        st.warning(f"URL parameter {key} is given {len(values)} times ({plain(', '.join(values))}); using the "
                   f"last one.", icon="⚠️")  # fmt: skip
        try:
            st.query_params[key] = values[-1]
        except st.errors.StreamlitAPIException:  # bound to a widget already: it holds one value
            pass
        _reseed_from_url()
    return values[-1] if values else None


def hidden_keys() -> set[str]:
    """Controls the link asks to hide (?hide=G,beta); check_hide() has dropped the names the page does not know."""
    raw = url_param(HIDE_PARAM) or ""
    return {k.strip() for k in raw.split(",") if k.strip()}


def check_hide(specs: Sequence[Spec]) -> None:
    """Once per script run, before any control: names in ?hide= that are none of the page's controls (a typo,
    junk, markup, a bidi override) are warned about (as plain text) and dropped from the address bar, so a
    copied link carries only what the page does."""
    raw = url_param(HIDE_PARAM)
    if raw is None:
        return
    names = [k.strip() for k in raw.split(",")]
    known = {s.key for s in specs}
    kept = list(dict.fromkeys(k for k in names if k in known))
    unknown = [k for k in names if k and k not in known]
    if unknown:
        st.warning(f"URL parameter {HIDE_PARAM} names {plain(', '.join(unknown))}, which "
                   f"{'is not a control' if len(unknown) == 1 else 'are not controls'} of this page; ignored.",
                   icon="⚠️")  # fmt: skip
    if kept != names:
        if kept:
            st.query_params[HIDE_PARAM] = ",".join(kept)
        else:
            del st.query_params[HIDE_PARAM]
        _reseed_from_url()


def _url_value(spec: Spec) -> object:
    """The validated value the URL carries for `spec`. A bad raw value is reported (shown as plain text) and
    replaced in the address bar by the value used (a default is left out, as Streamlit does), so a copied
    link reproduces what the page shows."""
    raw = url_param(spec.key)
    if raw is None:
        return spec.default
    value, problem = parse_url_value(spec, raw)
    if problem is None:
        if raw != url_text(value):  # a number written another way (3e-4): the widget reads the canonical text
            st.query_params[spec.key] = url_text(value)
            _reseed_from_url()
        return value
    # the key and the value used are the page's own; only the raw value came from outside
    st.warning(f"URL parameter {spec.key}={plain(raw)} {problem}; using {spec.key} = {url_text(value)}.", icon="⚠️")
    if value == spec.default and spec.key not in hidden_keys():
        del st.query_params[spec.key]
    else:
        st.query_params[spec.key] = url_text(value)
    _reseed_from_url()
    return value


def _reseed_from_url() -> None:
    """Make widgets created from now on read the corrected URL.

    A bound widget takes its first value from the URL as it was when the page opened (Streamlit keeps that
    snapshot apart from st.query_params), so a corrected value written to st.query_params alone would reach
    the address bar but not the widget. Streamlit refreshes the snapshot from the current parameters itself
    after a page switch; this does the same after a correction.
    """
    from streamlit.runtime.state.session_state_proxy import get_session_state

    with get_session_state().query_params() as qp:
        qp.set_initial_query_params_from_current()


def control(spec: Spec, *, where=None, disabled: bool = False, values: dict | None = None):
    """Draw `spec` bound to the URL (or, if the link hides it, just read it) and return its value. `values`: the
    page's controls drawn so far (a Picks control reads its count and when it shows from them)."""
    if isinstance(spec, Picks):
        return _picks(spec, values or {}, where)
    if spec.key in hidden_keys():
        return _url_value(spec)
    if spec.key not in st.session_state:  # the widget reads the URL only when it is first created
        _url_value(spec)
    host = where if where is not None else st
    common = dict(key=spec.key, help=spec.help, bind="query-params", disabled=disabled)
    if isinstance(spec, Num):
        if spec.integer:
            return host.slider(spec.label, spec.lo, spec.hi, spec.default, spec.step, **common)
        return host.slider(
            spec.label, float(spec.lo), float(spec.hi), float(spec.default), float(spec.step), format=spec.fmt, **common
        )
    if isinstance(spec, Choice):
        captions = [str(spec.labels.get(o, "")) for o in spec.options] if spec.labels else None
        return host.radio(spec.label, spec.options, index=spec.options.index(spec.default), horizontal=True,
                          captions=captions, **common)
    return host.toggle(spec.label, value=spec.default, **common)


def _picks(spec: Picks, values: dict, where=None) -> list[int]:
    """Toggle buttons 1..n (st.pills, several at once), drawn only while the control it follows says so; in
    the URL once per number, as Streamlit writes it (`pick=1&pick=4`)."""
    n = int(values[spec.count])
    shown = spec.when is None or values.get(spec.when[0]) == spec.when[1]
    if not shown or spec.key in hidden_keys():
        return [i for i in spec.default if i <= n]
    host = where if where is not None else st
    picked = host.pills(spec.label, list(range(1, n + 1)), selection_mode="multi", key=spec.key,
                        default=[i for i in spec.default if i <= n], bind="query-params", help=spec.help)
    return list(picked)


def current_values(specs: list[Spec]) -> dict[str, object]:
    """Each spec's current value: a hidden control's URL value (what the page uses), else widget state, else
    the default."""
    out, hidden = {}, hidden_keys()
    for s in specs:
        if isinstance(s, Picks):
            out[s.key] = list(st.session_state.get(s.key, s.default))
        elif s.key in hidden:
            out[s.key] = _url_value(s)
        elif s.key in st.session_state:
            out[s.key] = st.session_state[s.key]
        elif s.key in st.query_params:
            out[s.key] = parse_url_value(s, st.query_params[s.key])[0]
        else:
            out[s.key] = s.default
    return out


def share_query(specs: list[Spec], values: dict[str, object], *, hide=(), classroom: bool = False) -> str:
    """The query string that reproduces `values` (defaults left out), optionally in classroom mode; a Picks
    control once per number."""
    params = []
    for s in specs:
        v = values[s.key]
        if isinstance(s, Picks):
            if list(v) != list(s.default) or s.key in hide:
                params += [(s.key, url_text(x)) for x in v]
        elif v != s.default or s.key in hide:
            params.append((s.key, url_text(v)))
    if classroom:
        params.append((CLASSROOM_PARAM, "1"))
    if hide:
        params.append((HIDE_PARAM, ",".join(hide)))
    return urlencode(params, safe=",")


def classroom_active(*, write: bool = True) -> bool:
    """Presenter mode, for the session: ?classroom=1 (or true) turns it on, ?classroom=0 off. Streamlit's navigation
    drops the query string, so a page reached through it keeps the session's mode and (`write`: a page's run, once
    its navigation is sent, not app.py's, before it) writes it back into the address bar, where the page's renderer
    reads it and a copied link carries it."""
    raw = url_param(CLASSROOM_PARAM)
    if raw is not None:
        st.session_state[CLASSROOM_KEY] = raw in ("1", "true")
    elif write and st.session_state.get(CLASSROOM_KEY):
        st.query_params[CLASSROOM_PARAM] = "1"
    return bool(st.session_state.get(CLASSROOM_KEY, False))


def classroom_link_builder(specs: list[Spec]) -> None:
    """Sidebar box: pick controls to hide, get a presenter link with the current settings."""
    with st.sidebar.expander("Share / classroom link"):
        values = current_values(specs)
        base = st.context.url or ""
        kept = tuple(s.key for s in specs if s.key in hidden_keys())  # this page's link as it is: hide kept
        st.caption("This setup, seed included, as one link:")
        this = share_query(specs, values, hide=kept, classroom=classroom_active())
        copy_text(f"{base}?{this}".rstrip("?"), key="_share_this", label="Copy this link")
        labels = {s.key: s.label for s in specs}
        hide = st.multiselect(
            "Hide these controls", [s.key for s in specs], format_func=lambda k: labels[k], key="_classroom_hide"
        )
        big = st.checkbox("Presenter mode (larger type)", value=True, key="_classroom_big")
        st.caption("Classroom link (hidden controls keep the values above):")
        copy_text(f"{base}?{share_query(specs, values, hide=tuple(hide), classroom=big)}", key="_share_classroom",
                  label="Copy the classroom link")
