"""TinyLM, declared once (sim/views/doc.py): GRPO on a small transformer that learns two-digit addition. Its
trainer runs on the app's server (ui/tinylm.py); what both hosts show is the recorded part, `recorded`: both
presets' pass@k over seeds (assets/tinylm_*.json through sim/tinylm/figures.py) and the default run replayed in the
player (assets/data/tinylm_run.json). A lesson has the recorded part, computed when it is built; the controls train, so
they are the app's. The live run's charts (`metric_chart`, `passk_chart`) are this module's too, in the one chart
spec."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

from sim.player.spec import COLORS, Band, Chart, Line, rgba
from sim.settings import setting, validate
from sim.tinylm.figures import caption, load_preset_figures, load_run_record
from sim.tinylm.grpo_train import GRPOConfig
from sim.tinylm.presets import PRESET_NAMES, PRESETS
from sim.tinylm.story import StoryConfig
from sim.views.controls import Choice, Flag, Num
from sim.views.doc import Caption, Charts, Columns, Heading, Metrics, Note, Table, Text, View

K_TICKS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
CHARTS = [("reward", "pass_at_1"), ("entropy",), ("kl",), ("frac_reward_zero_std",), ("completions/mean_length",),
          ("grad_norm",), ("clip_ratio/region_mean",), ("step_time",)]  # fmt: skip


@dataclass(frozen=True)
class Page:
    """The page's own settings: the trainer switch and the preset."""

    on: bool = setting(False, "Off by default so the app stays light.", key="tinylm_on", label="Trainer on")
    preset: str = setting("default", "The two sides of the pass@k debate, one switch apart: " + "; ".join(
        f"{n}: {p.title}" for n, p in PRESETS.items()), choices=PRESET_NAMES, key="tl_preset", label="Preset")

    def __post_init__(self):
        validate(self)


ON = Flag.of(Page, "on")
PRESET = Choice.of(Page, "preset", labels={"default": "blind spot among GRPO's prompts",
                                           "chapter-lab": "blind spot left out"})
SETTINGS = (  # the trainer's settings (the sidebar shows them once the trainer is on)
    PRESET,
    Num.of(GRPOConfig, "iterations", lo=1, hi=600),
    Num.of(GRPOConfig, "prompts_per_iter", hi=64),
    Num.of(GRPOConfig, "group_size", hi=32),
    Choice.of(GRPOConfig, "lr", options=(1e-4, 3e-4, 5e-4, 1e-3, 2e-3),
              help="AdamW, after a short warmup, decayed linearly to 0"),
    Choice.of(GRPOConfig, "beta", options=(0.0, 0.001, 0.01, 0.04, 0.1),
              labels={0.0: "TRL default", 0.001: "R1-Zero", 0.04: "DeepSeekMath"}),
    Num.of(GRPOConfig, "mu", hi=4),
    Choice.of(GRPOConfig, "scale"),
    Choice.of(GRPOConfig, "baseline"),
    Choice.of(GRPOConfig, "loss_type"),
    Choice.of(GRPOConfig, "importance_sampling_level", labels={"sequence": "GSPO"}),
    Choice.of(GRPOConfig, "clip_eps", options=(3e-4, 0.1, 0.2, 0.28), labels={3e-4: "GSPO", 0.2: "TRL default"},
              help="matters only when μ > 1 (off-policy ratios)"),
    Num.of(GRPOConfig, "seed", hi=9999),
    Choice.of(StoryConfig, "eval_samples", options=(4, 8, 16, 32, 64)),
)
CONTROLS = (ON, *SETTINGS)


# ---- charts ----

def passk_chart(n: int, curves: list[tuple[str, list[float], str]], *, title: str, bands=(), height: int = 380,
                caption: str | None = None) -> Chart:
    """pass@k against log k (ticks at the powers of 2) with each curve's value marked at the largest k.
    `curves`: (name, pass@k for k = 1..n, colour); `bands`: (lower, upper, colour) shaded ranges."""
    ks = np.arange(1, n + 1, dtype=float)
    traces = [Band(np.asarray(lo, float), np.asarray(hi, float), "", x=ks, color=rgba(color, 0.2))
              for lo, hi, color in bands]
    ends = [c[-1] for _, c, _ in curves]
    for i, (name, curve, color) in enumerate(curves):
        traces.append(Line(np.asarray(curve, float), name, x=ks, reveal="full", color=color, width=3))
        other = max(ends[:i] + ends[i + 1:], default=0.0)
        above = curve[-1] > other or (curve[-1] == other and i == len(curves) - 1)  # the higher label goes on top
        traces.append(Line(np.array([curve[-1]], float), f"{name} pass@{n}", x=np.array([float(n)]), reveal="full",
                           mode="markers", size=12, symbol="diamond", color=color, showlegend=False,
                           text=(f"{name} {curve[-1]:.3f}",), text_position="top left" if above else "bottom left"))
    return Chart(title, traces, x_title="k (log scale)", y_title="pass@k", y_range=(0, 1.02), height=height,
                 x_log=True, x_ticks=tuple(k for k in K_TICKS if k <= n), caption=caption)


def gap_chart(rows: list[dict]) -> Chart:
    """GRPO's pass@k minus SFT's, one line per seed: above 0 GRPO solves more within k samples, below 0 fewer;
    where a line crosses 0 the two curves cross (the chapter's crossover k). Zoomed: at k = 1 the lines start
    far above the top (GRPO leads by ~0.3), the large-k end is what the debate is about."""
    n = len(rows[0]["pass_at_k_after"])
    ks = np.arange(1, n + 1, dtype=float)
    lines = [Line(np.subtract(r["pass_at_k_after"], r["pass_at_k_before"]), f"seed {r['seed']}", x=ks, reveal="full",
                  showlegend=False) for r in rows]
    return Chart("GRPO − SFT pass@k, per seed (zoomed)", lines, x_title="k (log scale)", y_title="difference",
                 y_range=(-0.06, 0.15), height=260, x_log=True, x_ticks=tuple(k for k in K_TICKS if k <= n),
                 hlines=((0.0, "", "dot"),))


def metric_chart(snap: dict, names: tuple[str, ...], trl: dict | None = None) -> Chart:
    """One live metric against iteration over the whole run (0 .. its iterations); with `trl` (the recorded TRL run),
    its reward and pass@1 overlaid."""
    hist = [m for m in snap["history"] if names[0] in m]  # "kl" is measured every few iterations when β = 0
    lines = [Line(np.array([m[names[0]] for m in hist], float), names[0],
                  x=np.array([m["iteration"] for m in hist], float), reveal="full", color=COLORS["main"])]
    if "pass_at_1" in names and snap["pass_at_1"]:
        pts = snap["pass_at_1"]
        lines.append(Line(np.array([p for _, p in pts], float), "held-out pass@1",
                          x=np.array([i for i, _ in pts], float), reveal="full", color=COLORS["good"], width=3))
    if trl is not None and names[0] == "reward":
        lines.append(Line(np.asarray(trl["reward"], float), "reward, TRL (recorded)",
                          x=np.asarray(trl["iterations"], float), reveal="full", color=COLORS["pin"], dash="dot"))
    if trl is not None and "pass_at_1" in names:
        lines.append(Line(np.array([p for _, p in trl["pass_at_1"]], float), "held-out pass@1, TRL (recorded)",
                          x=np.array([i for i, _ in trl["pass_at_1"]], float), reveal="full", color=COLORS["pin"],
                          width=3, dash="dash"))
    # the axis spans the whole run from its first draw, so a live chart fills in rather than rescaling, and every
    # chart covers the last iteration even where its metric is measured every few (kl with β = 0)
    end = max([float(snap["iterations"]), *(float(np.nanmax(ln.x)) for ln in lines if len(ln.x))])
    return Chart(names[0], lines, x_title="iteration", y_title=names[0], height=260, x_range=(0, end + 0.5))


# ---- the recorded part (both hosts) ----

def _table_row(r: dict) -> list:
    return [r["seed"], f"{r['pass_at_1_before']:.3f} → {r['pass_at_1_after']:.3f}",
            f"{r['pass_at_64_before']:.3f} → {r['pass_at_64_after']:.3f}",
            f"{r['never_solved_before']} → {r['never_solved_after']}",
            "none" if r["crossover_k"] is None else f"{r['crossover_k']:.1f}"]


def _preset(name: str, fig: dict) -> list:
    head = {"widened": "coverage widens", "narrowed": "coverage narrows"}.get(fig["side"], "seeds disagree")
    rows = fig["runs"]
    blocks = [Heading(f"{name}: {head}", level=3)]
    chart = None
    if fig["curves"] is not None:  # an older record has no curves
        before, after = fig["curves"]["pass_at_k_before"], fig["curves"]["pass_at_k_after"]
        chart = passk_chart(len(before["median"]), [("SFT", before["median"], COLORS["grey"]),
                                                    ("GRPO", after["median"], COLORS["main"])],
                            bands=[(before["min"], before["max"], COLORS["grey"]),
                                   (after["min"], after["max"], COLORS["main"])],
                            title=f"pass@k, median of {len(rows)} seeds (band: their range)", height=340)
        blocks.append(Charts(f"tl_rec_{name}", [chart, gap_chart(rows)]))
    before_n = statistics.median(r["never_solved_before"] for r in rows)
    after_n = statistics.median(r["never_solved_after"] for r in rows)
    blocks.append(Metrics([("Never solved: SFT", f"{before_n:g}"),
                           ("after GRPO", f"{after_n:g}", f"{after_n - before_n:+g}")]))
    seed0 = rows[0]
    if "never_solved_problems_after" in seed0:
        blocks.append(Text(f"Never solved, seed {seed0['seed']}: SFT "
                           + (", ".join(seed0["never_solved_problems_before"]) or "none") + "; GRPO "
                           + (", ".join(seed0["never_solved_problems_after"]) or "none")))
    return blocks + [Caption(caption(rows, name, chart))]  # under the charts: its pass@k read off the first


def run_charts(record: dict) -> list[Chart]:
    """The recorded default run's live metrics over its iterations, replayed by the player."""
    m, T = record["metrics"], len(record["iterations"])
    every = record["pass_at_1"][1][0] - record["pass_at_1"][0][0] if len(record["pass_at_1"]) > 1 else T

    def series(values):  # a gap where it was not logged
        return np.array([np.nan if v is None else float(v) for v in values])

    def held(checks):  # (T+1,) the value at the last check at or before each iteration (NaN before the first)
        out = np.full(T + 1, np.nan)
        for (i, v), nxt in zip(checks, [c[0] for c in checks[1:]] + [T + 1], strict=True):
            out[int(i): int(nxt)] = v
        return out

    kl = [[i, v] for i, v in zip(record["iterations"], m["kl"], strict=True) if v is not None]
    return [
        Chart("Mean reward of the sampled answers", [Line(series(m["reward"]), "reward", x0=1, color=COLORS["main"])],
              y_title="reward", y_range=(0, 1)),
        Chart(f"Held-out pass@1 (exact, checked every {every} iterations)",
              [Line(held(record["pass_at_1"]), "pass@1 at the last check", color=COLORS["good"], width=3)],
              y_title="pass@1", y_range=(0, 1)),
        Chart("Groups with zero reward std (no gradient)",
              [Line(series(m["frac_reward_zero_std"]), "frac_reward_zero_std", x0=1, color=COLORS["grey"])],
              y_title="share of groups", y_range=(0, 1)),
        Chart("Entropy and KL to the reference", [Line(series(m["entropy"]), "entropy", x0=1, color=COLORS["pin"]),
                                                  Line(held(kl), "kl (at the last check)", color=COLORS["bad"])],
              y_title="nats"),
    ]  # fmt: skip


def replay(record: dict) -> list:
    """The default run replayed, its pass@1 said once: the exact figure its chart draws, in the text and in the table's
    first row (the other rows are pass@k estimated from its samples, which at k = 1 would be a second, sampled figure
    for the same thing)."""
    T, p1 = len(record["iterations"]), record["pass_at_1"]
    b, a = record["pass_at_k_before"], record["pass_at_k_after"]
    n = min(len(b), len(a))
    rows = [["1 (exact)", f"{p1[0][1]:.3f}", f"{p1[-1][1]:.3f}"]]
    rows += [[k, f"{b[k - 1]:.3f}", f"{a[k - 1]:.3f}"] for k in (2, 4, 8, 16, 32, 64) if k <= n]
    return [
        Heading("The default run, replayed"),
        Text(f"The shipped default run (sim's trainer, seed 0), recorded with {record['command']}: {T} GRPO "
             f"iterations; held-out pass@1 {p1[0][1]:.3f} at the start, {p1[-1][1]:.3f} at iteration {p1[-1][0]}. "
             "Press Play to replay its live metrics; nothing is trained while it plays."),
        Charts("tinylm_run", run_charts(record), columns=2, T=T),
        Table("tinylm_run_passk", ["k", "SFT", "GRPO"], rows,
              title=f"This run: held-out pass@k before (SFT) and after GRPO (k ≥ 2: from {n} samples per problem)"),
    ]


def recorded(values: dict | None = None, lab=None) -> list:
    """The records, shown before anyone trains: for each preset the mean pass@k curves before and after with their
    range over seeds, the problems never solved, the side it shows and why; the per-seed tables; the default run
    replayed."""
    figs = load_preset_figures()
    if not figs:
        return [Note("The recorded runs (assets/tinylm_*.json) are missing; train a run to see pass@k.", "warning")]
    n_seeds = max(len(f["runs"]) for f in figs.values())
    doc = [
        Heading(f"Both sides of the debate, recorded: two presets, {n_seeds} GRPO seeds each"),
        Text("Same SFT checkpoint, same settings, one switch: whether GRPO's training prompts include the teacher's "
             "blind-spot problems (ripple carries such as 45+57, which SFT gets right about 2 % of the time)."),
        Columns([_preset(name, fig) for name, fig in figs.items()]),
        Columns([[Table(f"tl_seeds_{name}", ["seed", "pass@1", "pass@64", "never solved", "cross at k"],
                        [_table_row(r) for r in fig["runs"]], title=f"{name}, per seed"),
                  Caption(fig["summary"])] for name, fig in figs.items()]),
    ]
    record = load_run_record()
    return doc + (replay(record) if record is not None else [])


VIEW = View(
    "tinylm", "TinyLM: GRPO on a real model",
    intro=Text("A two-layer transformer learned two-digit addition by supervised fine-tuning on an imperfect teacher "
               "and stopped at about half right (pass@1 ≈ 0.5 at temperature 1). The teacher writes a near miss (off "
               "by 1 or 10) for 30 % of problems, and has a blind spot: when a carry ripples through the tens into "
               "the hundreds (45+57 = 102) it nearly always forgets the last carry and writes 02. So the model's most "
               "likely answer is usually right, a sample often is not, and a few problems it almost never gets right. "
               "GRPO samples a group of answers per prompt, scores them with the exact-match verifier and pushes up "
               "the answers that beat their group. Watch the reward rise and the entropy fall, then compare pass@k "
               "before and after on 300 held-out problems, and the problems that no sample solves."),
    controls=CONTROLS, show=recorded, lesson="recorded",
    what="Both sides of the pass@k debate, recorded over 5 seeds (mean pass@k before and after with its range, the "
         "problems never solved, the per-seed tables) and the default run replayed; training it needs the app.",
)  # fmt: skip
