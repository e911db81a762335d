"""Text on a page: the project's own words for st.markdown, and text from outside as plain text.

    md(caption)           # our words (a caption built from numbers) with nothing read as Markdown, HTML or LaTeX
    show_text(from_file)  # a visitor's text: st.text, invisible and bidi characters escaped
    chart_text(label)     # a visitor's text in a chart: cut, escaped, HTML-escaped (Plotly reads <b>)
"""

from __future__ import annotations

import html
import re

import streamlit as st

from sim.validate import neutral
from sim.yourdata.datafile import cell_text


def show_text(text: str) -> None:
    """Text that came from outside, as plain text (st.text), invisible characters escaped, lines kept."""
    st.text(neutral(text, keep_newlines=True))


_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>$|~#"})
_DIRECTIVE = re.compile(r":(?=\S)")  # a colon that could open :red[...], :material/x: or an :emoji:


def md(text: str) -> str:
    """The project's own words (a finding, a caption built from numbers) for st.markdown with nothing in them
    read as Markdown, HTML, LaTeX ($) or a Streamlit directive (:red[...], :material/x:, :smile:). Never for text
    from a file: that goes through show_text."""
    return _DIRECTIVE.sub(r"\:", text.translate(_MD_SPECIAL))


def chart_text(text: str, limit: int = 40) -> str:
    """A label from outside for a Plotly chart: cut, invisible characters escaped, then HTML-escaped, so that
    `<b>x</b>` is drawn as those seven characters."""
    return html.escape(cell_text(text, limit), quote=False)
