"""A visitor's own file on a page: uploaded into this session only, parsed once, shown as plain text.

    log, label, mine = user_file("run", "Your run's log", ("json", "csv"), load_run_log, EXAMPLE, "the example run")

Where the file lives: Streamlit keeps an upload in the server's memory for the session that sent it (its
MemoryUploadedFileManager; nothing is written to disk), and this module keeps only the parsed result in that
session's st.session_state, keyed by the upload's id. No st.cache_data / st.cache_resource sees it (those
are shared by every session), and the page's link holds only the page's settings (ui/controls.py), never the
file. Without an upload the page shows the
project's example, read from assets/ (that one is cached for everyone: it is ours).

Text from the file (its name, column names, prompt text, reward functions' names) is shown with `show_text`
(st.text: no Markdown, no HTML) after sim.validate.neutral has escaped invisible and bidi characters; in a
chart it goes through `chart_text` (Plotly reads <b>, <a href> and entities in labels).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from sim.paths import ASSETS
from sim.yourdata.datafile import MAX_BYTES, DataError, cell_text
from ui.text import chart_text, md, show_text  # noqa: F401  (re-exported for the pages)


@st.cache_resource(show_spinner=False, max_entries=4)
def _example(path: str, reader: str, _parse: Callable):
    """The project's example file (a path under assets/), parsed once per server (not user data); `reader`
    names _parse for the key."""
    p = ASSETS / path
    return _parse(p.read_bytes(), p.name)


def user_file(key: str, label: str, types: tuple[str, ...], parse: Callable[[bytes, str], object], example: str,
              example_name: str, *, help: str | None = None) -> tuple[object, str, bool]:
    """The uploader, then (parsed object, file label, is it the visitor's). With no upload: the example. A file
    that cannot be read: the reason in one line (plain text) and the page stops there."""
    up = st.file_uploader(label, type=list(types), key=f"{key}_upload", help=help)
    st.caption(f"Your file stays in this browser session: it is not saved on the server, not shared with other "
               f"visitors, and not in this page's link (the link holds the settings only). Up to "
               f"{MAX_BYTES // 2**20} MB.")
    if up is None:
        st.session_state.pop(f"_{key}_parsed", None)  # the visitor removed their file: forget it
        st.caption(f"Showing {example_name}. Upload a file above to see yours.")
        return _example(example, f"{parse.__module__}.{parse.__name__}", parse), Path(example).name, False
    slot = f"_{key}_parsed"
    held = st.session_state.get(slot)
    if held is None or held[0] != up.file_id:
        try:
            if up.size > MAX_BYTES:
                raise DataError(f"{cell_text(up.name, 60)}: {up.size / 2**20:,.1f} MB is over the "
                                f"{MAX_BYTES // 2**20} MB cap")
            held = (up.file_id, parse(up.getvalue(), up.name), None)
        except DataError as e:
            held = (up.file_id, None, str(e))
        st.session_state[slot] = held
    if held[2] is not None:
        st.error("This file cannot be read:", icon=":material/error:")
        show_text(held[2])
        st.stop()
    return held[1], cell_text(up.name, 60), True


def file_line(name: str, what: str) -> None:
    """One plain-text line naming the file shown."""
    show_text(f"{what}: {name}")
