"""Your run: a GRPO run's log read with Chapter 15 (sim/views/your_data.py declares it; ui/your_data.py draws it)."""

from ui.host import page_server
from ui.your_data import your_run

your_run(page_server())
