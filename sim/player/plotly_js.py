"""The Plotly.js file the player and the lesson run, in one place: the app's route, the test apps' static copy
and a lesson's folder all serve these bytes.

It is Plotly.js's "cartesian" partial bundle, vendored in assets/vendor/ (see its README): every chart the
player or a lesson draws is a scatter, bar or heatmap, and the full bundle's start-up took twice as long.
"""

from sim.paths import VENDOR

VERSION = "4.1.1"  # also the Plotly.js inside requirements.txt's plotly package (tests/test_player.py checks)
PLOTLY_JS = VENDOR / f"plotly-cartesian-{VERSION}.min.js"
# the name a browser sees carries the version, so a cached copy is never stale
PLOTLY_JS_NAME = PLOTLY_JS.name
