"""Your prompts: a pool's pass rates read with "Groups that teach nothing" (sim/views/your_data.py declares it;
ui/your_data.py draws it)."""

from ui.host import page_server
from ui.your_data import your_prompts

your_prompts(page_server())
