"""`python -m grpo_playground`: the same as the `grpo-playground` command."""

import sys

from grpo_playground.cli import main

sys.exit(main())
