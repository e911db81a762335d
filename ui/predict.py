"""Predict, then reveal: an exercise view asks for a guess before it shows the chapter's answer.

    from ui.predict import predict

    if predict("wasted_g8", "At p = 0.05 and G = 8, what share of groups teaches nothing?",
               answer=66, unit="%", tolerance=5, explain="p^G + (1 - p)^G = 0.95^8 + 0.05^8 = 0.66"):
        show(fig, "wasted_chart")           # the chart waits for the reveal too

Modes, chosen by the page's URL (a lecturer's link sets it):
  default      the answers are shown: the widget is one line, "Chapter's answer: ...", and returns True.
  ?predict=1   the question comes first, with a number box or a radio; the answer stays hidden until
               the student has entered a guess and pressed "Reveal"; then it shows the answer and how
               close the guess was (absolute and relative error, or right/wrong), and returns True.
               Before that it returns False, so the page can hold back its chart.

The guess lives in the session only (never in the URL), under keys starting "predict-<key>";
"Guess again" hides the answer and clears the guess. `question`, `explain` and `options` are the
page author's text (Markdown allowed); the guess is shown only as a formatted number or as one
of the author's options.
"""

from __future__ import annotations

import math
import re

import streamlit as st

from ui.controls import url_param

PREDICT_PARAM = "predict"


def predict_mode() -> bool:
    """Whether this page was opened with ?predict=1 (questions before answers)."""
    return (url_param(PREDICT_PARAM) or "").strip().lower() in ("1", "true", "yes", "on")


def _keys(key: str) -> tuple[str, str, str]:
    base = f"predict-{key}"
    return f"{base}-input", f"{base}-guess", f"{base}-revealed"


COMPACT = 1e6  # from this size on a number is shown as 1.23e+08 whatever the page's format


def _fmt(x: float, fmt: str, unit: str | None) -> str:
    """`x` in the page's format, compact when it is huge (a 1e308 guess is not 309 digits), never "-0"."""
    x = float(x) + 0.0  # -0.0 + 0.0 is 0.0
    text = fmt.format(x) if abs(x) < COMPACT else f"{x:.3g}"
    if re.fullmatch(r"-0*\.?0*%?", text):  # -0.0001 in "{:.1f}" is "-0.0"
        text = text[1:]
    return text + (unit or "")


def answer_range(answer: float, unit: str | None, lo: float | None, hi: float | None) -> tuple[float, float]:
    """The guesses a question accepts: [lo, hi] where the page gives them; a percentage lies in [0, 100];
    otherwise within 1000 times the answer's size (at least ±1000), so that no guess overflows an error."""
    span = 1000 * max(1.0, abs(float(answer)))
    low = (0.0 if unit == "%" else -span) if lo is None else float(lo)
    high = (100.0 if unit == "%" else span) if hi is None else float(hi)
    return low, high


def _rel_text(rel: float | None) -> str:
    if rel is None:
        return ""
    return f" ({rel:.0%} of the answer)" if rel < 10 else f" ({_fmt(rel, '{:.3g}', None)} times the answer)"


def _answer_text(answer, kind: str, fmt: str, unit: str | None) -> str:
    return _fmt(float(answer), fmt, unit) if kind == "number" else str(answer)


def closeness(guess: float, answer: float, tolerance: float) -> dict:
    """How far a numeric guess is from the answer: abs_err, rel_err (None when answer is 0), close (bool)."""
    abs_err = abs(guess - answer)
    rel_err = abs_err / abs(answer) if answer != 0 else None
    return {"abs_err": abs_err, "rel_err": rel_err, "close": abs_err <= tolerance}


def _default_tolerance(answer: float) -> float:
    return 0.05 * abs(answer) if answer != 0 else 0.01


def predict(
    key: str,
    question: str,
    *,
    answer,
    kind: str = "number",
    options: list[str] | tuple[str, ...] | None = None,
    tolerance: float | None = None,
    unit: str | None = None,
    explain: str | None = None,
    fmt: str = "{:.4g}",
    lo: float | None = None,
    hi: float | None = None,
) -> bool:
    """Ask `question`, reveal `answer` after a guess (in predict mode). True when the answer is shown.

    kind="number": a number box; the guess counts as close when |guess - answer| <= tolerance
    (default 5% of |answer|). kind="choice": a radio over `options`, of which `answer` is one.
    `unit` is appended to numbers ("%", " s"); `fmt` formats them; `explain` follows the answer.
    `lo`, `hi`: the values the answer can take (default `answer_range`); a guess outside them is refused
    with a message and cannot be revealed against.
    """
    if kind not in ("number", "choice"):
        raise ValueError(f"kind must be 'number' or 'choice', got {kind!r}")
    if kind == "choice" and (not options or answer not in options):
        raise ValueError(f"a choice needs options that include the answer {answer!r}")
    answer_text = _answer_text(answer, kind, fmt, unit)
    tail = f" {explain}" if explain else ""
    if not predict_mode():
        st.caption(f"**Chapter's answer:** {answer_text}.{tail}")
        return True

    input_key, guess_key, revealed_key = _keys(key)
    with st.container(border=True):
        st.markdown(f"**Predict first.** {question}")
        if st.session_state.get(revealed_key) and st.session_state.get(guess_key) is not None:
            _show_reveal(key, answer, kind, tolerance, unit, fmt, answer_text, tail)
            return True
        st.session_state[revealed_key] = False
        bounds = answer_range(answer, unit, lo, hi) if kind == "number" else None
        guess = _guess_input(input_key, guess_key, kind, options, unit, bounds, fmt)
        st.button("Reveal", key=f"predict-{key}-reveal", disabled=guess is None, on_click=_set,
                  args=(revealed_key, True), help="enter a guess first" if guess is None else None)
        st.caption("The answer (and the chart) appear once you have guessed.")
    return False


def _guess_input(input_key: str, guess_key: str, kind: str, options, unit: str | None, bounds=None,
                 fmt: str = "{:.4g}"):
    """Draw the number box or radio; keep its value under guess_key (survives leaving the page)."""
    stored = st.session_state.get(guess_key)

    def keep():
        st.session_state[guess_key] = st.session_state.get(input_key)

    if kind == "number":
        label = "Your guess" + (f" ({unit.strip()})" if unit and unit.strip() else "")
        value = stored if input_key not in st.session_state else None
        kwargs = {} if input_key in st.session_state else {"value": value}
        guess = st.number_input(label, key=input_key, placeholder="type a number", format="%g", on_change=keep,
                                **kwargs)
        if guess is not None and not (math.isfinite(guess) and bounds[0] <= guess <= bounds[1]):
            low, high = (_fmt(b, fmt, unit) for b in bounds)
            st.warning(f"A guess must be a number from {low} to {high}; {_fmt(guess, fmt, unit)} is outside that "
                       "range. Try again.", icon="⚠️")  # fmt: skip
            guess = None
    else:
        index = list(options).index(stored) if stored in options and input_key not in st.session_state else None
        kwargs = {} if input_key in st.session_state else {"index": index}
        guess = st.radio("Your answer", list(options), key=input_key, on_change=keep, **kwargs)
    st.session_state[guess_key] = guess
    return guess


def _set(state_key: str, value) -> None:
    st.session_state[state_key] = value


def _reset(key: str) -> None:
    input_key, guess_key, revealed_key = _keys(key)
    for k in (input_key, guess_key):
        st.session_state.pop(k, None)
    st.session_state[revealed_key] = False


def _show_reveal(key, answer, kind, tolerance, unit, fmt, answer_text, tail) -> None:
    guess = st.session_state[_keys(key)[1]]
    if kind == "number":
        tol = _default_tolerance(float(answer)) if tolerance is None else float(tolerance)
        c = closeness(float(guess), float(answer), tol)
        rel = _rel_text(c["rel_err"])
        verdict = "close" if c["close"] else "not within"
        line = (f"Your guess {_fmt(float(guess), fmt, unit)}, the chapter's answer **{answer_text}**: off by "
                f"{_fmt(c['abs_err'], fmt, unit)}{rel}, {verdict} ±{_fmt(tol, fmt, unit)}.")
        (st.success if c["close"] else st.warning)(line)
    else:
        right = guess == answer
        if right:
            st.success(f"Right: **{answer_text}**.")
        else:
            st.warning(f"Not quite: you picked {_option_text(guess)}; the chapter's answer is **{answer_text}**.")
    if tail:
        st.markdown(tail.strip())
    st.button("Guess again", key=f"predict-{key}-again", on_click=_reset, args=(key,))


def _option_text(option: str) -> str:
    return f"“{option}”"
