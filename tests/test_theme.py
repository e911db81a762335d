"""The app's theme meets WCAG 2 AA contrast for captions (.streamlit/config.toml [theme]).

Streamlit 1.67 draws a caption (st.caption, the captions under radio options, metric captions) in the theme's
textColor at 60% opacity (its `fadedText60`, read in its frontend bundle). The page's background is the light
theme's #ffffff and the sidebar's #f8f8f7 (Streamlit's light defaults while backgroundColor and
secondaryBackgroundColor are not set; `streamlit config show` documents both). AA asks 4.5:1 for text under
18.66 px bold / 24 px (WCAG 2.1, 1.4.3). The contrast is computed here from WCAG's definition, and checked against
the figures axe-core reported for the theme before (#7f7e7d on #f8f8f7: 3.81).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

CONFIG = Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml"
LIGHT = {"textColor": "#2f2d2b", "backgroundColor": "#ffffff"}  # Streamlit 1.67's light theme defaults
SIDEBAR_BACKGROUND = "#f8f8f7"  # the light sidebar while backgroundColor / secondaryBackgroundColor are default
CAPTION_ALPHA = 0.6  # Streamlit's fadedText60: textColor at 60% opacity
AA = 4.5


def rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    assert len(h) == 6, hex_color
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def luminance(color: tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance: each sRGB channel linearised, weighted 0.2126 R + 0.7152 G + 0.0722 B."""

    def lin(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(c) for c in color)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    """WCAG 2 contrast ratio (L1 + 0.05) / (L2 + 0.05), L1 the lighter: 1 to 21."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def over(fg, bg, alpha: float) -> tuple[int, int, int]:
    """fg at `alpha` opacity over bg, rounded to 8-bit channels as the browser paints it."""
    return tuple(round(alpha * f + (1 - alpha) * b) for f, b in zip(fg, bg, strict=True))


def theme() -> dict:
    return tomllib.loads(CONFIG.read_text(encoding="utf-8"))["theme"]


def test_contrast_against_wcag_and_axe():
    """WCAG's extremes, and the colours axe-core measured on the app before the theme set textColor."""
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((119, 119, 119), (255, 255, 255)) == pytest.approx(4.48, abs=0.01)  # #777 just fails AA
    old = rgb(LIGHT["textColor"])
    sidebar, page = rgb(SIDEBAR_BACKGROUND), rgb(LIGHT["backgroundColor"])
    assert over(old, sidebar, CAPTION_ALPHA) == rgb("#7f7e7d")  # what axe read on the sidebar
    assert over(old, page, CAPTION_ALPHA) == rgb("#828180")  # and on the page
    assert contrast(rgb("#7f7e7d"), sidebar) == pytest.approx(3.81, abs=0.01)  # axe: 3.81
    assert contrast(rgb("#828180"), page) == pytest.approx(3.88, abs=0.01)  # axe: 3.88


@pytest.mark.parametrize("where,background", [("page", LIGHT["backgroundColor"]), ("sidebar", SIDEBAR_BACKGROUND)])
def test_caption_colour_meets_aa(where, background):
    t = theme()
    assert t.get("base") == "light", "the figures here are the light theme's"
    assert "backgroundColor" not in t and "secondaryBackgroundColor" not in t, (
        "a theme that sets the backgrounds changes the sidebar's: update the backgrounds in this test")
    text, bg = rgb(t["textColor"]), rgb(background)
    caption = over(text, bg, CAPTION_ALPHA)
    assert contrast(caption, bg) >= AA, f"captions on the {where}: {contrast(caption, bg):.2f}:1 < {AA}:1"
    assert contrast(text, bg) >= 7, "body text keeps AAA contrast"


def test_the_sidebar_theme_does_not_override_the_text():
    """A [theme.sidebar] textColor would be the sidebar captions' colour instead: none is set (or it must pass)."""
    sidebar = theme().get("sidebar", {})
    if "textColor" in sidebar:
        caption = over(rgb(sidebar["textColor"]), rgb(SIDEBAR_BACKGROUND), CAPTION_ALPHA)
        assert contrast(caption, rgb(SIDEBAR_BACKGROUND)) >= AA
