"""pages/tinylm.py under AppTest: the page is the renderer's (assets/js/page.js), as every view's is: the server sends
the view's declaration, the records the page draws and where the trainer's script and the server's runs are, and
nothing computed; no Streamlit widget, no link parsed on the server. (The page itself, training in Chromium:
tests/test_tinylm_browser.py; its document under node: tests/test_views_tinylm.py.)"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sim.views.tinylm import VIEW, data
from tests.fixtures.apptest import views

pytestmark = pytest.mark.integration

PAGE = str(Path(__file__).resolve().parents[1] / "pages" / "tinylm.py")


def test_the_page_sends_its_declaration_its_records_and_where_its_trainer_is():
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.query_params["tl_G"] = "999"  # the page reads its own link, by the rules every page reads links by
    at.run()
    assert not at.exception and not at.warning and not at.error
    (sent,) = views(at)
    assert sent["mode"] == "view" and sent["manifest"] == VIEW.manifest() and sent["manifest"]["trainer"] is True
    assert sent["data"] == json.loads(json.dumps(data()))  # the records, as plain JSON
    assert sent["tinylm_api"] == "/api/tinylm" and sent["trainer_url"] == ""  # AppTest: no route for the script
    assert not at.toggle and not at.slider and not at.radio and not at.button  # the controls are the page's own
    assert len(json.dumps(sent)) < 120_000


def test_page_defines_no_function():
    tree = ast.parse(Path(PAGE).read_text())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda, ast.AsyncFunctionDef))]
