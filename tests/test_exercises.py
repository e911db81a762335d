"""Exercise closed forms against the chapter's printed numbers, brute force and closed forms."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from sim.exercises import (
    WORKED_EXAMPLE_REWARDS,
    WORKED_EXAMPLE_TOKENS,
    credit_table,
    expected_mean_abs_advantage,
    first_step_size,
    group_responses,
    group_summary,
    matched_lr,
    mean_abs_advantage,
    no_signal_table,
    p_no_signal,
    per_token_weights,
    std_comparison,
)


def test_p_no_signal_chapter_numbers():
    # G = 8:  1 - 0.95^8 - 0.05^8 = 1 - 0.663420 - 3.9e-11 = 0.336580  ("34% of the time")
    assert 1 - p_no_signal(0.05, 8) == pytest.approx(0.336580, abs=1e-6)
    # G = 64: 1 - 0.95^64 - 0.05^64 = 1 - 0.037524 = 0.962476        ("96% of the time")
    assert 1 - p_no_signal(0.05, 64) == pytest.approx(0.962476, abs=1e-6)


def test_p_no_signal_brute_force_over_outcomes():
    # Enumerate all 2^G reward vectors, add the probability of those with no spread.
    for p, G in [(0.05, 4), (0.3, 6), (0.9, 8)]:
        total = 0.0
        for rewards in itertools.product([0, 1], repeat=G):
            if len(set(rewards)) == 1:
                total += np.prod([p if r else 1 - p for r in rewards])
        assert p_no_signal(p, G) == pytest.approx(total, abs=1e-12)


def test_no_signal_table_shape_values_and_symmetry():
    t = no_signal_table()
    assert t["p_no_signal"].shape == (len(t["p"]), len(t["group_size"]))
    i, j = list(t["p"]).index(0.05), list(t["group_size"]).index(8)
    assert t["p_signal"][i, j] == pytest.approx(0.336580, abs=1e-6)
    np.testing.assert_allclose(t["p_signal"] + t["p_no_signal"], 1.0)
    # p and 1 - p teach nothing equally often (too hard and too easy are mirror images)
    np.testing.assert_allclose(t["p_no_signal"], t["p_no_signal"][::-1])
    assert np.all(np.diff(t["p_no_signal"], axis=1) <= 0)  # bigger G never hurts
    with pytest.raises(ValueError, match="ps"):
        no_signal_table(ps=[1.2])
    with pytest.raises(ValueError, match="group_sizes"):
        no_signal_table(group_sizes=[0])


def test_mean_abs_advantage_chapter_numbers():
    # 1 of 8: q = 1/8, sigma = sqrt(1/8 * 7/8) = 0.33072; |A| = 0.875/0.33072 = 2.6458 once and
    #   0.125/0.33072 = 0.37796 seven times: (2.6458 + 7 * 0.37796) / 8 = 0.6614  -> "0.66"
    assert mean_abs_advantage(1, 8) == pytest.approx(0.6614, abs=1e-3)
    # 4 of 8: sigma = 0.5, every |A| = 0.5/0.5 = 1                                  -> "1.0"
    assert mean_abs_advantage(4, 8) == pytest.approx(1.0, abs=1e-3)
    # without std: (0.875 + 7 * 0.125) / 8 = 1.75/8 = 0.21875 -> "0.22"; 4 of 8: 0.5
    assert mean_abs_advantage(1, 8, scale="none") == pytest.approx(0.21875, abs=1e-12)
    assert mean_abs_advantage(4, 8, scale="none") == pytest.approx(0.5, abs=1e-12)


def test_mean_abs_advantage_equals_closed_form():
    G = 8
    c = np.arange(G + 1)
    q = c / G
    sigma = np.sqrt(q * (1 - q))
    np.testing.assert_allclose(mean_abs_advantage(c, G, scale="none"), 2 * q * (1 - q), atol=1e-12)
    np.testing.assert_allclose(mean_abs_advantage(c, G, eps=0.0), 2 * sigma, atol=1e-12)  # 0 at c = 0, G
    # TRL's sample std (ddof=1) divides by a larger std: smaller |A|
    assert mean_abs_advantage(1, G, ddof=1) < mean_abs_advantage(1, G)


def test_expected_mean_abs_advantage_matches_sum_over_outcomes():
    p, G = 0.3, 5
    total = 0.0
    for rewards in itertools.product([0, 1], repeat=G):
        prob = np.prod([p if r else 1 - p for r in rewards])
        total += prob * mean_abs_advantage(sum(rewards), G)
    assert expected_mean_abs_advantage(p, G) == pytest.approx(total, abs=1e-12)
    assert expected_mean_abs_advantage([0.0, 1.0], G).tolist() == [0.0, 0.0]


def test_bad_group_inputs():
    with pytest.raises(ValueError, match="num_correct"):
        mean_abs_advantage(9, 8)
    with pytest.raises(ValueError, match="group_size"):
        mean_abs_advantage(1, 0)
    with pytest.raises(ValueError, match="p must"):
        expected_mean_abs_advantage(-0.1, 8)


def test_worked_example_per_token_weights():
    # rewards 1, 0, 0, 1: mean 0.5, std 0.5, A = +1, -1, -1, +1 (eps = 0 for exact fractions)
    # lengths 3, 3, 4, 3, G = 4: weights +1/(4*3), -1/(4*3), -1/(4*4), +1/(4*3) = +1/12, -1/12, -1/16, +1/12
    w = per_token_weights(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS, eps=0.0)
    expected = [[1 / 12] * 3, [-1 / 12] * 3, [-1 / 16] * 4, [1 / 12] * 3]
    for got, want in zip(w, expected, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-15)
    # default eps = 1e-4: A = 0.5/0.5001 = 0.9998, so -1/16 = -0.0625 (printed -0.063) moves by 1e-5
    w = per_token_weights(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS)
    assert w[2][0] == pytest.approx(-1 / 16, abs=2e-5) and w[1][0] == pytest.approx(-0.083, abs=5e-4)


def test_worked_example_credit_table():
    w = per_token_weights(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS, eps=0.0)
    rows = {(r["context"], r["token"]): r for r in credit_table(WORKED_EXAMPLE_TOKENS, w)}
    # after "=" (every response's first token): "8" collects +1/12 + 1/12 - 1/16 = 5/48 = 0.1042 ~= +0.10
    assert rows[("=", "8")]["weight"] == pytest.approx(float(Fraction(1, 12) * 2 - Fraction(1, 16)), abs=1e-15)
    assert rows[("=", "8")]["weight"] == pytest.approx(0.10, abs=5e-3) and rows[("=", "8")]["count"] == 3
    # "7" collects -1/12 = -0.0833 ~= -0.083
    assert rows[("=", "7")]["weight"] == pytest.approx(-0.083, abs=5e-4) and rows[("=", "7")]["count"] == 1
    # later tokens are added up only where they follow the same prefix: "5" after "8" (85 twice) collects
    # +2/12, "5" after "7" (75) -1/12 -- not one "5" at position 1 worth +1/12, which mixed two contexts
    assert rows[("= 8", "5")]["weight"] == pytest.approx(2 / 12, abs=1e-15) and rows[("= 8", "5")]["count"] == 2
    assert rows[("= 7", "5")]["weight"] == pytest.approx(-1 / 12, abs=1e-15)
    assert rows[("= 8", "1")]["weight"] == pytest.approx(-1 / 16, abs=1e-15)
    assert rows[("= 8 1 5", "<eos>")]["weight"] == pytest.approx(-1 / 16, abs=1e-15)
    # every response's weights sum to A_i / G, so the whole table sums to sum(A)/G = 0
    assert sum(r["weight"] for r in rows.values()) == pytest.approx(0.0, abs=1e-15)
    positions = [r["position"] for r in credit_table(WORKED_EXAMPLE_TOKENS, w)]
    assert positions == sorted(positions)


@pytest.mark.parametrize("loss_type, short, long", [
    ("grpo", -1 / 12, -1 / 16),  # the chapter's -0.083 vs -0.063: length bias
    ("bnpo", -1 / 13, -1 / 13),  # 13 tokens in the group: every token the same
    ("dapo", -1 / 13, -1 / 13),
    ("dr_grpo", -1 / 16, -1 / 16),  # G * L = 4 * 4
])
def test_length_bias_by_loss_type(loss_type, short, long):
    """The short (7 5 <eos>) and the long (8 1 5 <eos>) wrong answer, per token, under each aggregation."""
    w = per_token_weights(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS, loss_type=loss_type, eps=0.0)
    assert w[1] == pytest.approx([short] * 3, abs=1e-15) and w[2] == pytest.approx([long] * 4, abs=1e-15)
    # grpo: each response's weights sum to A_i / G, so the group's sum to 0; a token mean gives each
    # response weight in proportion to its length: (3 - 3 - 4 + 3) / 13 = -1/13 under dapo
    total = {"grpo": 0.0, "bnpo": -1 / 13, "dapo": -1 / 13, "dr_grpo": -1 / 16}[loss_type]
    assert sum(map(sum, w)) == pytest.approx(total, abs=1e-15)


def test_group_responses_reproduce_the_chapter_and_extend_it():
    assert group_responses(WORKED_EXAMPLE_REWARDS) == list(WORKED_EXAMPLE_TOKENS)
    answers = group_responses([0, 1, 0, 0, 0, 0, 0, 0, 1])
    assert answers[1] == answers[8] == ("8", "5", "<eos>")
    assert len({a for a in answers if a != ("8", "5", "<eos>")}) == 6  # six different near misses, then repeats


def test_per_token_weights_bad_input():
    with pytest.raises(ValueError, match="rewards"):
        per_token_weights([["a"], ["b"]], [1.0])
    with pytest.raises(ValueError, match="tokens"):
        per_token_weights([["a"], []], [1.0, 0.0])
    with pytest.raises(ValueError, match="weights"):
        credit_table([["a", "b"]], [[0.1]])


# ---- one group (the worked example)


def test_worked_group_one_zero_zero_one():
    # rewards 1,0,0,1: mean 0.5, population std 0.5 -> A = +-1 (up to eps = 1e-4); sample std sqrt(1/3) = 0.577
    g = group_summary([1, 0, 0, 1])
    assert g["mean"] == 0.5 and g["std_population"] == 0.5
    assert g["std_sample"] == pytest.approx(0.57735, abs=1e-5)
    np.testing.assert_allclose(g["advantages"], [1, -1, -1, 1], atol=1e-3)
    # TRL's sample std: 0.5 / 0.57735 = 0.866
    np.testing.assert_allclose(
        group_summary([1, 0, 0, 1], ddof=1)["advantages"], [0.866, -0.866, -0.866, 0.866], atol=1e-3
    )


def test_loss_reads_zero_while_gradient_does_not():
    # 1,0,0,0: std sqrt(0.25*0.75) = 0.433; A = 0.75/0.433 = 1.732 and -0.25/0.433 = -0.577
    g = group_summary([1, 0, 0, 0])
    np.testing.assert_allclose(g["advantages"], [1.732, -0.577, -0.577, -0.577], atol=1e-3)
    assert abs(g["loss"]) < 1e-12
    # d loss / d logp_i = -A_i / G  ->  norm = sqrt(sum A^2) / G = sqrt(G) / G = 0.5 (squares of A sum to G)
    assert g["grad_norm"] == pytest.approx(0.5, abs=1e-3)
    # all-equal group: zero advantages and zero gradient
    flat = group_summary([1, 1, 1, 1])
    assert flat["grad_norm"] == 0.0 and np.all(flat["advantages"] == 0)
    # without std the gradient norm shrinks to sqrt(0.75^2 + 3 * 0.25^2) / 4 = 0.2165
    assert group_summary([1, 0, 0, 0], scale="none")["grad_norm"] == pytest.approx(0.2165, abs=1e-4)


def test_first_step_size_and_matched_lr():
    """The default toy's first batch has E[mean |A|] 0.394 with std and 0.168 without (the issue: 0.39, 0.16);
    checked against the exact average run's own first-iteration metric."""
    from sim.toy import ToyConfig, expected_run

    with_std, without = ToyConfig(iterations=1), ToyConfig(iterations=1, scale="none")
    for cfg in (with_std, without):
        assert first_step_size(cfg) == pytest.approx(cfg.lr * expected_run(cfg).metrics["mean_abs_adv"][0, 0],
                                                     rel=1e-9)
    assert first_step_size(with_std) / 0.2 == pytest.approx(0.394, abs=0.001)
    assert first_step_size(without) / 0.2 == pytest.approx(0.168, abs=0.001)
    lr = matched_lr(with_std, "none")  # 0.2 * 0.394 / 0.168 = 0.47
    assert lr == pytest.approx(0.47, abs=0.001)
    assert first_step_size(ToyConfig(scale="none", lr=lr)) == pytest.approx(first_step_size(with_std), rel=1e-12)


def test_std_comparison_runs_the_three_configs():
    """Exercise 15.4's three runs: without std at the same lr the first step is 0.168 / 0.394 of the run with std,
    and the hardest prompt never passes 0.1 in 200 iterations; at matched_lr (the same first step) it passes it
    within a few iterations of the run with std (116 here): the step size, not the weighting, made the difference.
    Each run's curves are its seeds' means; hard_starts is the first iteration past the level."""
    from sim.toy import ToyConfig, run_toy

    with_std = ToyConfig(n_seeds=4)
    runs = std_comparison(with_std, 0.1)
    std, same_lr, same_step = runs["with std"], runs["without std, same lr"], runs["without std, same first step"]
    assert std["lr"] == same_lr["lr"] == 0.2 and same_step["lr"] == pytest.approx(0.47, abs=0.001)
    assert same_lr["step"] / std["step"] == pytest.approx(0.168 / 0.394, abs=0.002)
    assert same_step["step"] == pytest.approx(std["step"], rel=1e-12)
    h = run_toy(ToyConfig(n_seeds=4, scale="none", lr=same_step["lr"]))
    np.testing.assert_array_equal(same_step["accuracy"], h.accuracy.mean(axis=1))
    np.testing.assert_array_equal(same_step["hard"], h.p[:, :, -1].mean(axis=1))
    assert same_lr["hard_starts"] is None and same_lr["hard"].max() <= 0.1
    assert abs(std["hard_starts"] - same_step["hard_starts"]) <= 5
    for run in (std, same_step):
        assert run["hard"][run["hard_starts"]] > 0.1 >= run["hard"][: run["hard_starts"]].max()


def test_length_effect_for_every_loss_type_on_the_chapters_group():
    from sim.exercises import length_effect

    e = length_effect(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS, eps=0.0)
    rows = {r["loss_type"]: (r["short"], r["long"]) for r in e["rows"]}
    # 75 (3 tokens) and 815 (4 tokens), both A = -1: grpo -1/12 vs -1/16 (the chapter's -0.083 vs -0.063)
    assert rows["grpo"] == pytest.approx((-1 / 12, -1 / 16)) and rows["sapo"] == rows["grpo"]  # gate 1 at ratio 1
    # one mean over the 13 tokens (dapo, bnpo; cispo with cap 5 and vespo's phi(1) = 1 weigh the same)
    for lt in ("bnpo", "dapo", "cispo", "vespo"):
        assert rows[lt] == pytest.approx((-1 / 13, -1 / 13)), lt
    assert rows["dr_grpo"] == pytest.approx((-1 / 16, -1 / 16))  # G * L = 4 * 4
    assert rows["luspo"] == pytest.approx((-1 / 4, -1 / 4))  # A / G: a sum per answer
    assert e["biased"] == ["grpo", "sapo"] and len(e["unbiased"]) == 6
    assert length_effect([("8", "5"), ("7", "5")], [1.0, 0.0]) is None  # only one wrong answer


def test_cispo_weights_follow_trls_cap_rule():
    # TRL's cap is clip_eps_high itself; unset it is clip_eps = 0.2, so every weight at ratio 1 is 0.2 x dapo's
    dapo = per_token_weights(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS, loss_type="dapo", eps=0.0)
    unset = per_token_weights(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS, loss_type="cispo", eps=0.0)
    capped = per_token_weights(WORKED_EXAMPLE_TOKENS, WORKED_EXAMPLE_REWARDS, loss_type="cispo", eps=0.0,
                               clip_eps_high=5.0)
    assert unset[1][0] == pytest.approx(0.2 * dapo[1][0])
    assert [w for ws in capped for w in ws] == pytest.approx([w for ws in dapo for w in ws])
