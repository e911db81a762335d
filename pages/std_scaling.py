"""Std scaling (Exercise 15.4): how the std division reweights prompts and what it does to training
(sim/views/std_scaling.py declares the view)."""

from sim.views.std_scaling import VIEW
from ui.host import page_server
from ui.view import show_view

show_view(VIEW, page_server())
