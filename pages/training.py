"""Training dynamics: GRPO on the chapter's 24-prompt toy, computed and played in the browser (sim/views/training.py
declares it, with the app's lab numbers and exports)."""

from sim.views.training import VIEW, export, lab_extras
from ui.host import page_server
from ui.view import show_view

show_view(VIEW, page_server(), lab_extras=lab_extras, export=export)
