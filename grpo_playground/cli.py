"""`grpo-playground`: the app and the command line, from anywhere once `pip install .` has run.

    grpo-playground                          # start the app: streamlit run on the installed app.py
    grpo-playground app --server.port 8080   # the same, with flags for `streamlit run`
    grpo-playground toy --json               # any `python -m sim` command (sim/__main__.py's table)
    grpo-playground --help                   # the commands

The app starts as docs/serving.md starts it from a checkout: `streamlit run app.py` with OMP_NUM_THREADS=1 (one
student's run takes one core, not all of them) and MALLOC_ARENA_MAX=2 (memory goes back to the system after a
class), unless the environment sets them; Streamlit reads the app's .streamlit/config.toml beside app.py. The
process becomes Streamlit's (exec), so Ctrl-C and SIGTERM reach the server itself.
"""

from __future__ import annotations

import os
import sys

PROG = "grpo-playground"
APP_ENV = {"OMP_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2"}  # defaults: the environment's values win
APP_HELP = {"(none)": "start the app (streamlit run app.py; then open http://localhost:8501)",
            "app": "the same, passing any further flags to `streamlit run` (e.g. --server.port 8080)"}


def app_command(flags: list[str]) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that start the app."""
    from sim.paths import APP

    return [sys.executable, "-m", "streamlit", "run", str(APP), *flags], APP_ENV | dict(os.environ)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] == "app":
        cmd, env = app_command(argv[1:])
        os.execve(cmd[0], cmd, env)  # no return
    from sim.__main__ import main as sim_main  # --help, an unknown command and every other: sim's table

    return sim_main(argv, prog=PROG, extra=APP_HELP)
