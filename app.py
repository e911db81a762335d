"""GRPO Playground: `streamlit run app.py`. Navigation and the home page; each page is a thin view over sim/.

This file has two roles. `streamlit run app.py` first imports it to find the st.App at the bottom: that creates
the process's one ui.server.Server (the routes of Plotly.js and of the browser's bundle, the warm-up before the
first visitor, the gate of script runs, the TinyLM runs, the lab's sandbox). Then each session runs it as its
script (`__main__`): it hands that Server to the session (ui/host.py) and runs the navigation, whose page passes
it on to whatever needs it.
"""

import sys
from pathlib import Path

import streamlit as st

from sim.paths import ASSETS
from sim.views.catalog import PAGES, view
from ui.host import SERVER_KEY, bare_server
from ui.lesson_download import lesson_download
from ui.page import apply_style
from ui.presenter import claim
from ui.work import leave

SWITCH_INTERVAL_S = 0.001  # the server's interpreter-lock switch interval (Python's default is 0.005): see below



def pages() -> list[tuple[str, str, str]]:
    """(file, title, icon) of every page, in sim/views/catalog.py's order."""
    return [(f"pages/{p.name}.py", view(p.name).title, p.icon) for p in PAGES]


def served():
    """The Server `streamlit run` built when it imported this file (the module `app`), or a bare one for a run
    without it (AppTest of the app)."""
    served = getattr(sys.modules.get("app"), "server", None)
    return served if served is not None else bare_server()


def home() -> None:
    """The front page: sim/views/home.py's document, drawn by the renderer a lesson's contents page uses."""
    from sim.views.home import document
    from ui.view import show_doc

    server = served()
    claim(server)  # ?presenter=KEY (ui/presenter.py)
    apply_style()
    st.title("GRPO Playground", anchor=False)
    lesson_download(server)  # the sidebar's "Download this lesson", as on every page: a newcomer's offline copy
    show_doc(server, "home", document())


def navigation() -> st.navigation:
    entries = [st.Page(home, title="Home", icon=":material/home:", default=True)]
    entries += [
        st.Page(file, title=title, icon=icon, url_path=Path(file).stem)
        for file, title, icon in pages()  # a missing file fails here, loudly, rather than hiding a page
    ]
    return st.navigation(entries)


if __name__ == "__main__":  # a session's script run
    # A local icon: a ":material/...:" page icon makes every browser fetch it from fonts.gstatic.com. (In presenter
    # mode the page's script folds the navigation: assets/js/app_view.js presenter.)
    st.set_page_config(page_title="GRPO Playground", page_icon=str(ASSETS / "img" / "icon.png"), layout="wide")
    server = st.session_state[SERVER_KEY] = served()  # handed to the page (ui/host.py), which passes it on
    try:
        navigation().run()
    finally:
        # the page's place in the server's gate (ui/work.py) goes to the next. `server`, not st.session_state: read
        # there after st.stop() (TinyLM's page, trainer off) it never reached the gate, whose place stayed taken
        leave(server)
else:  # imported by the server that `streamlit run app.py` starts: warm up, then serve this file's sessions
    from ui.presenter import make_key
    from ui.server import Server

    try:
        key = make_key()
    except ValueError as e:  # GRPO_PRESENTER_KEY set wrong: one line, no traceback
        raise SystemExit(f"error: {e}") from None
    # The event loop that serves every websocket starts a thread for each script run and waits for it to start;
    # with two script threads computing, that wait is a hand-over of the interpreter lock, up to one switch
    # interval each way: measured 18.9 ms per thread start at Python's 5 ms, 4.1 ms at 1 ms (a class changing
    # 20 settings a second would block the loop 0.4 s in every second at 5 ms).
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    server = Server(gated=True, presenter_key=key)
    app = st.App("app.py", lifespan=server.lifespan, routes=server.routes())
