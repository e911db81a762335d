"""Where the project's files are: the one place that decides, for a checkout and for an installed copy.

In a checkout everything sits in the repository root: the `sim` and `ui` packages beside app.py, pages/,
assets/, lab/ and .streamlit/. `pip install .` (pyproject.toml) puts `sim` and `ui` in site-packages as
top-level packages, as they are imported, and the app's files, which are not Python packages, in
site-packages/grpo_playground/app/ (app.py, pages/, assets/ with the vendored Plotly.js, lab/, .streamlit/).

    CODE_ROOT   the folder that holds the `sim` package (what a lab folder puts on sys.path)
    APP_ROOT    the folder that holds app.py, pages/, assets/, lab/ and .streamlit/config.toml
    ASSETS      APP_ROOT / "assets": the player's and the lesson's JS and CSS, Plotly.js, TinyLM's files
    LAB_STUBS   APP_ROOT / "lab": the chapter's lab as stubs (`python -m sim lab new` copies them)

Nothing here imports more than pathlib, so any module may use it.
"""

from __future__ import annotations

from pathlib import Path

CODE_ROOT = Path(__file__).resolve().parents[1]
_INSTALLED = CODE_ROOT / "grpo_playground" / "app"  # written by `pip install .`; absent from a checkout
APP_ROOT = _INSTALLED if (_INSTALLED / "app.py").is_file() else CODE_ROOT
APP = APP_ROOT / "app.py"
PAGES = APP_ROOT / "pages"
ASSETS = APP_ROOT / "assets"
LAB_STUBS = APP_ROOT / "lab"
