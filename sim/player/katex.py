"""KaTeX, vendored in assets/vendor/katex/ (see assets/vendor/README.md): the formulas of both hosts, typeset in the
browser. One place names the files; `katex_css()` is the CSS both hosts load, its woff2 fonts inlined as data: URLs
(a lesson opens from file://, where Chromium refuses a font from another path; the app serves the same text)."""

from __future__ import annotations

import base64
import functools
import re

from sim.paths import VENDOR

VERSION = "0.19.1"
KATEX_DIR = VENDOR / "katex"
KATEX_JS = KATEX_DIR / "katex.min.js"
KATEX_JS_NAME = f"katex-{VERSION}.min.js"  # the name the app's route and a lesson give it
KATEX_CSS_NAME = f"katex-{VERSION}.css"
# url(fonts/X.woff2) format("woff2"), then the .woff and .ttf sources of the same font
_WOFF2 = re.compile(r'url\(fonts/([\w-]+\.woff2)\) format\("woff2"\)'
                    r'(?:,url\(fonts/[\w-]+\.(?:woff|ttf)\) format\("(?:woff|truetype)"\))*')


@functools.cache
def katex_css() -> str:
    """The vendored katex.min.css with each font as its woff2 file inlined (the .woff and .ttf sources dropped)."""
    css = (KATEX_DIR / "katex.min.css").read_text(encoding="utf-8")

    def inline(m: re.Match) -> str:
        data = base64.b64encode((KATEX_DIR / "fonts" / m.group(1)).read_bytes()).decode("ascii")
        return f'url(data:font/woff2;base64,{data}) format("woff2")'

    out, n = _WOFF2.subn(inline, css)
    if n == 0 or "url(fonts/" in out:
        raise ValueError("katex.min.css names its fonts in a way sim/player/katex.py does not read")
    return out
