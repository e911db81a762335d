"""A lesson: the playground's views as static files that open in any browser, offline, with no server.

`python -m sim lesson build OUT` writes one HTML page per view (sim/views/catalog.py), one script (lesson.js: the
engine, the views' JavaScript twins, the chart code and the player, assets/) and Plotly.js (sim/player/plotly_js.py).
A page carries its view's declaration (title, intro, controls, presets: sim/views/doc.py) and computes its
document for the setting on screen with the JavaScript twin of sim/views (proved equal by tests/test_js_twins.py);
TinyLM's page holds the document sim computed from its recorded runs, as inline JSON that the page parses and never
runs. Views that need a visitor's file or the server (Your run, Your prompts, Lab) are listed on the contents page
as the app's only.
"""
