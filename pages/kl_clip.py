"""KL and clipping: k1, k2, k3, PPO's clip and its successors (sim/views/kl_clip.py declares the view)."""

from sim.views.kl_clip import VIEW, lab_extras
from ui.host import page_server
from ui.view import show_view

show_view(VIEW, page_server(), lab_extras=lab_extras)
