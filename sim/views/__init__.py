"""What each view of the playground shows for a run: its player charts and captions, computed once.

The app's pages and a static lesson (sim/lesson) call the same functions, so a chart and its caption are
written once. Plain data (sim/player/spec.py), no UI framework.
"""
