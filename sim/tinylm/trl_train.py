"""TinyLM's task in Hugging Face TRL's own GRPOTrainer (TRL 1.16.0): the same story as story.run_story.

    SFT checkpoint -> TinyLMForCausalLM (trl_model.py) -> trl.GRPOTrainer(reward = the exact-match verifier)
    -> the same held-out pass@k evaluation (evaluate.passk_eval on the same weights) -> the same summary

What is the same as `--trainer sim`: the model and its SFT start (the weights, float64), the training split and
the 300 held-out problems (data.split), the verifier (data.rewards, called on TRL's completion ids), the
evaluation (exact pass@1 every eval_every iterations, pass@k of both models from the same random stream), the
batch (P prompts x G completions per optimizer step) and every GRPO setting, through sim/export.py's
`trl_grpo_config`. What is TRL's: sampling (transformers' `generate`, no KV cache), prompt order (TRL's
RepeatSampler shuffles the split without replacement; sim draws with replacement), the sample std (ddof = 1),
the loss and its accumulation over P micro-batches of one group each, torch's AdamW and transformers' learning
rate schedule (warmup lr * t / warmup, sim's lr * (t + 1) / (warmup + 1)), and its metric names (which sim
already uses).

Settings with no GRPOTrainer counterpart: a baseline other than the group mean and an eps other than TRL's
fixed 1e-4 are refused (trl_bridge.check_translatable, before TRL is imported), and so is sim's portable random
stream (rng="philox": TRL samples with its own generator); kl_every and keep_groups are
sim's bookkeeping (TRL logs the KL only when beta > 0); the std is TRL's sample std whatever ddof says (noted
in the summary's trl_notes).

One iteration of sim's trainer (one batch, mu optimizer steps) is mu optimizer steps of TRL's: max_steps =
iterations * mu. On N processes each generates P*G/N completions and the gradient is averaged
(gradient_accumulation_steps = P / N).

This module imports trl, transformers and datasets: only sim/tinylm/trl_bridge.py imports it, and only when asked.
"""

from __future__ import annotations

import hashlib
import math
import time
from pathlib import Path

import numpy as np
import torch
from datasets import Dataset
from transformers import PrinterCallback, TrainerCallback
from transformers.utils.logging import disable_progress_bar
from trl import GRPOConfig as TrlGRPOConfig
from trl import GRPOTrainer as TrlGRPOTrainer

from sim.export import trl_grpo_config
from sim.runtime.files import write_atomically
from sim.tinylm.data import prompt_text, rewards, split
from sim.tinylm.evaluate import compare, expected_pass_at_1, passk_eval
from sim.tinylm.grpo_train import GRPOConfig
from sim.tinylm.memory import check_run
from sim.tinylm.story import StoryConfig, never_solved, starting_model
from sim.tinylm.tokens import MAX_NEW_TOKENS, PAD
from sim.tinylm.trl_model import TinyLMForCausalLM, build_tokenizer, save_as_reference
from sim.yourdata.callback import DiagnoseCallback, run_settings, to_stderr

SCHEDULES = {"linear": "linear", "constant": "constant_with_warmup"}  # sim's lr_schedule -> transformers'


def loop_args(cfg: GRPOConfig, num_processes: int = 1) -> dict:
    """The GRPOConfig arguments sim/export.py does not write: the training loop and this machine.

    Export's `gradient_accumulation_steps` (P, one group per micro-batch) is divided by the number of processes,
    so that every optimizer step still sees P groups."""
    P = cfg.prompts_per_iter
    if P % num_processes:
        raise ValueError(f"--prompts ({P}) must be a multiple of the number of processes ({num_processes})")
    return {
        "gradient_accumulation_steps": P // num_processes,
        "max_steps": cfg.iterations * cfg.mu,  # TRL counts optimizer steps, sim counts batches of mu steps
        "warmup_steps": cfg.warmup * cfg.mu,
        "lr_scheduler_type": SCHEDULES[cfg.lr_schedule],
        "adam_beta1": cfg.adam_beta1,
        "adam_beta2": cfg.adam_beta2,
        "weight_decay": cfg.weight_decay,
        "max_grad_norm": cfg.max_grad_norm,
        "temperature": cfg.temperature,
        "max_completion_length": MAX_NEW_TOKENS,
        "bf16": False,  # TRL's default is bf16 autocast: TinyLM computes in float64, as with --trainer sim
        "activation_checkpointing": False,  # TRL turns it on (transformers 5 names it so); nothing to save here
        "use_cpu": not torch.cuda.is_available(),
        "logging_steps": 1,
        "report_to": "none",
        "save_strategy": "no",
        "disable_tqdm": True,
        "dataloader_num_workers": 0,
        "ddp_find_unused_parameters": False,  # every parameter gets a gradient (DDP's extra graph walk is waste)
    }


def trl_args(cfg: GRPOConfig, output_dir: str, num_processes: int = 1) -> dict:
    """Every keyword of the run's trl.GRPOConfig: sim/export.py's snippet arguments, then the loop's."""
    return {"output_dir": output_dir, **trl_grpo_config(cfg).args, **loop_args(cfg, num_processes)}


def exact_match(prompts, completions, completion_ids, a, b, **kwargs) -> list[float]:
    """TRL reward function: the chapter's verifier, sim.tinylm.data.rewards, on the completion ids.

    The ids, not the decoded text: TRL decodes with skip_special_tokens, so "8 <pad> 5 <eos>" would read "85";
    sim's verifier (and this function) counts it wrong. TRL logs it as rewards/exact_match/mean."""
    ids = torch.full((len(completion_ids), MAX_NEW_TOKENS), PAD)  # (B, 4)
    for i, c in enumerate(completion_ids):
        c = list(c)[:MAX_NEW_TOKENS]
        ids[i, : len(c)] = torch.tensor(c, dtype=torch.long)
    return rewards(ids, np.stack([np.asarray(a), np.asarray(b)], axis=1)).tolist()


def train_dataset(problems: np.ndarray) -> Dataset:
    """The training split as TRL's prompt dataset; a and b ride along to the reward function."""
    a, b = problems[:, 0].tolist(), problems[:, 1].tolist()
    return Dataset.from_dict({"prompt": [prompt_text(x, y) for x, y in zip(a, b, strict=True)], "a": a, "b": b})


class ExactPassAt1(TrainerCallback):
    """Held-out exact pass@1 every eval_every iterations (and at the end), as GRPOTrainer (sim) records it."""

    def __init__(self, model: TinyLMForCausalLM, heldout: np.ndarray, cfg: GRPOConfig, max_seconds=None):
        self.model, self.heldout, self.cfg, self.max_seconds = model, heldout, cfg, max_seconds
        self.t0 = time.perf_counter()
        self.pass_at_1 = [(0, expected_pass_at_1(model.tinylm, heldout))]
        self.seconds = [0.0]  # training seconds at each entry of pass_at_1

    def on_step_end(self, args, state, control, **kwargs):
        step, mu = state.global_step, self.cfg.mu
        over = self.max_seconds is not None and _any_rank(time.perf_counter() - self.t0 > self.max_seconds)
        if step % mu == 0 and (step // mu % self.cfg.eval_every == 0 or step == args.max_steps or over):
            self.pass_at_1.append((step // mu, expected_pass_at_1(self.model.tinylm, self.heldout)))
            self.seconds.append(time.perf_counter() - self.t0)
        if over and step % mu == 0:  # all ranks at the same step: one alone would hang the others' all-reduce
            control.should_training_stop = True


def _any_rank(flag: bool) -> bool:
    """True on every rank if `flag` is True on any (one all-reduce; just `flag` in a single process)."""
    if not (torch.distributed.is_available() and torch.distributed.is_initialized()):
        return flag
    t = torch.tensor([float(flag)])
    torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MAX)
    return bool(t.item())


def build_trainer(model: TinyLMForCausalLM, cfg: GRPOConfig, output_dir: str, num_processes: int = 1,
                  max_seconds: float | None = None, diagnosis=None, echo=to_stderr):  # fmt: skip
    """trl.GRPOTrainer on TinyLM's training split with the exact-match reward, the pass@1 callback (which also
    ends training after max_seconds, if given) and `python -m sim diagnose`'s rules while it trains
    (sim/yourdata/callback.py: a line on stderr when a rule first fires; the log and findings kept at
    `diagnosis`, a path, if given)."""
    train, heldout = split()
    callback = ExactPassAt1(model, heldout, cfg, max_seconds)
    if cfg.beta > 0:  # TRL builds its reference model from a folder (trl_model.save_as_reference)
        save_as_reference(model, f"{output_dir}/reference")
    trainer = TrlGRPOTrainer(
        model=model,
        reward_funcs=exact_match,
        args=TrlGRPOConfig(**trl_args(cfg, output_dir, num_processes)),
        train_dataset=train_dataset(train),
        processing_class=build_tokenizer(),
        callbacks=[callback, DiagnoseCallback(diagnosis, echo=echo)],
    )
    trainer.remove_callback(PrinterCallback)  # it prints every log dict to stdout; the log is in the summary
    return trainer, callback


def step_entries(log_history: list[dict]) -> list[dict]:
    """The entries of a Trainer's log_history that are optimizer steps: all but evaluations (eval_*) and the
    closing summary (train_runtime, train_loss). With mu > 1 TRL logs the rewards on one step in mu (the step that
    generated them) and the loss's metrics (clip_ratio, kl, entropy) on every step: every step is kept."""
    return [e for e in log_history if "train_runtime" not in e and not any(k.startswith("eval_") for k in e)]


def weights_digest(model: torch.nn.Module) -> str:
    """SHA-256 of every parameter's bytes, in order: equal on two ranks iff their weights are bit-identical."""
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def run_trl_story(cfg: StoryConfig, *, output_dir: str, save_sft=None, max_seconds=None, keep_trainer_state=None,
                  diagnosis=None, echo=to_stderr) -> dict | None:
    """story.run_story with TRL's GRPOTrainer. Returns the same summary plus TRL's log, or None on ranks > 0
    of a multi-process run (rank 0 evaluates and reports; every rank trains). max_seconds: stop GRPO after
    that long (the evaluation still runs; "iterations" says how many were done). keep_trainer_state: a path
    (checked by the caller) where rank 0 writes the run's trainer_state.json, as transformers' Trainer writes it
    into a checkpoint (TrainerState.save_to_json: its log_history is what `python -m sim diagnose` reads).
    diagnosis, echo: sim/yourdata/callback.py's DiagnoseCallback's path and where its lines go (None: nowhere).

    The summary's `trl_log` is that file's log_history less the closing entry, one entry per optimizer step,
    and `run_settings` is what its stateful_callbacks["DiagnoseCallback"] record (G, beta, mu, steps per
    generation): the two files give `python -m sim diagnose` the same log and the same settings."""
    check_run(cfg.grpo.prompts_per_iter, cfg.grpo.group_size, cfg.sft.model, cfg.eval_samples)
    torch.set_num_threads(cfg.grpo.threads)
    disable_progress_bar()  # saving and loading the reference model (beta > 0) would draw bars on stderr
    t0 = time.perf_counter()
    start, sft = starting_model(cfg, save_sft=save_sft)
    from accelerate import PartialState
    from accelerate.utils import gather_object

    # cpu= as TrainingArguments(use_cpu=...) will say: a bare PartialState() under `accelerate launch --multi_gpu` on a
    # machine without a GPU starts as one process (num_processes 1, so gradient_accumulation_steps P, not P / N)
    # until the Trainer re-initialises it for the CPU
    state = PartialState(cpu=not torch.cuda.is_available())
    model = TinyLMForCausalLM.wrap(start)
    trainer, callback = build_trainer(model, cfg.grpo, output_dir, state.num_processes, max_seconds, diagnosis, echo)
    diagnose_callback = next(c for c in trainer.callback_handler.callbacks if isinstance(c, DiagnoseCallback))
    t1 = time.perf_counter()
    trainer.train()
    t2 = time.perf_counter()
    ranks = gather_object([{"rank": state.process_index, "steps": trainer.state.global_step,
                            "weights_sha256": weights_digest(model.tinylm)}])  # fmt: skip
    if not state.is_main_process:
        return None
    if keep_trainer_state is not None:
        trainer.state.save_to_json(f"{output_dir}/trainer_state.json")  # the file a checkpoint holds, byte for byte
        with open(f"{output_dir}/trainer_state.json", "rb") as f:
            write_atomically({Path(keep_trainer_state): f.read()})
    policy = model.tinylm.eval()
    _, heldout = split()
    n, seed = cfg.eval_samples, cfg.grpo.seed
    evals = {"before": passk_eval(start, heldout, n=n, seed=seed), "after": passk_eval(policy, heldout, n=n, seed=seed)}
    t3 = time.perf_counter()
    out = {f"pass_at_1_{w}": e["pass_at_1"] for w, e in evals.items()}
    out |= {f"pass_at_k_{w}": e["pass_at_k"].tolist() for w, e in evals.items()}
    out |= {f"never_solved_{w}": never_solved(heldout, e["correct"]) for w, e in evals.items()}
    out["crossover_k"] = compare(evals["before"], evals["after"])["crossover_k"]
    out["exact_pass_at_1"] = [list(p) for p in callback.pass_at_1]
    out |= {"sft": sft, "grpo_seconds": t2 - t1, "eval_seconds": t3 - t2, "wall_seconds": t3 - t0}
    out |= {"iterations": trainer.state.global_step // cfg.grpo.mu, "eval_samples": n, "heldout_problems": len(heldout)}
    settings = run_settings(trainer.args)  # how TRL's steps relate to the iterations: one generation, mu steps
    out |= {"optimizer_steps": trainer.state.global_step, "run_settings": settings,
            "generation_steps": math.ceil(trainer.state.global_step / settings["optimizer_steps_per_generation"]),
            "diagnose_fired": diagnose_callback.fired}  # fmt: skip
    out["config"] = cfg.to_dict()
    # TRL's own: how it ran, every rank's steps and weights, its config and its per-step log (TRL's metric names)
    out |= {"trainer": "trl", "num_processes": state.num_processes, "distributed_type": str(state.distributed_type),
            "backend": state.backend, "ranks": ranks, "start_weights_sha256": weights_digest(start),
            "exact_pass_at_1_seconds": callback.seconds,
            "trl_config": trl_args(cfg.grpo, output_dir, state.num_processes),
            "trl_notes": trl_grpo_config(cfg.grpo).notes,
            "trl_log": step_entries(trainer.state.log_history)}  # fmt: skip
    return out
