"""Training dynamics: GRPO on the chapter's 24-prompt toy, computed and played in the browser (sim/views/training.py
declares the view; ui/training.py adds the app's pin, new seed and exports)."""

from sim.views.training import VIEW
from ui.host import page_server
from ui.training import buttons_and_exports, pinned
from ui.view import show_view

show_view(VIEW, page_server(), before=pinned, after=buttons_and_exports)
