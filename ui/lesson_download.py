"""The sidebar's "Download this lesson": a zip of the default lesson (sim/lesson), built once per server on
the first request, in a background thread (the page polls its progress), then served from memory to everyone.
"""

from __future__ import annotations

import io
import tempfile
import threading
import zipfile
from pathlib import Path

import streamlit as st


class LessonZip:
    """One build of the default lesson into a zip in memory: progress, then the bytes or an error."""

    def __init__(self):
        self.lock = threading.Lock()
        self.started = False
        self.done, self.total = 0, 1
        self.data: bytes | None = None
        self.error: str | None = None
        self.all_settings, self.done_before = 1, {}

    def start(self) -> None:
        with self.lock:
            if self.started:
                return
            self.started = True
        threading.Thread(target=self._build, name="lesson-zip", daemon=True).start()

    def _say(self, view: str, done: int, total: int) -> None:
        self.done, self.total = self.done_before.get(view, 0) + done, self.all_settings

    def _build(self) -> None:
        from sim.lesson.build import build
        from sim.lesson.views import default_views

        try:
            views = default_views()
            sizes = [len(v.entries) for v in views]
            self.all_settings = sum(sizes)
            self.done_before = {v.name: sum(sizes[:i]) for i, v in enumerate(views)}
            with tempfile.TemporaryDirectory(prefix="grpo-lesson-") as tmp:
                out = Path(tmp) / "grpo-lesson"
                build(out, views, say=self._say)
                buf = io.BytesIO()
                with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
                    for f in sorted(out.rglob("*")):
                        if f.is_file():
                            z.write(f, f"grpo-lesson/{f.relative_to(out)}")
            self.data = buf.getvalue()
        except Exception as e:  # noqa: BLE001  (shown on the page as text: the server keeps running)
            self.error = f"{type(e).__name__}: {e}"


@st.cache_resource(show_spinner=False)
def _lesson_zip() -> LessonZip:
    return LessonZip()


@st.fragment(run_every=1.0)
def _poll(job: LessonZip) -> None:
    if job.data is None and job.error is None:
        st.progress(min(job.done / max(job.total, 1), 1.0), text=f"Building the lesson… {job.done}/{job.total}")
        return
    st.rerun()


def lesson_download() -> None:
    """In the sidebar: a button that builds the lesson (once per server), its progress, then the download."""
    job = _lesson_zip()
    with st.sidebar:
        if job.data is not None:
            st.download_button("Download this lesson", job.data, file_name="grpo-lesson.zip", mime="application/zip",
                               icon=":material/download:", key="lesson_zip", on_click="ignore",
                               help="the views as static pages that open offline (unzip, open index.html)")
        elif job.error is not None:
            st.caption("The lesson could not be built:")
            st.text(job.error)
        elif job.started:
            _poll(job)
        else:
            st.button("Download this lesson", icon=":material/download:", key="lesson_build", on_click=job.start,
                      help="builds the static lesson once for this server (about a minute), then offers the zip")
