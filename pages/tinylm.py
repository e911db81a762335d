"""TinyLM: GRPO on a small transformer that learns two-digit addition, trained in the reader's browser
(sim/views/tinylm.py declares it; assets/js/tinylm_views.js draws it)."""

from sim.views.tinylm import VIEW
from ui.host import page_server
from ui.view import show_view

show_view(VIEW, page_server())
