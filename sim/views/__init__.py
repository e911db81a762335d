"""Every view of the playground, declared once (doc.py: its controls, words, questions and charts; catalog.py: the
list). The app (ui/view.py) and a static lesson (sim/lesson, assets/js/doc.js) draw the same declaration, so a chart
and its caption are written once. Plain data (sim/player/spec.py), no UI framework.
"""
