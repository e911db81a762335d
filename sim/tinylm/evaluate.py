"""Held-out evaluation: exact pass@1, sampled correct counts, and pass@k curves.

pass@1 at temperature 1 is the probability that one sample is right. For one problem it is
pi(answer | prompt) = exp(sum_t log pi(y_t | prompt, y_<t)) over the answer's digits and <eos>:
`expected_pass_at_1` computes that exactly in one forward pass (tested equal, within sampling
error, to the fraction of correct samples).

pass@k comes from the correct counts c of n samples per problem through the unbiased estimator in
sim/passk.py.
"""

from __future__ import annotations

import numpy as np
import torch

from sim.passk import crossover_k, mean_pass_at_k
from sim.tinylm.data import answer_tokens, prompt_tokens, rewards
from sim.tinylm.model import TinyLM, generate, response_logprobs
from sim.tinylm.sampling import eval_uniforms
from sim.tinylm.tokens import PAD


@torch.no_grad()
def answer_probability(model: TinyLM, problems: np.ndarray) -> torch.Tensor:
    """(P, 2) problems -> (P,) probability that one temperature-1 sample is exactly the answer."""
    targets = answer_tokens(problems)  # (P, 4) digits, <eos>, <pad>
    mask = targets != PAD
    logp, _ = response_logprobs(model, prompt_tokens(problems), targets.masked_fill(~mask, 0))
    return (logp * mask).sum(dim=1).exp()


def expected_pass_at_1(model: TinyLM, problems: np.ndarray) -> float:
    """Exact mean pass@1 at temperature 1 over `problems`."""
    return float(answer_probability(model, problems).mean())


@torch.no_grad()
def sample_correct_counts(
    model: TinyLM,
    problems: np.ndarray,
    n: int,
    generator: torch.Generator | torch.Tensor,
    *,
    temperature: float = 1.0,
    batch_size: int = 8192,
) -> np.ndarray:
    """Sample n responses per problem; return the number correct per problem, shape (P,). `generator`: torch's, or
    the (P*n, 4) uniforms of the problem-major rows (sim/tinylm/sampling.py: eval_uniforms)."""
    if n < 1:
        raise ValueError(f"n (samples per problem) must be >= 1, got {n}")
    rep = np.repeat(problems, n, axis=0)  # (P*n, 2), problem-major
    prompts = prompt_tokens(rep)
    correct = torch.empty(len(rep))
    for s in range(0, len(rep), batch_size):
        draws = generator if isinstance(generator, torch.Generator) else generator[s : s + batch_size]
        resp = generate(model, prompts[s : s + batch_size], draws, temperature=temperature)
        correct[s : s + batch_size] = rewards(resp, rep[s : s + batch_size])
    return correct.view(len(problems), n).sum(dim=1).long().numpy()


def passk_eval(model: TinyLM, problems: np.ndarray, n: int = 64, seed: int = 0, batch_size: int = 8192,
               rng: str = "torch") -> dict:
    """Sample n responses per problem and summarise: counts, pass@k curve for k = 1..n, never solved. rng: "torch"
    (torch's generator seeded with `seed`) or "philox" (sim/tinylm/sampling.py's stream, the browser's).

    Returns {"n", "correct" (P,) ints, "pass_at_k" (n,) with pass_at_k[k-1] = pass@k,
    "pass_at_1" (fraction of correct samples), "never_solved" (problems with c = 0)}.
    """
    draws = torch.Generator().manual_seed(seed) if rng == "torch" else eval_uniforms(seed, len(problems), n)
    c = sample_correct_counts(model, problems, n, draws, batch_size=batch_size)
    curve = mean_pass_at_k(n, c)  # (n,)
    return {
        "n": n,
        "correct": c,
        "pass_at_k": curve,
        "pass_at_1": float(curve[0]),
        "never_solved": int((c == 0).sum()),
    }


def compare(before: dict, after: dict) -> dict:
    """Crossover of two pass@k curves from passk_eval (None if they do not cross) and the ks used."""
    if before["n"] != after["n"]:
        raise ValueError(f"both evaluations need the same n, got {before['n']} and {after['n']}")
    ks = np.arange(1, before["n"] + 1)
    return {"crossover_k": crossover_k(ks, after["pass_at_k"], before["pass_at_k"])}
