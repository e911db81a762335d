"""The chapter's lab (lab/, sim/lab/checks.py, `python -m sim lab`): the reference passes every check and the
shipped stubs fail every check (both through lab/test_tasks.py in a pytest subprocess); every catalogued mistake
is named by its own message; each student fixture gets its specific line and exit code from `sim lab check`;
`sim lab new` copies the stubs (which then fail every check, run from outside the repo) and never overwrites.

The checks in process are the unit tier. The subprocesses (torch imports, a hanging student file) are the
integration tier: they start once, together, with the module's first integration test, and are collected by the
tests that need them, so they overlap with the CLI checks (which run the student's code in worker processes).
"""

import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from sim.lab import checks, solutions
from sim.lab.cli import STUB_FILES
from sim.lab.cli import main as lab_main
from sim.lab.harness import MAX_MESSAGE
from sim.lab.mistakes import MISTAKES

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "lab"
N_CASES = sum(len(c) for c in checks.CASES.values())


def _load(path: Path) -> types.ModuleType:
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"fixture_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- subprocesses, started together ---------------------------------------------------------------


class Background:
    def __init__(self, tmp: Path):
        env = dict(os.environ, OMP_NUM_THREADS="1")
        env.pop("RL_SOLUTIONS", None)
        pytest_cmd = [sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider",
                      "-p", "no:warnings"]
        self.new_dir = tmp / "student"
        assert lab_main(["new", str(self.new_dir)]) == 0  # fresh stubs, run below from outside the repo
        self.procs = {
            "solutions": subprocess.Popen(pytest_cmd + ["lab/test_tasks.py"], cwd=ROOT,
                                          env=dict(env, RL_SOLUTIONS="1"), stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True),
            "stubs": subprocess.Popen(pytest_cmd, cwd=self.new_dir, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True),
            "cli_hangs": subprocess.Popen([sys.executable, "-m", "sim", "lab", "check",
                                           str(FIXTURES / "hangs"), "--timeout", "1"], cwd=ROOT, env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        }
        self._done = {}

    def result(self, name: str, timeout: float = 240):
        if name not in self._done:
            out, err = self.procs[name].communicate(timeout=timeout)
            self._done[name] = (self.procs[name].returncode, out, err or "")
        return self._done[name]

    def close(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()


@pytest.fixture(scope="module")
def background(tmp_path_factory):
    bg = Background(tmp_path_factory.mktemp("lab"))
    yield bg
    bg.close()


# ---- the checks, in process ---------------------------------------------------------------------


def test_case_counts_and_order():
    assert [c.name for c in checks.CASES["group_advantages"]][:3] == ["chapter_1001", "chapter_1000", "all_equal"]
    assert N_CASES == 18


def test_reference_and_chapter_code_pass_every_check():
    for impl in (solutions, _load(FIXTURES / "correct" / "tasks.py")):
        results = checks.check_all(impl)
        assert all(r.passed for r in results), [r.message for r in results]
        assert [r.n_cases for r in results] == [7, 5, 6]


def test_stubs_fail_every_check_in_process():
    stubs = _load(ROOT / "lab" / "tasks.py")
    for case in (c for cases in checks.CASES.values() for c in cases):
        message = checks.run_case(case, stubs)
        assert message and message.startswith("not implemented yet (Task "), (case.name, message)


def _with(task: str, fn) -> types.SimpleNamespace:
    impl = types.SimpleNamespace(**{name: getattr(solutions, name) for name in checks.TASKS})
    setattr(impl, task, fn)
    return impl


@pytest.mark.parametrize("task,mistake", [(t, m) for t, ms in MISTAKES.items() for m in ms],
                         ids=[f"{t}-{m.name}" for t, ms in MISTAKES.items() for m in ms])
def test_each_common_mistake_is_named(task, mistake):
    result = checks.check_task(task, _with(task, mistake.fn))
    assert not result.passed
    assert result.message == mistake.message
    assert "\n" not in result.message and len(result.message) <= MAX_MESSAGE


def test_an_unknown_mistake_gets_the_numbers_not_a_guess():
    result = checks.check_task("k3_kl", _with("k3_kl", lambda logp, ref_logp: 2 * solutions.k3_kl(logp, ref_logp)))
    assert result.message == "pi = 0.6, pi_ref = 0.5: expected [+0.0157], got [+0.03131] (largest difference 0.0156)"
    result = checks.check_task("k3_kl", _with("k3_kl", lambda logp, ref_logp: solutions.k3_kl(logp, ref_logp).detach()))
    assert result.message.startswith("k3 has no gradient with respect to logp")


def test_task4_is_judged_with_the_reference_k3():
    broken_k3 = _load(FIXTURES / "k1" / "tasks.py")
    results = checks.check_all(broken_k3)
    assert [r.passed for r in results] == [True, False, True]
    assert broken_k3.k3_kl(torch.zeros(1), torch.zeros(1)).item() == 0.0  # the student's own k3 is back


def test_in_place_and_non_tensor_results_are_named():
    def in_place(rewards, G, scale_std=True, eps=1e-4):
        rewards -= rewards.mean()
        return rewards.clone()

    msg = checks.check_task("group_advantages", _with("group_advantages", in_place)).message
    assert msg == "changed one of its input tensors in place: compute the result into a new tensor"
    msg = checks.check_task("grpo_loss", _with("grpo_loss", lambda *a, **k: 0.0)).message
    assert msg == "returned float, not a torch tensor"
    msg = checks.check_task("grpo_loss", _with("grpo_loss", lambda logp, old, ref, adv, mask: logp.sum())).message
    assert msg.startswith("raised TypeError: ") and "keep the signature grpo_loss(logp, old_logp" in msg


# ---- `python -m sim lab check` on each fixture, in process ------------------------------------------

EXPECTED = {  # fixture -> (task that fails or None, start of its message)
    "correct": (None, ""),
    "wrong_std": ("group_advantages", "std is the sample std (unbiased=True"),
    "no_eps": ("group_advantages", "an all-equal group gives NaN (0 / 0)"),
    "batch_stats": ("group_advantages", "mean and std are taken over the whole batch, not per group"),
    "wrong_shape": ("group_advantages", "returned shape (1, 4), expected (4,)"),
    "raises": ("group_advantages", "raised ValueError: groups larger than 2 are not supported yet"),
    "k1": ("k3_kl", "that is k1 = log pi - log pi_ref"),
    "u_inverted": ("k3_kl", "u is upside down"),
    "crashes": ("k3_kl", "the process running the lab code died (exit code 3)"),
    "token_mean": ("grpo_loss", "that is DAPO's/TRL's token mean over the whole batch"),
    "no_min": ("grpo_loss", "the clip is applied without the min"),
    "mask_ignored": ("grpo_loss", "the mask is ignored"),
    "beta_sign": ("grpo_loss", "the KL term has the wrong sign"),
}


@pytest.mark.integration
@pytest.mark.usefixtures("background")  # started with the first CLI check: they overlap
@pytest.mark.parametrize("fixture", list(EXPECTED))
def test_cli_check_fixture(fixture, capsys):
    failing, start = EXPECTED[fixture]
    rc = lab_main(["check", str(FIXTURES / fixture / "tasks.py"), "--timeout", "20"])
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert err == "" and len(lines) == 3
    assert rc == (0 if failing is None else 1)
    for line, (task, info) in zip(lines, checks.TASKS.items(), strict=True):
        assert line.startswith(f"Task {info.number}  {info.func}")
        if task == failing:
            assert line.split("  FAIL: ", 1)[1].startswith(start), line
        else:
            assert line.endswith(f"pass ({len(checks.CASES[task])} checks)"), line


@pytest.mark.integration
def test_cli_check_directory_and_default_path(capsys):
    assert lab_main(["check", str(FIXTURES / "correct")]) == 0
    assert lab_main(["check"]) == 1  # the shipped stubs
    out = capsys.readouterr().out.splitlines()[3:]
    assert len(out) == 3 and all("FAIL: not implemented yet (Task " in line for line in out)


@pytest.mark.integration
def test_cli_syntax_error_is_one_line(tmp_path, capsys):
    shutil.copy(FIXTURES / "syntax_error" / "tasks.py.txt", tmp_path / "tasks.py")
    assert lab_main(["check", str(tmp_path)]) == 1
    assert capsys.readouterr().out == "tasks.py does not import: SyntaxError: expected ':' (line 6)\n"


@pytest.mark.parametrize("argv,needle", [
    (["check", "/no/such/lab.py"], "error: no such file: /no/such/lab.py"),
    (["check", str(FIXTURES / "correct"), "--timeout", "0"], "error: --timeout=0 is not a number of seconds from 0.1"),
    (["check", str(ROOT / "README.md")], "error: not a Python file (.py)"),
    (["frobnicate"], "error: argument {check,new}: invalid choice: 'frobnicate'"),
])
def test_cli_bad_input_exit_2(argv, needle, capsys):
    assert lab_main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(needle) and err.count("\n") == 1


def test_cli_new_refuses_to_overwrite(tmp_path, capsys):
    target = tmp_path / "mine"
    target.mkdir()
    (target / "tasks.py").write_text("# my work\n")
    assert lab_main(["new", str(target)]) == 2
    assert "already has tasks.py; nothing was written" in capsys.readouterr().err
    assert sorted(p.name for p in target.iterdir()) == ["tasks.py"]
    assert (target / "tasks.py").read_text() == "# my work\n"
    (tmp_path / "file").write_text("")
    assert lab_main(["new", str(tmp_path / "file")]) == 2


@pytest.fixture
def no_stub_written(monkeypatch):
    """Nothing may be created with open(..., "x") (how `new` writes a stub): a guard that failed writes nothing."""
    real_open = open

    def refuse(path, mode="r", *a, **k):
        if "x" in mode:
            raise AssertionError(f"a stub was written: {path}")
        return real_open(path, mode, *a, **k)

    monkeypatch.setattr("builtins.open", refuse)


def test_cli_new_refuses_the_root_of_the_file_system(capsys, no_stub_written):
    """`lab new /` (as root it wrote tasks.py, conftest.py, test_tasks.py and README.md into /), as the lesson's
    build refuses it."""
    for root in ("/", "/tmp/.."):
        assert lab_main(["new", root]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1
        assert err == f"error: {root} is the root of the file system: name a folder for the lab; nothing was written\n"


def test_cli_new_refuses_a_symbolic_link_and_names_its_target(tmp_path, capsys, no_stub_written):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for name, target in (("link", real), ("dangling", tmp_path / "nowhere")):
        assert lab_main(["new", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert err == (f"error: {tmp_path / name} is a symbolic link: give the folder it points to ({target}); "
                       "nothing was written\n")
    assert list(real.iterdir()) == [] and not (tmp_path / "nowhere").exists()


def test_cli_new_follows_a_link_above_the_folder(tmp_path, capsys):
    """As the lesson's build: only the named folder itself may not be a link."""
    (tmp_path / "real").mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "real")
    assert lab_main(["new", str(tmp_path / "via" / "mine")]) == 0
    assert sorted(p.name for p in (tmp_path / "real" / "mine").iterdir()) == sorted(STUB_FILES)


def test_cli_help(capsys):
    assert lab_main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m sim lab") and "{check,new}" in out
    assert lab_main(["check", "--help"]) == 0
    assert "--timeout" in capsys.readouterr().out


# ---- the subprocesses' results (last, so that the tests above overlap with them) ----------------------


def _summary(out: str) -> dict[str, int]:
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|error)", out)}


@pytest.mark.integration
def test_reference_solutions_pass_lab_tests(background):
    rc, out, _ = background.result("solutions")
    assert rc == 0, out
    assert _summary(out) == {"passed": N_CASES}


@pytest.mark.integration
def test_shipped_stubs_fail_every_lab_test(background):
    """`sim lab new` copies the shipped stubs; pytest in that directory (outside the repo) fails every check."""
    for name in STUB_FILES:
        copied = (background.new_dir / name).read_text()
        if name == "conftest.py":
            assert f"PROJECT_ROOT = {str(ROOT)!r}" in copied
        else:
            assert copied == (ROOT / "lab" / name).read_text()
    rc, out, _ = background.result("stubs")
    assert rc == 1, out
    assert _summary(out) == {"failed": N_CASES}, out
    # Count in the FAILURES section only: whether pytest's short summary repeats each message depends on the
    # terminal width it guesses (CI's differs from a desk's).
    failures = out.split("short test summary info")[0]
    for task, info in checks.TASKS.items():
        n = len(checks.CASES[task])
        assert len(re.findall(rf"Task {info.number} {info.func}: not implemented yet", failures)) == n, out


@pytest.mark.integration
def test_cli_hanging_student_times_out_in_one_line(background):
    rc, out, err = background.result("cli_hangs")
    assert rc == 1 and err == ""
    assert out.splitlines() == [
        "Task 2  group_advantages  pass (7 checks)",
        "Task 3  k3_kl             FAIL: did not finish within 1 s (an infinite loop?)",
        "Task 4  grpo_loss         pass (6 checks)",
    ]
