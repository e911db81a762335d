"""TinyLM: a real GRPO run on a small transformer that learns two-digit addition (sim/views/tinylm.py declares the
view; ui/tinylm.py draws the trainer's controls and the live run)."""

from ui.host import page_server
from ui.tinylm import tinylm_page

tinylm_page(page_server())
