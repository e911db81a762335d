"""The browser player's data, without a browser or a UI framework: the chart declarations (`spec`) and
their compact JSON encoding (`encode`). ui/view.py sends it to the app's page; sim/lesson writes it into
a static lesson. Both call the same `build_payload`, so the two receive identical data for a run."""

from sim.player.encode import build_payload, decode_array, encode_array, payload_bytes
from sim.player.spec import COLORS, REVEALS, Band, Bars, BarSeries, Chart, Heatmap, Line, Trace, rgba

__all__ = ["COLORS", "REVEALS", "Band", "Bars", "BarSeries", "Chart", "Heatmap", "Line", "Trace", "build_payload",
           "decode_array", "encode_array", "payload_bytes", "rgba"]
