"""The browser's second path of sim's formulas, in the fast tier: assets/js/exercises.js (One group, Wasted groups,
KL and clipping, pass@k), engine.js's closed forms (Std scaling, pass@k with known p) and numpy.js (numpy's sums and
percentiles) against sim/ and numpy on random inputs. sim/ is the reference: it computes by autograd through
sim.grpo.policy_loss where the JavaScript writes the derivative out.

Each test runs node once (tests/fixtures/node.py), about 0.2 s.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from sim import exercises as ex
from sim import kl_clip as kc
from sim import passk as pk
from sim.kl_clip import ClipView
from tests.fixtures.node import js, nd

REL = 1e-9


def close(a, b, where: str) -> None:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, (where, a.shape, b.shape)
    scale = max(float(np.max(np.abs(b))) if b.size else 0.0, 1e-12)
    assert np.all(np.abs(a - b) <= REL * scale + 1e-15), (where, a, b)


def calls(module: str, fn: str, args_list: list[list]) -> list:
    out = js([{"op": "call", "module": module, "fn": fn, "args": args} for args in args_list])
    bad = [o for o in out if isinstance(o, dict) and set(o) == {"error"}]
    assert not bad, bad[:3]
    return out


def random_rewards(rng: random.Random) -> list[float]:
    G = rng.randint(2, 12)
    r = [float(rng.random() < rng.random()) for _ in range(G)]
    return r


def test_group_summary_and_token_weights_equal_autograd():
    rng = random.Random(7)
    cases = [[1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0], [1.0] * 4, [0.0] * 5]
    cases += [random_rewards(rng) for _ in range(30)]
    settings = [(r, rng.choice(["group", "none"]), rng.choice([0, 1]), rng.choice(ex.LOSS_TYPES)) for r in cases]
    summaries = calls("exercises", "group_summary", [[r, {"scale": s, "ddof": d}] for r, s, d, _ in settings])
    for (r, s, d, _), got in zip(settings, summaries, strict=True):
        want = ex.group_summary(r, scale=s, ddof=d)
        for k in ("mean", "std_population", "loss", "grad_norm"):
            close(got[k], want[k], f"group_summary {k} {r} {s}")
        close(got["advantages"], want["advantages"], f"advantages {r} {s} {d}")
    args = []
    for r, s, d, lt in settings:
        toks = ex.group_responses(r)
        args.append([[list(t) for t in toks], r, {"loss_type": lt, "scale": s, "ddof": d,
                                                  "clip_eps_high": ex.CISPO_CAP if lt == "cispo" else None}])
    weights = calls("exercises", "per_token_weights", args)
    for (r, s, d, lt), got in zip(settings, weights, strict=True):
        want = ex.per_token_weights(ex.group_responses(r), r, loss_type=lt, scale=s, ddof=d,
                                    clip_eps_high=ex.CISPO_CAP if lt == "cispo" else None)
        close(np.concatenate(got), np.concatenate(want), f"per_token_weights {r} {lt} {s}")


def test_length_effect_and_credit_equal_sims():
    rng = random.Random(8)
    cases = [[1.0, 0.0, 0.0, 1.0]] + [random_rewards(rng) for _ in range(20)]
    toks = [[list(t) for t in ex.group_responses(r)] for r in cases]
    effects = calls("exercises", "length_effect", [[t, r, {}] for t, r in zip(toks, cases, strict=True)])
    for t, r, got in zip(toks, cases, effects, strict=True):
        want = ex.length_effect(t, r)
        if want is None:
            assert got is None, r
            continue
        assert (got["short"], got["long"], got["biased"], got["unbiased"]) == (
            want["short"], want["long"], want["biased"], want["unbiased"]), r
        close([[x["short"], x["long"]] for x in got["rows"]], [[x["short"], x["long"]] for x in want["rows"]], str(r))
    weights = [ex.per_token_weights(t, r) for t, r in zip(toks, cases, strict=True)]
    credits = calls("exercises", "credit_table", [[t, w] for t, w in zip(toks, weights, strict=True)])
    for t, w, got in zip(toks, weights, credits, strict=True):
        want = ex.credit_table(t, w)
        assert [(c["position"], c["context"], c["token"], c["count"]) for c in got] == [
            (c["position"], c["context"], c["token"], c["count"]) for c in want]
        close([c["weight"] for c in got], [c["weight"] for c in want], "credit")


def test_no_signal_and_pass_at_k_equal_sims():
    rng = random.Random(9)
    pg = [(rng.random(), rng.randint(2, 64)) for _ in range(50)] + [(0.0, 8), (1.0, 8), (0.05, 8), (0.05, 64)]
    got = calls("exercises", "p_no_signal", [[p, g] for p, g in pg])
    close(got, [float(ex.p_no_signal(p, g)) for p, g in pg], "p_no_signal")
    nck = [(n, rng.randint(0, n), rng.randint(1, n)) for n in (rng.randint(1, 200) for _ in range(60))]
    got = calls("exercises", "pass_at_k", [list(x) for x in nck])
    close(got, [float(pk.pass_at_k(n, c, k)) for n, c, k in nck], "pass_at_k")
    table = calls("exercises", "no_signal_table", [[]])[0]
    close(table["p_no_signal"], ex.no_signal_table()["p_no_signal"], "no_signal_table")


def test_closed_forms_of_the_engine_equal_sims():
    """Std scaling's mean |A| by c and its expectation over p, and pass@k with known p (engine.js)."""
    rng = random.Random(10)
    Gs = [2, 3, 8, 16, 64] + [rng.randint(2, 64) for _ in range(10)]
    scales = [rng.choice(["group", "none"]) for _ in Gs]
    got = calls("engine", "meanAbsAdvantage", [[G, {"scale": s}] for G, s in zip(Gs, scales, strict=True)])
    for G, s, g in zip(Gs, scales, got, strict=True):
        close(g, ex.mean_abs_advantage(np.arange(G + 1), G, scale=s), f"mean |A| G={G} {s}")
    ps = [rng.random() for _ in Gs]
    got = calls("engine", "expectedMeanAbsAdvantage", [[p, G, {"scale": s}] for p, G, s in zip(ps, Gs, scales,
                                                                                             strict=True)])
    close(got, [float(ex.expected_mean_abs_advantage(p, G, scale=s)) for p, G, s in zip(ps, Gs, scales, strict=True)],
          "expected mean |A|")
    pks = [(rng.random(), rng.randint(1, 64)) for _ in range(40)] + [(0.05, 64), (0.6, 64), (0.0, 3), (1.0, 3)]
    got = calls("engine", "passAtKKnownP", [list(x) for x in pks])
    close(got, [float(pk.pass_at_k_known_p(p, k)) for p, k in pks], "pass@k known p")


def random_view(rng: random.Random) -> dict:
    return {"clip_eps": round(rng.uniform(0.05, 0.5), 2), "clip_eps_high": rng.choice([None, 0.28, 0.5, 1.0]),
            "delta": round(rng.uniform(1.1, 4.0), 1), "sapo_temperature_pos": rng.choice([0.25, 1.0, 4.0, 20.0]),
            "sapo_temperature_neg": rng.choice([0.25, 1.05, 3.0])}


def test_kl_and_clip_numbers_equal_sims():
    rng = random.Random(11)
    u = np.linspace(0.05, 4.0, 400)
    (est,) = calls("exercises", "kl_estimators", [[u.tolist()]])
    want = kc.kl_estimators(u)
    for k in ("k1", "k2", "k3"):
        close(est[k], want[k], k)
    pairs = [(0.6, 0.5)] + [(round(rng.uniform(0.05, 1), 2), round(rng.uniform(0.05, 1), 2)) for _ in range(20)]
    for (pi, ref), got in zip(pairs, calls("exercises", "kl_check", [list(p) for p in pairs]), strict=True):
        want = kc.kl_check(pi, ref)
        for k in ("u", "k1", "k2", "k3", "dk3_dlogp"):
            close(got[k], want[k], f"kl_check {pi} {ref} {k}")
    rho = np.linspace(0.2, 2.5, 231)
    views = [random_view(rng) for _ in range(6)]
    for v, got in zip(views, calls("exercises", "weight_curves", [[rho.tolist(), v] for v in views]), strict=True):
        want = kc.weight_curves(rho, ClipView(**v))
        assert set(got) == set(want)
        for name in want:
            close([got[name]["pos"], got[name]["neg"]], [want[name]["pos"], want[name]["neg"]], f"{name} {v}")
    tokens = [(round(rng.uniform(0.05, 1), 2), round(rng.uniform(0.05, 1), 2)) for _ in views]
    got = calls("exercises", "chapter_token", [[v, a, b] for v, (a, b) in zip(views, tokens, strict=True)])
    for v, (a, b), g in zip(views, tokens, got, strict=True):
        want = kc.chapter_token(ClipView(**v), a, b)
        close([g["ratio"], g["sequence_ratio"]], [want["ratio"], want["sequence_ratio"]], "chapter_token")
        close([[g["weights"][n]["pos"], g["weights"][n]["neg"]] for n in want["weights"]],
              [[want["weights"][n]["pos"], want["weights"][n]["neg"]] for n in want["weights"]], "token weights")


def test_kl_monte_carlo_draws_sims_samples():
    """The same portable generator (sim/rng.py), so the same token counts and the same estimates."""
    sizes = [1, 4, 16, 100]
    for pi, ref in ((0.6, 0.5), (0.9, 0.3)):
        (got,) = calls("exercises", "kl_monte_carlo", [[[pi, 1 - pi], [ref, 1 - ref], sizes, {"repeats": 50}]])
        want = kc.kl_monte_carlo([pi, 1 - pi], [ref, 1 - ref], sizes, repeats=50)
        close(got["exact"], want["exact"], "exact")
        for k in ("k1", "k2", "k3"):
            for stat in ("mean", "std", "lo", "hi", "frac_negative"):
                close(got[k][stat], want[k][stat], f"{k} {stat} {pi}")


# ---- numpy.js: the arithmetic the words rely on ----
def test_numpy_js_means_and_percentiles_are_numpys_to_the_last_bit():
    rng = np.random.default_rng(3)
    rows = [rng.random((int(rng.integers(1, 70)), int(rng.integers(1, 70)))) for _ in range(8)]
    out = js([{"op": "call", "module": "numpy", "fn": "percentileRows", "args": [nd(x), q]} for x in rows
              for q in (10.0, 50.0, 90.0)]
             + [{"op": "call", "module": "numpy", "fn": "mean", "args": [x.ravel().tolist()]} for x in rows])
    want = [np.percentile(x, q, axis=1) for x in rows for q in (10.0, 50.0, 90.0)] + [x.ravel().mean() for x in rows]
    for g, w in zip(out, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g, dtype=float), np.asarray(w, dtype=float))


@pytest.mark.parametrize("fn", ["kl_estimators", "kl_check"])
def test_k3_is_never_negative_in_the_browser_either(fn):
    """k3 = u - log u - 1 written as expm1(d) - d: at d = -1.04e-16 the naive exp(d) - d - 1 is -1.1e-16."""
    d = np.array([-1.04e-16, 1e-17, -3e-9, 5e-12, 0.0, -1e-300])
    if fn == "kl_estimators":
        (got,) = js([{"op": "call", "module": "exercises", "fn": fn, "args": [np.exp(d).tolist()]}])
        assert min(got["k3"]) >= 0
    else:
        got = js([{"op": "call", "module": "exercises", "fn": fn, "args": [1.0, float(np.exp(x))]} for x in d])
        assert min(g["k3"] for g in got) >= 0
