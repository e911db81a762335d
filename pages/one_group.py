"""One group: the chapter's worked example (sim/views/one_group.py declares the view)."""

from sim.views.one_group import VIEW, lab_extras
from ui.host import page_server
from ui.view import show_view

show_view(VIEW, page_server(), lab_extras=lab_extras)
