"""Where the project's files are: the one place that decides, for a checkout and for an installed copy.

In a checkout everything sits in the repository root: the `sim` and `ui` packages beside app.py, pages/,
assets/, lab/ and .streamlit/. `pip install .` (pyproject.toml) puts `sim` and `ui` in site-packages as
top-level packages, as they are imported, and the app's files, which are not Python packages, in
site-packages/grpo_playground/app/ (app.py, pages/, assets/ with the vendored Plotly.js, lab/, .streamlit/).

    CODE_ROOT   the folder that holds the `sim` package (what a lab folder puts on sys.path)
    APP_ROOT    the folder that holds app.py, pages/, assets/, lab/ and .streamlit/config.toml
    ASSETS      APP_ROOT / "assets": js/ (the browser's code), data/ (recorded runs, examples, TinyLM's checkpoint),
                vendor/ (Plotly.js, KaTeX), img/
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
JS = ASSETS / "js"  # the browser's code: plain ES modules and their CSS
DATA = ASSETS / "data"  # recorded runs, the example files, TinyLM's checkpoint
VENDOR = ASSETS / "vendor"  # Plotly.js (and the tests' axe-core), with their licences
LAB_STUBS = APP_ROOT / "lab"
