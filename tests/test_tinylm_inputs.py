"""TinyLM input hardening: bad checkpoints, oversized runs and bad CLI input fail cleanly (one line, no traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from sim.tinylm import checkpoint as ckpt
from sim.tinylm import memory
from sim.tinylm.checkpoint import CheckpointError, load_checkpoint, plain, save_checkpoint
from sim.tinylm.cli import main as cli_main
from sim.tinylm.memory import MemoryCapError, check_run, n_params, run_bytes
from sim.tinylm.model import ModelConfig, TinyLM, build_model

ROOT = Path(__file__).resolve().parents[1]
SMALL = ModelConfig(d_model=32, n_head=2, n_layer=1)


@pytest.fixture
def saved(tmp_path):
    """A valid small checkpoint and a function that rewrites one of its fields."""
    path = tmp_path / "m.pt"
    save_checkpoint(build_model(SMALL, 0), path, {"seed": 0})

    def rewrite(**model_config):
        blob = torch.load(path, weights_only=True)
        blob["model_config"].update(model_config)
        for k in [k for k, v in model_config.items() if v is _DELETE]:
            del blob["model_config"][k]
        torch.save(blob, path)
        return path

    return path, rewrite


_DELETE = object()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"vocab_size": 20}, "vocab_size must be 14 \\(the tokenizer.s vocabulary\\), got 20"),  # was an IndexError
        ({"block_size": 12}, "block_size must be 10 \\(a 6-token prompt"),
        ({"n_layer": 2.0}, "n_layer must be an integer, got float"),  # was a TypeError
        ({"n_head": True}, "n_head must be an integer, got bool"),
        ({"d_model": "64"}, "d_model must be an integer, got str"),
        ({"d_model": 10**6}, "d_model must be in \\[1, 4096\\], got 1000000"),
        ({"d_model": 10**30}, "got a huge number"),
        ({"d_model": 33}, "multiple of n_head"),
        ({"n_layer": 0}, "n_layer must be in \\[1, 32\\]"),
        ({"d_model": 4096, "n_layer": 32, "n_head": 64}, "6,444,318,720 parameters needs about 155 GB"),  # was 40+ GB
        ({"d_model": 2048, "n_layer": 4}, "cap of 2.1 GB"),
        ({"extra": 1}, "unknown field extra"),
        ({"n_head": _DELETE}, "no field n_head"),
    ],
)
def test_bad_model_config_is_refused_before_any_tensor(saved, change, message, monkeypatch):
    path, rewrite = saved
    built = []
    monkeypatch.setattr(ckpt, "TinyLM", lambda cfg: built.append(cfg) or TinyLM(cfg))
    rewrite(**change)
    with pytest.raises(CheckpointError, match=message) as err:
        load_checkpoint(path)
    assert "--from-scratch" in str(err.value) and not built  # the rebuild hint; no model was built


def test_values_from_the_file_appear_only_as_short_plain_text(saved):
    path, rewrite = saved
    blob = torch.load(path, weights_only=True)
    blob["model_config"]["![x](http://127.0.0.1:9/p.png) " + "a" * 10_000] = 1
    torch.save(blob, path)
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(path)
    msg = str(err.value)
    assert "](" not in msg and "http:" not in msg and len(msg) < 400
    blob["model_config"] = SMALL.to_dict()
    blob["version"] = ":red[" + "v" * 5000 + "]"
    torch.save(blob, path)
    with pytest.raises(CheckpointError, match="format version ..red.v") as err:
        load_checkpoint(path)
    assert len(str(err.value)) < 400
    assert plain("<b>x</b> [a](b) :red[c]") == "?b?x??b? ?a??b? ?red?c?"


def test_bad_tensors_and_files(saved, tmp_path, monkeypatch):
    path, _ = saved
    blob = torch.load(path, weights_only=True)
    blob["state_dict"]["head.weight"] = blob["state_dict"]["head.weight"].long()
    torch.save(blob, path)
    with pytest.raises(CheckpointError, match="head.weight holds non-finite or non-float"):
        load_checkpoint(path)
    blob["state_dict"]["head.weight"] = torch.full((14, 32), float("nan"))
    torch.save(blob, path)
    with pytest.raises(CheckpointError, match="non-finite"):
        load_checkpoint(path)
    monkeypatch.setattr(ckpt, "MAX_FILE_BYTES", 1000)
    with pytest.raises(CheckpointError, match="too large"):
        load_checkpoint(path)


def test_float32_checkpoint_loads_as_float64(tmp_path):
    model = build_model(SMALL, 0).float()
    path = tmp_path / "f32.pt"
    save_checkpoint(model, path)
    loaded, _ = load_checkpoint(path)
    assert all(p.dtype == torch.float64 for p in loaded.parameters())
    assert all(torch.equal(a.double(), b) for a, b in zip(model.parameters(), loaded.parameters(), strict=True))


# ---- memory --------------------------------------------------------------------------------


@pytest.mark.parametrize("cfg", [ModelConfig(), SMALL, ModelConfig(d_model=48, n_head=3, n_layer=3)])
def test_parameter_count_formula_equals_the_model(cfg):
    assert n_params(cfg) == sum(p.numel() for p in TinyLM(cfg).parameters())


def test_oversized_run_is_refused_with_the_numbers():
    assert check_run(16, 8, ModelConfig(), 64) < 2**30  # the default run: ~630 MB, its evaluation batches
    with pytest.raises(MemoryCapError, match=r"P = 4096 prompts x G = 1024 responses.*cap of 2.1 GB") as err:
        check_run(4096, 1024, ModelConfig(), 64)
    assert "needs about 543 GB" in str(err.value)
    assert run_bytes(64, 32, ModelConfig(), 1024) < memory.MEMORY_CAP_BYTES  # every page setting fits


@pytest.mark.integration
def test_memory_estimate_is_above_the_measured_peak():
    # A subprocess runs 2 iterations at P*G = 8192 and reports how far its peak resident memory rose above
    # its resident memory just before (Linux: VmHWM after resetting it through /proc/self/clear_refs). The
    # estimate must be above that rise, and not absurdly so.
    code = (
        "import re, torch; from sim.tinylm.grpo_train import GRPOConfig, GRPOTrainer;"
        "from sim.tinylm.model import build_model, ModelConfig;"
        "kb = lambda key: int(re.search(key + r':\\s+(\\d+)', open('/proc/self/status').read()).group(1));"
        "m = build_model(ModelConfig(), 0); list(GRPOTrainer(m, GRPOConfig(iterations=2, prompts_per_iter=2, "
        "group_size=2)).steps()); open('/proc/self/clear_refs', 'w').write('5'); base = kb('VmRSS');"
        "t = GRPOTrainer(m, GRPOConfig(iterations=2, prompts_per_iter=256, group_size=32, eval_every=100));"
        "list(t.steps()); print(kb('VmHWM') - base)"
    )
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    grown = int(out.stdout.split()[-1]) * 1024  # kB
    estimate = run_bytes(256, 32, ModelConfig(), 1)
    assert 100 * 2**20 < grown < estimate < 5 * grown, (grown, estimate)


# ---- the command line ----------------------------------------------------------------------


class Trained(BaseException):
    """Raised by a trainer that must not run (a BaseException: no `except Exception` in the CLI turns it into a
    message)."""


@pytest.fixture
def no_training(monkeypatch):
    """SFT and GRPO raise Trained: a test that passes with it refused before any training."""
    import sim.tinylm.grpo_train
    import sim.tinylm.sft
    import sim.tinylm.story

    def refuse(*args, **kwargs):
        raise Trained

    monkeypatch.setattr(sim.tinylm.grpo_train.GRPOTrainer, "step", refuse)
    monkeypatch.setattr(sim.tinylm.sft, "train_sft", refuse)
    monkeypatch.setattr(sim.tinylm.story, "train_sft", refuse)


def test_cli_refuses_an_oversized_run_at_once(capsys, no_training):
    assert cli_main(["--prompts", "4096", "-G", "1024"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cap of" in err and "Traceback" not in err


def test_cli_bad_input_exits_2_with_one_line(capsys, tmp_path, saved, no_training):
    path, rewrite = saved
    cases = [
        ["--checkpoint", str(tmp_path / "missing.pt")],  # a checkpoint named on the command line is input
        ["--checkpoint", str(rewrite(vocab_size=20))],
        ["--save-sft", str(tmp_path)],  # a directory
        ["--save-sft", str(path / "sft.pt")],  # under a file: cannot be created, refused before training
        ["--eval-samples", "0"],
        ["--threads", "0"],
        ["--iterations", "1e3"],
    ]
    for argv in cases:  # no_training: nothing trained first
        assert cli_main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, (argv, err)


def test_cli_broken_shipped_checkpoint_exits_1(capsys, monkeypatch, tmp_path):
    bad = tmp_path / "tinylm_sft.pt"
    bad.write_bytes(b"garbage")
    monkeypatch.setattr(ckpt, "ASSET", bad)
    import sim.tinylm.cli as cli

    monkeypatch.setattr(cli, "ASSET", bad)
    assert cli.main(["--checkpoint", str(bad), "--iterations", "1"]) == 1  # the installation is broken, not the input
    assert "rebuild" in capsys.readouterr().err
