"""pass@k: the unbiased estimator, the chapter's crossing curves, the toy before/after and the sharpening toy
(sim/views/passk.py declares the view)."""

from sim.views.passk import VIEW
from ui.host import page_server
from ui.view import show_view

show_view(VIEW, page_server())
