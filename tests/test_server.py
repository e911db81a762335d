"""ui/server.py: the one Server of a process (routes, navigation fix, lifespan), built by app.py and handed down
(ui/host.py), the pages that compute in the browser (no toy run on the server), the control specs' one call that
builds a config, and no mutable state at module level anywhere else in ui/, sim/ or pages/."""

from __future__ import annotations

import ast
import asyncio
import gzip
from pathlib import Path

import pytest
import streamlit
from streamlit.testing.v1 import AppTest

from sim.player.plotly_js import PLOTLY_JS
from sim.tinylm.grpo_train import GRPOConfig
from sim.toy import ToyConfig
from sim.views.catalog import NAMES
from sim.views.controls import Choice, Flag, Num, build_config, default_config, defaults
from sim.views.training import CONTROLS as TRAINING
from ui import server

ROOT = Path(__file__).resolve().parents[1]
LIVE_PAGES = ["pages/training.py", "pages/std_scaling.py", "pages/passk.py"]


# ---- declared once: a spec keeps its field, one call builds the config ----
def test_a_spec_keeps_its_config_field_and_one_call_builds_the_config():
    spec = Num.of(ToyConfig, "group_size", hi=64)
    assert (spec.config, spec.field, spec.key) == (ToyConfig, "group_size", "G")
    assert Choice.of(ToyConfig, "scale").field == "scale"
    assert Flag.of(ToyConfig, "dynamic_sampling").field == "dynamic_sampling"
    values = {**defaults(TRAINING), "G": 16.0, "eps": 0.3, "dyn": 1, "lr_w": 0.0}
    cfg = build_config(ToyConfig, TRAINING, values)
    assert (cfg.group_size, cfg.clip_eps, cfg.dynamic_sampling, cfg.lr_w) == (16, 0.3, True, 0.0)
    assert type(cfg.group_size) is int and type(cfg.dynamic_sampling) is bool  # the field's type, not the widget's
    # every spec of the page reaches its field: move each off its default and its field moves with it
    for s in TRAINING:
        if isinstance(s, Num):
            other = s.default + s.step if s.default + s.step <= s.hi else s.default - s.step
        else:
            other = not s.default if isinstance(s, Flag) else next(o for o in s.options if o != s.default)
        changed = build_config(ToyConfig, TRAINING, {**defaults(TRAINING), s.key: other})
        assert getattr(changed, s.field) == pytest.approx(other), s.key


def test_the_training_default_is_what_the_page_shows_not_the_dataclass_default():
    """The bug the warm-up had: ToyConfig(n_seeds=16) has lr_w None; the page asks for lr_w = 0.2."""
    cfg = default_config(ToyConfig, TRAINING)
    assert cfg.lr_w == 0.2 and cfg.n_seeds == 16 and cfg != ToyConfig(n_seeds=16)


def test_specs_of_two_configs_on_one_page():
    """TinyLM's page declares GRPOConfig and StoryConfig controls in one list: each call takes its own."""
    from sim.tinylm.story import StoryConfig

    mixed = [Num.of(GRPOConfig, "group_size", hi=32), Choice.of(StoryConfig, "eval_samples", options=(4, 64))]
    grpo = build_config(GRPOConfig, mixed, {"tl_G": 4, "tl_eval": 8}, threads=1)
    assert grpo.group_size == 4 and grpo.threads == 1
    assert build_config(StoryConfig, mixed, {"tl_G": 4, "tl_eval": 4}, grpo=grpo).eval_samples == 4


# ---- the pages that compute in the browser cost the server no run ----
@pytest.mark.integration
def test_a_new_setting_costs_the_server_no_toy_run(monkeypatch):
    """Training dynamics, Std scaling and pass@k send their declaration, Your prompts a config for the page to run:
    every engine entry point fails here, and the pages still run, at their defaults and at a new setting."""
    import sim.exercises
    import sim.sharpen
    import sim.toy
    import sim.toy.runs

    def refused(*a, **k):
        raise AssertionError("a page ran the toy on the server")

    for module, name in [(sim.toy, "run_toy"), (sim.toy, "expected_run"), (sim.toy.runs, "run_toy"),
                         (sim.toy.runs, "expected_run"), (sim.sharpen, "train"),
                         (sim.exercises, "std_comparison")]:
        monkeypatch.setattr(module, name, refused)
    for path, query in [("pages/training.py", {"seed": "7"}), ("pages/std_scaling.py", {"seed": "7"}),
                        ("pages/passk.py", {"sG": "16"}), ("pages/your_prompts.py", {})]:
        at = AppTest.from_file(str(ROOT / path), default_timeout=60)
        at.query_params.update(query)
        at.run()
        assert not at.exception and not at.error, (path, at.exception)
    from tests.fixtures.apptest import live_requests, report

    at = report(at, "your_prompts", seed=7)  # a setting of the toy on the pool, as the page reports it
    assert not at.exception and not at.error
    assert live_requests(at)["your_prompts"]["config"]["seed"] == 7  # sent, for the browser to run


# ---- the routes: Plotly.js and the browser's bundle ----
class Request:
    def __init__(self, encoding):
        self.headers = {"accept-encoding": encoding}


def test_routes_serve_plotly_katex_and_the_bundle_gzipped_once():
    """app.py's server serves Plotly.js, KaTeX (its CSS with the fonts inside) and the bundle of the app's renderer
    itself: compressed once, cacheable, nothing written to disk."""
    from sim.player.bundle import app_bundle, trainer_bundle
    from sim.player.katex import KATEX_CSS_NAME, KATEX_JS, KATEX_JS_NAME, katex_css

    name, raw = app_bundle()
    s = server.Server()
    assert s.plotly_url() is None and s.route_url(name) is None  # a bare server (AppTest): no route
    plotly, bundle, katex_js, katex_style, trainer, lesson, *rest = s.routes()
    assert trainer.path == s.route_url(trainer_bundle()[0])  # TinyLM's trainer, for its page only
    api, rest = rest[:4], rest[4:]
    pages, classes = rest[:len(NAMES) + 1], rest[len(NAMES) + 1:]
    assert lesson.path == s.route_url("grpo-lesson.zip") == "/assets/grpo-lesson.zip"  # ui/lesson_download.py
    assert [r.path for r in api] == [f"/api/tinylm/{a}" for a in ("start", "snapshot", "pause", "leave")]
    assert [r.path for r in pages] == ["/", *(f"/{n}" for n in NAMES)]  # ui/index_page.py
    assert classes and all(r.path.startswith(f"{s.class_api}/") for r in classes)  # ui/classroom_routes.py
    assert s.plotly_url() == plotly.path and plotly.path.startswith("/assets/plotly-")
    assert s.route_url(name) == bundle.path == f"/assets/{name}"
    assert (s.route_url(KATEX_JS_NAME), s.route_url(KATEX_CSS_NAME)) == (katex_js.path, katex_style.path)
    for route, original in ((plotly, PLOTLY_JS.read_bytes()), (bundle, raw), (katex_js, KATEX_JS.read_bytes()),
                            (trainer, trainer_bundle()[1]), (katex_style, katex_css().encode())):
        packed = asyncio.run(route.endpoint(Request("gzip, deflate, br")))
        plain = asyncio.run(route.endpoint(Request("identity")))
        assert packed.headers["content-encoding"] == "gzip" and gzip.decompress(packed.body) == original
        assert plain.body == original and "content-encoding" not in plain.headers
        assert "immutable" in packed.headers["cache-control"]
        if route not in (katex_style, trainer):  # KaTeX's fonts are woff2, the trainer's weights float32 in base64
            assert len(packed.body) < len(original) / 2
    assert plain.media_type == "text/css"


def test_pages_tell_streamlit_where_its_server_is(monkeypatch):
    """The app's own addresses get Streamlit's index.html with BACKEND_BASE_URL set, so a page opened by its address
    asks no /PAGE/_stcore/... (a 404 in every console); under server.baseUrlPath the prefix is kept. Fails when
    Streamlit's index.html or its frontend's embedding setting changes: read ui/index_page.py again then."""
    import re

    from ui import index_page

    assert streamlit.__version__ == index_page.STREAMLIT_CHECKED, "Streamlit changed: re-check ui/index_page.py"
    frontend = "".join(p.read_text(errors="ignore") for p in (Path(streamlit.__file__).parent / "static" / "static"
                                                               / "js").glob("index.*.js"))
    assert "window.__streamlit" in frontend and "get BACKEND_BASE_URL(){return" in frontend
    page = asyncio.run(index_page.index_routes(["training"])[1].endpoint(None))
    html = page.body.decode()
    assert html.startswith(index_page.streamlit_index().split("<head>")[0] + "<head><script>window.__streamlit")
    assert "BACKEND_BASE_URL: location.origin + \"/\"" in html and page.headers["cache-control"] == "no-cache"
    monkeypatch.setattr(streamlit, "get_option", lambda name: "/grpo/" if name == "server.baseUrlPath" else None)
    routes = index_page.index_routes(["training"])
    assert [r.path for r in routes] == ["/grpo/", "/grpo/training"]
    assert re.search(r'location\.origin \+ "/grpo/"', asyncio.run(routes[0].endpoint(None)).body.decode())


# ---- the navigation fix, pinned to the Streamlit it was read against ----
def test_navigation_fix_matches_this_streamlit(tmp_path, monkeypatch):
    """Fails when Streamlit changes: read PagesManager again, then update STREAMLIT_CHECKED."""
    from streamlit.runtime.pages_manager import PagesManager

    assert streamlit.__version__ == server.STREAMLIT_CHECKED, "Streamlit changed: re-check use_app_navigation()"
    (tmp_path / "pages").mkdir()
    main = tmp_path / "app.py"
    main.write_text("")
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    PagesManager(str(main))
    assert PagesManager.uses_pages_directory is True  # the v1 fallback the fix undoes: a pages/ folder is seen
    assert server.use_app_navigation() is True and PagesManager.uses_pages_directory is False
    PagesManager(str(main))  # later sessions keep it
    assert PagesManager.uses_pages_directory is False and server.use_app_navigation() is False
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    assert server.use_app_navigation() is False and PagesManager.uses_pages_directory is False  # set before any


# ---- one server per process, its lifespan ----
def test_a_server_is_handed_down_and_the_lifespan_warms(monkeypatch):
    """No module looks the server up: a page gets the Server app.py handed its session, or (a page run alone,
    AppTest) one bare Server per process; its TinyLM registry is built when a page first asks."""
    from ui import host

    bare = server.Server()
    assert bare._tinylm_registry is None  # built only when a page asks
    from sim.tinylm.job import TinyLMRuns

    first = bare.tinylm_registry  # built on first use, then the same object for every page
    assert isinstance(first, TinyLMRuns) and bare.tinylm_registry is first
    assert host.bare_server() is host.bare_server() and not hasattr(server, "current")
    registry = object()
    s = server.Server(tinylm_registry=registry)
    assert s.tinylm_registry is registry
    warmed = []
    monkeypatch.setattr(s, "warm", lambda: warmed.append(1) or 0.0)

    async def serve():
        async with s.lifespan(None) as state:
            return state == {"server": s} and warmed == [1]

    assert asyncio.run(serve())
    assert not bare.gated and server.Server(gated=True).gated  # only app.py's server gates its script runs


def test_app_builds_one_server_with_the_route(monkeypatch):
    import importlib
    import sys

    monkeypatch.syspath_prepend(str(ROOT))
    sys.modules.pop("app", None)
    try:
        app = importlib.import_module("app")
        assert app.served() is app.server and app.server.plotly_url() is not None and app.server.gated
        served = [getattr(r, "path", None) for r in app.app._user_routes]
        assert served[:len(app.server.route_paths)] == list(app.server.route_paths.values())
        i = served.index("/")
        assert served[i:i + len(NAMES) + 1] == ["/", *(f"/{n}" for n in NAMES)]  # ui/index_page.py
        assert all(p.startswith(f"{app.server.class_api}/") for p in served[i + len(NAMES) + 1:])  # class mode
    finally:
        sys.modules.pop("app", None)


def test_pages_build_configs_only_through_their_specs():
    """No hand-written mapping from widget values to config fields: a page (and ui/, which draws the pages) calls
    build_config, never a config class itself."""
    configs = {"ToyConfig", "SharpenConfig", "GRPOConfig", "StoryConfig", "SFTConfig", "ClipView", "PlanConfig",
               "DiagnoseConfig", "Tokens", "Prompt", "Samples", "Group", "Page"}
    for path in sorted([*(ROOT / "pages").glob("*.py"), *(ROOT / "ui").glob("*.py")]):
        calls = [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)]
        built = {getattr(c.func, "id", getattr(c.func, "attr", None)) for c in calls} & configs
        assert not built, f"{path.name} builds {built} by hand: use sim.views.controls.build_config"


# ---- no mutable state at module level outside ui/server.py ----
IN_WORKERS = ("sim/lab/worker.py",)  # runs inside a lab worker process (sim.runtime.procs): that process's own imports
MUTABLE_CALLS = {"dict", "list", "set", "Lock", "RLock", "Event", "Semaphore", "BoundedSemaphore", "count", "deque"}


def _module_state(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [f"global {', '.join(n.names)} (line {n.lineno})" for n in ast.walk(tree) if isinstance(n, ast.Global)]
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.List | ast.Dict | ast.Set) and not (value.elts if hasattr(value, "elts") else
                                                                      value.keys):
            found.append(f"an empty container (line {node.lineno})")
        elif isinstance(value, ast.Call):
            name = getattr(value.func, "attr", getattr(value.func, "id", ""))
            if name in MUTABLE_CALLS and not value.args:
                found.append(f"{name}() (line {node.lineno})")
    return found


@pytest.mark.parametrize("folder", ["ui", "pages", "sim"])
def test_no_mutable_state_at_module_level_outside_the_server(folder):
    bad = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel not in ("ui/server.py", *IN_WORKERS) and (state := _module_state(path)):
            bad[rel] = state
    assert not bad, f"module-level state outside ui/server.py: {bad}"


def test_the_server_runs_on_uvloop():
    """Streamlit's st.App serves through uvicorn with its default loop ("auto"), which takes uvloop when it is
    installed (requirements.txt): in a class of 200 the asyncio loop's per-message wake-ups of the event loop
    were the lecturer's wait (docs/serving.md, "Serving a class")."""
    import uvicorn

    loop = uvicorn.Config(app=None).get_loop_factory()()
    try:
        assert type(loop).__module__.startswith("uvloop"), type(loop)
    finally:
        loop.close()


@pytest.mark.integration
def test_a_server_starts_without_a_misleading_warning(tmp_path):
    """`streamlit run app.py` says nothing it should not: every file the pages load comes from the server's routes,
    so static serving is off and Streamlit has no missing static/ folder to warn about."""
    from tests.fixtures.serve import start_server

    with open(tmp_path / "server.log", "w+b") as log:
        served = start_server(log=log)
        served.stop()
        log.seek(0)
        said = log.read().decode(errors="replace")
    assert "Static file serving is enabled" not in said and "Traceback" not in said, said[-2000:]
    assert "presenter key:" in said  # the one line a lecturer needs
