"""The controls of the pages whose default runs the server computes before its first visitor (ui/server.py).

They are declared here, not in the pages, because the warm-up must read them without running a page: the
page and the warm-up then build their configs from the same specs with the same call
(`ui.controls.build_config`), so the run a page asks for at its defaults is the one the server has cached
(tests/test_server.py checks the cache keys against what each page asks for).
"""

from __future__ import annotations

from sim.sharpen import SharpenConfig
from sim.toy import ToyConfig
from sim.views.training import BETA_LABELS, BETAS
from ui.controls import Choice, Flag, Num

TRAINING = [
    Num.of(ToyConfig, "group_size", "G", "Group size G", hi=64),
    Choice.of(ToyConfig, "beta", "beta", "KL coefficient β", options=BETAS, labels=BETA_LABELS),
    Choice.of(ToyConfig, "scale", "scale", "Divide the advantages by"),
    Choice.of(ToyConfig, "baseline", "baseline", "Baseline"),
    Num.of(ToyConfig, "lr", "lr", "Learning rate on each prompt's u_j", lo=0.05, hi=2.0, fmt="%.2f"),
    Num.of(ToyConfig, "lr_w", "lr_w", "Learning rate on the shared skill w", hi=2.0, default=ToyConfig().lr,
           fmt="%.2f", help="the chapter's toy moves w and u_j at the same rate; 0 switches the shared skill off"),
    Num.of(ToyConfig, "mu", "mu", "Updates per batch μ", hi=8, help="μ > 1 reuses the batch; then the clip matters"),
    Num.of(ToyConfig, "clip_eps", "eps", "Clip ε", lo=0.05, hi=0.5, fmt="%.2f"),
    Choice.of(ToyConfig, "clip_eps_high", "eps_high", "Clip ε high (CISPO: ε_max)", options=(None, 0.28, 5),
              labels={None: "= ε", 0.28: "DAPO clip-higher", 5: "CISPO's ε_max (TRL)"}),
    Choice.of(ToyConfig, "loss_type", "loss", "Policy loss", help="with μ > 1: PPO's clip silences an answer "
              "whose ratio left the range; CISPO caps its weight and keeps its gradient"),
    Flag.of(ToyConfig, "dynamic_sampling", "dyn", "Dynamic sampling (DAPO)"),
    Num.of(ToyConfig, "d_min", "d_min", "Difficulty of the easiest prompt", lo=-10.0, hi=10.0, fmt="%.1f"),
    Num.of(ToyConfig, "d_max", "d_max", "Difficulty of the hardest prompt", lo=-10.0, hi=15.0, fmt="%.1f"),
    Num.of(ToyConfig, "seed", "seed", "Seed", hi=9999),
    Num.of(ToyConfig, "n_seeds", "seeds", "Seeds in the band", hi=64, default=16),
    Num.of(ToyConfig, "iterations", "T", "Iterations", lo=50, hi=500),
]

STD_SCALING = [
    Num.of(ToyConfig, "group_size", "G", "Group size G", hi=64),
    Num.of(ToyConfig, "lr", "lr", "Learning rate with std (toy)", lo=0.05, hi=2.0, fmt="%.2f"),
    Num.of(ToyConfig, "seed", "seed", "Seed", hi=9999),
]

PASSK = [
    Num("n", "Samples per problem n", 1, 200, 64, 1),
    Num("c", "Correct samples c", 0, 200, 5, 1),
    Num("k", "k", 1, 200, 8, 1),
    Num.of(SharpenConfig, "group_size", "sG", "Sharpening toy: group size G", hi=64),
    Num.of(SharpenConfig, "iterations", "sT", "Sharpening toy: iterations", lo=20, hi=500),
    Num.of(SharpenConfig, "seed", "seed", "Seed", hi=9999),
]
