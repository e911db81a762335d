"""The entry point of a TinyLM run with TRL on several processes (every flag is `python -m sim tinylm`'s, cli.py):

    accelerate launch --num_processes 2 -m sim.tinylm.trl_run --json --out run.json   # data-parallel, CPU: gloo

Every rank trains; rank 0 evaluates, prints and writes --out. The training itself is sim/tinylm/trl_bridge.py's
(`python -m sim tinylm --trainer trl` is the one-process run); this module only launches it, so that imports point
one way: trl_run -> cli -> trl_bridge.
"""

from __future__ import annotations

import sys

from sim.tinylm.trl_bridge import MissingTRL, ProcessCountError, check_processes, processes, trl_story  # noqa: F401


def main(argv: list[str]) -> int:
    from sim.tinylm import cli

    return cli.main(["--trainer", "trl", *argv])


if __name__ == "__main__":
    from sim.__main__ import exit_process

    exit_process(main(sys.argv[1:]))
