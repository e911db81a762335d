"""A visitor's own file on a page: uploaded into this session only, parsed once, shown as plain text.

    log, label, mine = user_file(server, "run", "Your run's log", ("json", "csv"), EXAMPLE, "the example run")

The uploader sits folded under one line at the top of the page ("Upload your own: ..."), so that the page's first
chart is on the first screen of a phone and of a projector; the line under it says which file the page shows.

Where the file lives: Streamlit keeps an upload in the server's memory for the session that sent it (its
MemoryUploadedFileManager; nothing is written to disk), and this module keeps only the parsed result in that
session's st.session_state, keyed by the upload's id. The parsing runs in the server's file worker
(sim/yourdata/reader.py: another process, a time limit, a memory cap; small files in a worker of their own, one file
per visitor in each line), with the page's place in the gate given up meanwhile, so a slow or huge file never
stalls another visitor's page or upload. No st.cache_data / st.cache_resource sees
it (those are shared by every session), and the page's link holds only the page's settings (read by the page's
script, assets/js/control_rules.js), never the file. Without an upload the page shows the project's example, read
from assets/ (that one is cached for everyone: it is ours).

Text from the file (its name, column names) is shown here with `show_text` (st.text: no Markdown, no HTML) after
sim.validate.neutral has escaped invisible and bidi characters; in the page's document every text is plain text, and
in a chart a label goes through sim/yourdata/words.py `label` (Plotly reads <b>, <a href> and entities in labels).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from sim.paths import ASSETS
from sim.runtime.procs import malloc_trim
from sim.validate import neutral
from sim.yourdata.datafile import MAX_BYTES, DataError, cap_text, cell_text
from sim.yourdata.reader import READERS, read_upload

TRIMMED = "_your_data_trimmed"  # st.session_state: this session's first visit handed the server's free memory back


@st.cache_resource(show_spinner=False, max_entries=4)
def _example(path: str, reader: str, _parse: Callable):
    """The project's example file (a path under assets/), parsed once per server (not user data); `reader`
    names _parse for the key."""
    p = ASSETS / path
    return _parse(p.read_bytes(), p.name)


def user_file(server, kind: str, label: str, types: tuple[str, ...], example: str, example_name: str, *,
              help: str | None = None) -> tuple[object, str, bool]:
    """The uploader (folded under "Upload your own: `label`"), then (parsed object, file label, is it the
    visitor's). kind: "run" (a log) or "pool" (a pool of prompts), read by sim.yourdata.reader in the server's file
    worker. With no upload: the example. A file that cannot be read: the reason in one line (plain text) and the
    page stops there."""
    parse, key = READERS[kind], {"run": "run", "pool": "prompts"}[kind]
    pool = server.file_pool  # started in the background on the page's first visit, before a file is chosen
    with st.expander(f"Upload your own: {label}"):
        up = st.file_uploader(label, type=list(types), key=f"{key}_upload", help=help, label_visibility="collapsed")
        st.caption(f"Your file stays in this browser session: it is not saved on the server, not shared with other "
                   f"visitors, and not in this page's link (the link holds the settings only: whoever opens it sees "
                   f"the example until they upload their own). Up to {cap_text()} ({MAX_BYTES:,} bytes). Without "
                   f"one, the page shows {example_name}.")
    slot = f"_{key}_parsed"
    if up is None:
        if not st.session_state.get(TRIMMED):  # once per visit: what sessions Streamlit dropped freed goes back
            malloc_trim()  # (a C call, the interpreter lock released; 30-60 ms on a fragmented heap)
            st.session_state[TRIMMED] = True
        st.session_state.pop(slot, None)  # the visitor removed their file: forget it
        return _example(example, f"{parse.__module__}.{parse.__name__}", parse), Path(example).name, False
    held = st.session_state.get(slot)
    if held is None or held[0] != up.file_id:
        st.session_state.pop(slot, None)  # the previous file's result goes before the next is read
        try:
            if up.size > MAX_BYTES:
                raise DataError(f"{cell_text(up.name, 60)}: {up.size:,} bytes is over the cap of {MAX_BYTES:,} "
                                f"bytes ({cap_text()})")
            with st.spinner("Reading your file…"):
                held = (up.file_id, read_upload(pool, kind, up.getvalue(), up.name, who=_session_id()), None)
        except DataError as e:
            held = (up.file_id, None, str(e))
        finally:
            malloc_trim()  # the upload's copies (read, pickled to the worker) go back to the system
        st.session_state[slot] = held
    if held[2] is not None:
        st.error("This file cannot be read:", icon=":material/error:")
        show_text(held[2])
        st.stop()
    return held[1], cell_text(up.name, 60), True


def _session_id() -> str | None:
    """This visitor's session (the file workers keep one file of theirs in line: sim/yourdata/reader.py)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def weak_data(fn: Callable, obj, *args) -> Callable[[], str]:
    """A download button's deferred data, fn(obj, *args), holding obj weakly. Streamlit 1.67 keeps a deferred
    download's callable in its media file manager until the session shuts down, and a disconnected session that
    outlives server.disconnectedSessionTTL is dropped from its store without a shutdown: a strong reference would
    keep a visitor's parsed file (a million prompts: about 100 MB) alive for the server's life. The session's state
    holds obj strongly while the session lives; afterwards the download is empty."""
    ref = weakref.ref(obj)

    def data() -> str:
        held = ref()
        return "" if held is None else fn(held, *args)

    return data


def show_text(text: str) -> None:
    """Text that came from outside, as plain text (st.text), invisible characters escaped, lines kept."""
    st.text(neutral(text, keep_newlines=True))


def file_line(name: str, what: str, mine: bool) -> None:
    """One plain-text line naming the file shown (the example's says so)."""
    show_text(f"{what}: {name}" + ("" if mine else " (the example)"))


def file_notes(notes) -> None:
    """What reading the file left out or assumed, one plain-text line each (below the page's document: a CSV's
    fifty ignored columns do not push its first chart off the screen)."""
    for note in notes:
        show_text(f"Note: {note}")
