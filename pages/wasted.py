"""Wasted groups: P(group teaches nothing) = p^G + (1 - p)^G (sim/views/wasted.py declares the view)."""

from sim.views.wasted import VIEW
from ui.host import page_server
from ui.view import show_view

show_view(VIEW, page_server())
