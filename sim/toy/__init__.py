"""The chapter's "Watching it train" toy: GRPO on 24 prompts in logit space.

Prompt j is solved with probability p_j = sigmoid(w + u_j - d_j): d_j a fixed difficulty, u_j the prompt's
own parameter, w a shared skill every prompt's gradient moves. Each iteration samples G answers per prompt,
scores them 1/0, computes group advantages and takes one policy-gradient step (or mu clipped inner steps).
GRPO's loss (sim/grpo.py with one token per answer) is then a function of the logits alone, and every loss
aggregation coincides because every response has one token.

Read it in this order:
  model.py      ToyConfig (each setting declared once) and the closed forms of a state
  update.py     one update from the number of correct answers per group
  runs.py       run_toy (S seeds at once) and expected_run (the exact average run); history.py what a run
                records (TRL's metric names)
  reference.py  the same update by sampling every answer and autograd through sim.grpo: the oracle

What the defaults show (24 prompts, d from -2 to 7, G = 8, lr = 0.2, u = w = 0), in about 200 iterations
(`python -m sim toy --n-seeds 16`, means over the seeds): accuracy rises from 0.24 to 0.94. The easy prompts
saturate within a few dozen iterations, so the share of all-correct groups (wasted, no gradient) climbs with
accuracy, from 4% to 76%. The hardest prompt starts at p = 0.001 and its groups are all wrong (also wasted):
it stays below 0.1 until iteration 116, until the shared skill w, pushed by the other prompts, lifts it; then
it rises to about 0.6 (0.625).
"""

from sim.toy.history import STEP_METRICS, ToyHistory, clip_summary, first_above, history_rows, seed_band
from sim.toy.model import ToyConfig, gave_signal, make_difficulties, memory_mb, policy
from sim.toy.reference import reference_update, run_toy_reference
from sim.toy.runs import check_table, expected_run, run_toy
from sim.toy.update import advantage_table, count_update

__all__ = ["STEP_METRICS", "ToyConfig", "ToyHistory", "advantage_table", "check_table", "clip_summary", "count_update",
           "expected_run", "first_above", "gave_signal", "history_rows", "make_difficulties", "memory_mb", "policy",
           "reference_update", "run_toy", "run_toy_reference", "seed_band"]
