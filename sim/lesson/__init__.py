"""A lesson: the playground's views as static files that open in any browser, offline, with no server.

`python -m sim lesson build OUT` computes every setting of a grid ahead of time with sim/ (the same
functions the app's pages call, sim/views) and writes one HTML page per view, the player's JavaScript,
Plotly.js (sim/player/plotly_js.py), each setting's data an inline JSON block of its view's page (parsed with
JSON.parse, never run: it works from file://, and a damaged block shows a "rebuild" message). The browser only
selects, reveals and plays what was computed; it holds no formula.
"""
