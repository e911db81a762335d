"""Training dynamics with mu > 1: the clip-higher and CISPO controls reach the config the page sends, and the
caption for that config (sim/views, which the browser's assets/js/toy_views.js equals) compares the run with PPO's
clip, checked against the runs of those settings (AppTest, no browser)."""

import dataclasses
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sim.toy import ToyConfig, clip_summary, run_toy
from sim.views.training import captions
from tests.fixtures.apptest import live_requests

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]


def heat_caption(**query) -> str:
    at = AppTest.from_file(str(ROOT / "pages/training.py"), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    cfg = ToyConfig(**live_requests(at)["training"]["config"])
    ppo_cfg = dataclasses.replace(cfg, loss_type="grpo", clip_eps_high=None)  # as the browser does (view_runs.js)
    ppo = run_toy(ppo_cfg) if cfg.mu > 1 and ppo_cfg != cfg else None
    return captions(cfg, run_toy(cfg), ppo)["heat"]


def test_cispo_caption_states_the_run_and_ppo_at_the_same_setting():
    """The preset "μ = 8, lr 2" with CISPO (ε_max 5): the hardest prompt learns sooner than under PPO's clip,
    which silences answers that CISPO keeps; the caption's numbers are those of the two runs."""
    base = dict(n_seeds=16, lr_w=0.2, mu=8, lr=2.0)
    cispo, ppo = run_toy(ToyConfig(**base, loss_type="cispo", clip_eps_high=5.0)), run_toy(ToyConfig(**base))
    mine, theirs = clip_summary(cispo, 0.1), clip_summary(ppo, 0.1)
    assert theirs["clip"] > 0.001 and theirs["hard_at"] > mine["hard_at"]  # 27 vs 16 iterations today
    text = heat_caption(mu="8", lr="2", loss="cispo", eps_high="5")
    assert f"CISPO (ε_max = 5) capped the weight of {mine['clip']:.2%}" in text
    assert f"passes p = 0.1 at iteration {mine['hard_at']}" in text
    assert f"silenced {theirs['clip']:.2%} ({theirs['peak']:.1%} at most)" in text
    assert f"passed at iteration {theirs['hard_at']}" in text


def test_default_setting_has_no_clip_caption():
    assert "reuses each batch" not in heat_caption()
