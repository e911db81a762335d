"""The sidebar's "Download this lesson": a zip of the default lesson (sim/lesson), built once per server on
the first request, in a worker process of its own (sim.lesson.build.lesson_zip: about 2 s here, the lesson computing
in the page; the server's sessions never wait behind it and the page polls its progress), then served from memory
to everyone. The one LessonZip is the server's (`server.lesson_zip`).
"""

from __future__ import annotations

import threading

import streamlit as st

BUILD_TIMEOUT_S = 900.0
BUILD_MEMORY_MB = 4096


class LessonZip:
    """One build of the default lesson into a zip in memory: progress, then the bytes or an error."""

    def __init__(self, view_names: str | None = None):
        self.view_names = view_names  # None: the default lesson; else only these views (as the CLI's --views)
        self.lock = threading.Lock()
        self.started = False
        self.done, self.total = 0, 1
        self.data: bytes | None = None
        self.error: str | None = None

    def start(self) -> None:
        with self.lock:
            if self.started:
                return
            self.started = True
        threading.Thread(target=self._build, name="lesson-zip", daemon=True).start()

    def _progress(self, message) -> None:
        self.done, self.total = (int(x) for x in message)

    def _build(self) -> None:
        from sim.lesson.build import lesson_zip
        from sim.runtime.procs import Worker

        worker = Worker(memory_mb=BUILD_MEMORY_MB, name="the lesson build")
        try:
            reply = worker.call(lesson_zip, (self.view_names,), task=True, on_message=self._progress,
                                timeout=BUILD_TIMEOUT_S)
        finally:
            worker.close()
        if reply.ok and isinstance(reply.value, bytes):
            self.data = reply.value
        else:  # shown on the page as text: the server keeps running
            self.error = reply.message or "the build gave no zip"


@st.fragment(run_every=1.0)
def _poll(job: LessonZip) -> None:
    if job.data is None and job.error is None:
        st.progress(min(job.done / max(job.total, 1), 1.0), text=f"Building the lesson… {job.done}/{job.total}")
        return
    st.rerun()


def lesson_download(server) -> None:
    """In the sidebar: a button that builds the lesson (once per server), its progress, then the download."""
    job = server.lesson_zip
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
                      help="builds the static lesson once for this server (a few seconds), then offers the zip")
