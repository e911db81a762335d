"""Command line: `python -m sim toy ...` and `python -m sim tinylm ...`. `python -m sim --help` lists them.

COMMANDS is the one table of commands: the installed `grpo-playground` command (grpo_playground/cli.py) dispatches
to it too."""

from __future__ import annotations

import os
import sys

COMMANDS = {
    "toy": ("sim.toy.cli", "run the 24-prompt logit-space GRPO toy headless"),
    "tinylm": ("sim.tinylm.cli", "SFT + GRPO on a tiny transformer that learns two-digit addition"),
    "lesson": ("sim.lesson.cli", "`lesson build OUT`: the views as a static folder that opens offline, from file://"),
    "lab": ("sim.lab.cli", "the chapter's lab: `lab new DIR` for stubs, `lab check [PATH]` to check your tasks.py"),
    "diagnose": ("sim.yourdata.cli", "`diagnose FILE`: what a GRPO run's log says (trainer_state.json, a metrics CSV)",
                 "diagnose_main"),
    "plan": ("sim.yourdata.cli", "`plan FILE`: will these prompts teach at this G? (CSV: correct,samples or pass_rate)",
             "plan_main"),
}


def usage(prog: str = "python -m sim", extra: dict[str, str] | None = None) -> str:
    """The commands, one line each; `extra` adds lines above them (grpo_playground/cli.py: starting the app)."""
    command = "[COMMAND]" if extra else "COMMAND"
    lines = [f"usage: {prog} {command} [flags]   ({prog} COMMAND --help for its flags)", "", "commands:"]
    lines += [f"  {name:<8} {text}" for name, text in (extra or {}).items()]
    lines += [f"  {name:<8} {entry[1]}" for name, entry in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None, prog: str = "python -m sim", extra: dict[str, str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(prog, extra))
        return 0
    if argv[0] not in COMMANDS:
        print(f"error: unknown command {argv[0]!r}\n\n{usage(prog, extra)}", file=sys.stderr)
        return 2
    import importlib

    from sim.runtime.interrupt import interruptible

    loaded = {}

    def load() -> int:
        try:
            loaded["module"] = importlib.import_module(COMMANDS[argv[0]][0])
        except ValueError as e:  # a setting read at import, e.g. TINYLM_MEMORY_CAP_MB=abc (sim.validate.env_number)
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 0

    code = interruptible(load)  # importing torch takes seconds: Ctrl-C or SIGTERM may come, nothing has started
    if "module" not in loaded:
        return code
    module = loaded["module"]
    entry = COMMANDS[argv[0]]
    return getattr(module, entry[2] if len(entry) > 2 else "main")(argv[1:])


def exit_process(code: int) -> None:
    """End the process with `code`. An interrupted command (130 after Ctrl-C, 143 after SIGTERM) leaves with
    os._exit once its one line is out: a KeyboardInterrupt that crossed a C-level module initialisation (torch's
    import) leaves CPython marked as ended by Ctrl-C, and sys.exit would then end it by SIGINT (exit status -2)
    instead of 130. What an interrupted command writes is already in place or removed (sim/runtime/files.py); its
    worker processes are killed here, as atexit would."""
    if code in (130, 143):
        if (procs := sys.modules.get("sim.runtime.procs")) is not None:
            procs.close_all()  # the workers (the lab's, an upload's) and what their code started go too
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    exit_process(main())
