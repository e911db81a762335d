"""pytest setup for the chapter's lab: make the playground's `sim` package importable.

`python -m pytest -q` in this directory tests tasks.py; `RL_SOLUTIONS=1 python -m pytest -q`
tests the reference solutions instead (see test_tasks.py).
"""

import sys
from pathlib import Path

PROJECT_ROOT = None  # `python -m sim lab new` writes the playground's directory here


def _find_playground() -> None:
    try:
        import sim.lab.checks  # noqa: F401 - already importable (run from the playground, or installed)

        return
    except ImportError:
        pass
    for root in (PROJECT_ROOT, Path(__file__).resolve().parents[1]):
        if root and (Path(root) / "sim" / "lab" / "checks.py").is_file():
            sys.path.insert(0, str(root))
            return
    raise RuntimeError("cannot find the GRPO Playground (its sim/ package): run pytest with PYTHONPATH set to the "
                       "playground's directory")


_find_playground()
