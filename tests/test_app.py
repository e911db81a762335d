"""The Streamlit app under streamlit.testing.v1.AppTest: every page runs; a view the browser computes is one
component (ui/view.py) that receives its declaration and nothing computed; the server's part of those pages (the
lab's numbers with "Use my lab code", the exports) for a setting. What the page then draws is the browser's
(tests/test_views.py under node, tests/test_journeys.py in Chromium)."""

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sim.views import catalog
from sim.views.training import export
from tests.fixtures.apptest import report

ROOT = Path(__file__).resolve().parents[1]
BROWSER_VIEWS = [v.name for v in catalog.views() if v.lesson == "page"]
TIMEOUT = 60

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("full_error_details")]  # tests/conftest.py


def page(name: str, **query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=TIMEOUT)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def views(at: AppTest) -> list[dict]:
    """The data of the page's renderer components (ui/view.py), in page order."""
    from tests.fixtures.apptest import views as of

    return of(at)


def test_every_page_gives_its_place_in_the_gate_back(monkeypatch):
    """app.py's gate (ui/work.py) holds a place per script run; each run gives it back when it ends, TinyLM's page
    too, which ends in st.stop() with its trainer off (its place once stayed taken: two visits froze the server)."""
    import sys
    import types

    from ui.server import Server

    server = Server(gated=True)
    monkeypatch.setitem(sys.modules, "app", types.SimpleNamespace(server=server))  # as `streamlit run app.py`
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception and server.gate.inside == 0
    for p in ("pages/tinylm.py", "pages/tinylm.py", "pages/wasted.py", "pages/training.py"):
        at.switch_page(p).run()
        assert not at.exception, p
        assert server.gate.inside == 0 and server.gate.waiting == 0, p


def test_home_lists_every_page_and_every_exercise():
    """The front page is sim/views/home.py's document (a lesson's contents page draws the same): a link to every
    page, each exercise with the page that works it and, where it is asked first, its ?predict=1 link."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()
    assert not at.exception
    (data,) = views(at)
    assert data["mode"] == "doc"
    blocks = data["blocks"]
    links = [item for b in blocks if b["kind"] == "links" for item in b["items"]]
    assert set(catalog.NAMES) <= {link["page"] for link in links}
    questions = [a for link in links for a in link["also"] if a[0] == "as a question"]
    assert len(questions) == sum(e.question for e in catalog.EXERCISES) == 6
    assert all(q[1] == {"predict": "1"} for q in questions)
    assert any(link["before"].startswith("Exercise 15.4: std scaling") for link in links)


@pytest.mark.parametrize("name", BROWSER_VIEWS)
def test_a_view_page_sends_its_declaration_and_nothing_computed(name):
    at = page(name)
    assert not at.exception, at.exception
    assert not at.error and not at.warning
    (data,) = views(at)
    view = catalog.view(name)
    assert data["mode"] == "view" and data["manifest"] == view.manifest()
    assert data["lab"] is None and data["report"] is False and data["result"] is None and data["doc"] is None
    # a declaration, not a run; what sim read for the view's document (TinyLM's recorded runs) is the file's, the
    # same for every setting, and travels beside it
    read = data.pop("data", None)
    assert read == (view.data() if view.data is not None else None)
    assert len(json.dumps(data)) < 20_000
    assert not at.slider and not at.radio and not at.get("plotly_chart")  # the controls are the page's own


HOSTILE_QUERY = {"G": "1_6", "W": "nan", "hide": "G,<b>nope</b>", "classroom": "1", "lr": "\u202e0.5", "seed": "9e9"}


@pytest.mark.parametrize("name", catalog.NAMES)
def test_the_link_is_the_pages_to_read(name):
    """A bad value, a hidden control, markup, a bidi override or a presenter link, on every page: the server neither
    warns nor rewrites the address, and sends no document for a setting it did not hear from the page (the page
    reads its link by the one set of rules, assets/js/control_rules.js, and says what it corrects:
    tests/test_link_rules.py, tests/test_link_rules_browser.py). Presenter mode is the page's to read too
    (assets/js/app_view.js presenter: kept for the tab through the navigation, tests/test_journeys.py)."""
    at = page(name, **HOSTILE_QUERY)
    assert not at.exception and not at.warning and not at.error
    assert dict(at.query_params) == HOSTILE_QUERY
    (data,) = views(at)
    assert data["mode"] == "view" and data["doc"] is None and "classroom" not in data


def test_the_training_exports_are_the_commands_files():
    csv = export("csv", {"G": 16})
    assert csv["filename"] == "grpo_toy_history.csv" and csv["text"].splitlines()[0].startswith("iteration,")
    assert '"G": 16' in export("json", {"G": 16})["text"]
    trl = export("trl", {"G": 16, "beta": 0.04})
    assert "num_generations=16" in trl["text"] and "beta=0.04" in trl["text"] and trl["show"]
    with pytest.raises(ValueError, match="not an export"):
        export("zip", {})
    with pytest.raises(ValueError, match="not a setting of this page"):
        export("csv", {"nope": 1})


LAB = ROOT / "tests" / "fixtures" / "lab"


def _with_lab(monkeypatch, name, lab_dir, **query) -> dict:
    monkeypatch.setenv("GRPO_LAB_DIR", str(LAB / lab_dir))
    at = page(name, **query)
    at = at.toggle(key="use_lab").set_value(True).run()
    assert not at.exception
    (data,) = views(at)
    assert data["report"] is True  # the page reports its setting from now on
    at = report(at, name, **{k: _typed(name, k, v) for k, v in query.items()})
    (data,) = views(at)
    return data["lab"]


def _typed(name: str, key: str, raw: str):
    """A link's value as the page reports it (its control's type: the page read it by control_rules.js)."""
    spec = next(c for c in catalog.view(name).controls if c.key == key)
    if key == "pick":
        return [int(v) for v in raw.split(",")]
    return type(spec.default)(raw)


def test_without_the_setting_there_is_no_switch(monkeypatch):
    monkeypatch.delenv("GRPO_LAB_DIR", raising=False)
    assert not [t for t in page("one_group").toggle if t.key == "use_lab"]


def test_the_lab_numbers_for_the_links_setting(monkeypatch):
    lab = _with_lab(monkeypatch, "one_group", "correct")
    assert lab["for"]["G"] == 4 and lab["advantages"]["student"] == pytest.approx([1, -1, -1, 1], abs=1e-3)
    (ok,) = lab["slots"]["after_chart"]
    assert ok["tone"] == "success" and "group_advantages on this group" in ok["title"]
    lab = _with_lab(monkeypatch, "one_group", "wrong_std", G="6", pick="1")
    assert lab["for"]["G"] == 6 and lab["for"]["pick"] == [1]
    (bad,) = lab["slots"]["after_chart"]
    assert bad["tone"] == "warning" and "differs" in bad["title"] and "sample std" in bad["check"]
    assert "x" in [("x" if w else "o") for w in lab["advantages"]["wrong"]]


def test_the_lab_survives_a_raising_and_a_hanging_student(monkeypatch):
    lab = _with_lab(monkeypatch, "one_group", "raises")  # group_advantages raises ValueError for G > 2
    (err,) = lab["slots"]["after_chart"]
    assert err["tone"] == "error" and "(raised)" in err["title"]
    assert "groups larger than 2 are not supported yet" in err["message"]
    lab = _with_lab(monkeypatch, "kl_clip", "hangs")  # k3_kl never returns
    assert any(v["tone"] == "error" and "(timeout)" in v["title"] for v in lab["slots"]["after_kl_chart"])
    lab = _with_lab(monkeypatch, "training", "wrong_std")
    assert lab["table"] is not None and "group_advantages, tabulated for G = 8" in lab["slots"]["top"][0]["title"]
