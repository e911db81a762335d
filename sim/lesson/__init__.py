"""A lesson: the playground's views as static files that open in any browser, offline, with no server.

`python -m sim lesson build OUT` writes one HTML page per view, the player's JavaScript and Plotly.js
(sim/player/plotly_js.py). Two kinds of view:
  * computed in the page (Training dynamics, Std scaling, the sharpening toy): the page carries the app's
    controls for the view and computes any setting they take with the engine's JavaScript twin of sim/
    (assets/engine.js) and the views' (assets/toy_views.js), proved equal to sim/ by the tests; the link
    holds the setting (live.js, assets/lesson_live.js);
  * computed ahead of time (the exercise views, TinyLM's recorded runs): every setting of a small grid, with
    the same sim/views functions the app's pages call, each setting's data an inline JSON block of its view's
    page (parsed with JSON.parse, never run: it works from file://, and a damaged block shows a "rebuild"
    message); the browser only selects, reveals and plays what was computed (lesson.js).
"""
