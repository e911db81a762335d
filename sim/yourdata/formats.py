"""Other trainers' logs under TRL's names: verl's file logger, W&B's chart-panel CSV, OpenRLHF's W&B names.

    rows = verl_rows(text, "metrics.jsonl")          # verl: one {"step": N, "data": {...}} per line
    header = panel_columns(table)                    # W&B "Export panel": Step, "<run> - train/reward", __MIN, __MAX
    trl = rename(name)                               # "critic/score/mean" -> "reward", "actor/entropy" -> "entropy"

Every name is mapped onto the metric TRL 1.16.0's GRPOTrainer logs for the same quantity, so the rules read one
vocabulary. Where two frameworks measure a thing differently, the table says how (docs/your-data.md lists it):

verl (verl/trainer/ppo/metric_utils.py compute_data_metrics and the actor's update metrics; one step = one batch
generated and trained on, `ppo_epochs` x mini-batches of updates inside it):
  critic/score/mean            reward            the sequence score: the reward function's value (before any KL
                                                 penalty in the reward; critic/rewards/mean is after it)
  actor/entropy                entropy
  actor/grad_norm              grad_norm
  actor/pg_loss                policy_loss
  actor/pg_clipfrac            clip_ratio/region_mean   share of tokens whose clipped term was taken
  actor/kl_loss                kl                the KL to the reference in the loss (use_kl_loss; the estimator is
                                                 kl_loss_type, low_var_kl being the chapter's k3)
  response_length/mean, /max, /min, /clip_ratio
                               completions/mean_length, max_length, min_length, clipped_ratio
  actor/lr, training/epoch     learning_rate, epoch
  val-core/<data source>/reward/mean@<n>, val/test_score/<data source>
                               eval_reward       the validation reward (the first such metric, named in a note)
  verl logs no frac_reward_zero_std, no reward_std, no per-function rewards and no total loss: the zero-std rules,
  the 0/1 check from the spread and the per-function rules cannot run on a verl log, and the page says so.
  actor/ppo_kl (old against new policy, not the reference) has no TRL twin and is ignored.

OpenRLHF (its W&B logger writes train/<name>; openrlhf/trainer/ray/ppo_actor.py's status):
  reward, policy_loss          reward, policy_loss (the same names)
  kl                           kl                the KL to the reference (init_kl_coef > 0; estimator kl_estimator)
  ppo_clip_ratio               clip_ratio/region_mean
  entropy_loss                 entropy           the masked mean entropy of the policy
  response_length              completions/mean_length
  actor_lr                     learning_rate
  OpenRLHF logs no frac_reward_zero_std, reward_std or grad_norm.
"""

from __future__ import annotations

import re

from sim.yourdata.datafile import DataError, Table, cell_text, file_label, read_json_lines, shown_names

VERL = {
    "critic/score/mean": "reward", "actor/entropy": "entropy", "actor/grad_norm": "grad_norm",
    "actor/pg_loss": "policy_loss", "actor/pg_clipfrac": "clip_ratio/region_mean", "actor/kl_loss": "kl",
    "response_length/mean": "completions/mean_length", "response_length/max": "completions/max_length",
    "response_length/min": "completions/min_length", "response_length/clip_ratio": "completions/clipped_ratio",
    "actor/lr": "learning_rate", "training/epoch": "epoch",
}  # fmt: skip
OPENRLHF = {
    "ppo_clip_ratio": "clip_ratio/region_mean", "entropy_loss": "entropy", "response_length": "completions/mean_length",
    "actor_lr": "learning_rate",
}  # fmt: skip
VERL_EVAL = re.compile(r"val-core/(.+)/reward/mean@\d+|val/test_score/(.+)")
VERL_STEP = "training/global_step"
PANEL_RUN = " - "  # W&B panel export: "<run name> - <metric>"
PANEL_BANDS = ("__MIN", "__MAX")


def rename(name: str) -> str:
    """A verl or OpenRLHF metric's name as TRL logs the same quantity; any other name unchanged."""
    return VERL.get(name) or OPENRLHF.get(name) or name


def is_verl_lines(text: str) -> bool:
    """Does the text look like verl's file logger (a first line {"step": N, "data": {...}})?"""
    head = text.lstrip()[:200]
    first = text[:text.find("\n")] if "\n" in text else text
    return head.startswith("{") and '"data"' in first and '"step"' in first


def verl_rows(text: str, name: str) -> tuple[list[dict], list[int], list[str], list[str]]:
    """verl's file-logger JSONL as (rows under TRL's names, steps, where each came from, notes). Refused with
    its line: a line that is not {"step": whole number, "data": {name: number}}."""
    label = file_label(name)
    entries = read_json_lines(text, name)
    for line, entry in entries:
        if not (isinstance(entry, dict) and set(entry) >= {"step", "data"} and isinstance(entry["data"], dict)):
            raise DataError(f"{label} line {line}: not a verl file-logger entry ({{\"step\": N, \"data\": {{...}}}})")
    evals = {k for _, e in entries for k in e["data"] if VERL_EVAL.fullmatch(k)}
    used = min(evals) if evals else None  # one validation reward: the first name in order
    rows, steps, where, unmapped = [], [], [], set()
    for line, entry in entries:
        row = {VERL[k]: v for k, v in entry["data"].items() if k in VERL}
        if used in entry["data"]:
            row["eval_reward"] = entry["data"][used]
        unmapped |= {k for k in entry["data"] if k not in VERL and k not in evals and k != VERL_STEP}
        rows.append(row)
        steps.append(entry["step"])
        where.append(f"{label} line {line}")
    mapped = ", ".join(f"{k} as {v}" for k, v in list(VERL.items())[:4])
    notes = [f"verl's file logger: its names read as TRL's ({mapped}, ...; docs/your-data.md lists them). verl "
             "logs no frac_reward_zero_std or reward_std"]
    if evals:
        notes.append(f"validation reward: {cell_text(used, 60)}" + (f" (also logged, not read: "
                                                                  f"{shown_names(sorted(evals - {used}))})"
                                                                  if len(evals) > 1 else ""))
    if unmapped:
        notes.append(f"verl metrics with no TRL counterpart, ignored: {shown_names(sorted(unmapped))}")
    return rows, steps, where, notes


def panel_columns(table: Table) -> tuple[Table, list[str]]:
    """A W&B chart-panel CSV ("Step", "<run> - train/reward", "<run> - train/reward__MIN", ...) as a plain
    table of one run: the run prefix dropped, the __MIN/__MAX band columns left out (notes say so). Refused: a
    panel of several runs (the message names them). Any other table is returned as it is."""
    runs, keep, bands = {}, [], 0
    for i, h in enumerate(table.header):
        if h.endswith(PANEL_BANDS) and PANEL_RUN in h:
            bands += 1
            continue
        if PANEL_RUN in h and h != "Step":
            run, metric = h.rsplit(PANEL_RUN, 1)
            runs.setdefault(run, []).append(metric)
            keep.append((i, metric))
        else:
            keep.append((i, h))
    if not runs:
        return table, []
    if len(runs) > 1:
        raise DataError(f"{table.name}: a W&B panel of {len(runs)} runs ({shown_names(sorted(runs), 4)}); export "
                        "the panel with one run shown")
    names = tuple(h for _, h in keep)
    rows = [[row[i] for i, _ in keep] for row in table.rows]
    run = next(iter(runs))
    notes = [f"a W&B panel export of the run {cell_text(run, 40)}: its columns read without the run's name"]
    if bands:
        notes.append(f"{bands} __MIN/__MAX columns (W&B's band around a smoothed line) left out")
    return Table(table.name, names, rows, table.lines), notes
