"""Test app for the browser player (assets/js/player.js) as the app's renderer draws a document the server computed
(ui/view.py show_doc): the Training page's five charts on a real toy run, replayed over its iterations.

`python -m streamlit run tests/apps/player_app.py` from the repository root. G and T sliders change the setting
(new data for the same player); `?T=500&S=64` sets the first T and the seeds, `?classroom=1` presenter mode.

Like app.py, `streamlit run` first imports this file to find its st.App, which builds the process's Server with
the routes of the renderer's bundle, Plotly.js and KaTeX; each session then runs it as its script and hands that
Server to the page (ui/host.py).
"""

import sys
from pathlib import Path

import numpy as np
import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sim.player.spec import Band, Bars, Chart, Heatmap, Line  # noqa: E402
from sim.toy import ToyConfig, expected_run, gave_signal, run_toy, seed_band  # noqa: E402
from sim.views.doc import Charts  # noqa: E402
from ui.host import SERVER_KEY, bare_server, page_server  # noqa: E402

BLUE, ORANGE, GREEN, RED, GREY = "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#7f7f7f"


def query_int(name: str, default: int, lo: int, hi: int) -> int:
    try:
        return min(max(int(st.query_params.get(name, default)), lo), hi)
    except ValueError:
        return default


@st.cache_data(max_entries=8, show_spinner=False)
def simulate(cfg: ToyConfig):
    return run_toy(cfg), expected_run(cfg)


def charts_for(cfg: ToyConfig, run, exp) -> list[Chart]:
    T, G = cfg.iterations, cfg.group_size
    band = seed_band(run.accuracy)  # (T+1,) each
    signal = gave_signal(run.counts[:, 0], G).astype(np.uint8)  # (T, P)
    # the last iteration has no group drawn: colour it by whether a group would likely teach (0.05 < p < 0.95)
    p_last = run.p[T, 0]
    signal = np.vstack([signal, ((p_last > 0.05) & (p_last < 0.95)).astype(np.uint8)])  # (T+1, P)
    return [
        Chart(f"Mean accuracy over the 24 prompts (G = {G})", [
            Band(band["lo"], band["hi"], f"10–90% of {cfg.n_seeds} seeds"),
            Line(band["mean"], "mean of seeds", color=BLUE, width=3),
            Line(exp.accuracy[:, 0], "expected (exact)", reveal="full", color="black", dash="dash"),
        ], y_title="accuracy", y_range=(0, 1), caption="The band is the spread over seeds."),
        Chart(f"Groups with zero gradient (G = {G})", [
            Line(run.metrics["frac_all_wrong"].mean(axis=1), "all wrong", x0=1, stackgroup="z", color=RED),
            Line(run.metrics["frac_all_correct"].mean(axis=1), "all correct", x0=1, stackgroup="z", color=GREEN),
            Line(exp.metrics["expected_zero_frac"][:, 0], "expected", x0=1, reveal="full", color="black", dash="dash"),
        ], y_title="fraction of groups", y_range=(0, 1)),
        Chart("Each prompt's p_j at iteration {t}", [
            Bars(run.p[:, 0], categories=signal, colors=(GREY, BLUE), names=("no signal", "signal")),
        ], x_title="prompt j (easy → hard)", y_title="p_j", y_range=(0, 1)),
        Chart("p_j over time: hard prompts wait", [Heatmap(run.p[:, 0], colorbar_title="p_j")],
              y_title="prompt j"),
        Chart("KL to the reference and entropy", [
            Line(run.kl_exact.mean(axis=1), "KL(π ‖ π_ref)", color=BLUE),
            Line(run.entropy.mean(axis=1), "entropy", color=GREEN),
        ], y_title="nats", span=2, height=300),
    ]  # fmt: skip


def page(server) -> None:
    from ui.view import show_doc

    st.set_page_config(layout="wide")
    st.title("Player test app")
    G = st.slider("Group size G", 2, 64, 8, key="G")
    T = st.slider("Iterations T", 10, 1000, query_int("T", 200, 10, 1000), 10, key="T")
    S = query_int("S", 16, 1, 64)
    cfg = ToyConfig(group_size=G, iterations=T, n_seeds=S, seed=0)
    run, exp = simulate(cfg)
    # `?classroom=1` is read by the page's own script (assets/js/app_view.js), as on every page
    show_doc(server, "toy", [Charts("toy", charts_for(cfg, run, exp), columns=2, T=T)])


if __name__ == "__main__":  # a session's script run: the Server the st.App below built (a bare one without it)
    served = getattr(sys.modules.get("player_app"), "server", None)
    st.session_state[SERVER_KEY] = served if served is not None else bare_server()
    page(page_server())
else:  # imported by `streamlit run`, as app.py is: the routes of the bundle, Plotly.js and KaTeX
    from ui.server import Server

    server = Server()
    app = st.App(__file__, routes=server.routes())
