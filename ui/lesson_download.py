"""The sidebar's "Download this lesson": one link to the server's route for grpo-lesson.zip, the default lesson
(sim/lesson) built once per server in a worker process of its own (sim.lesson.build.lesson_zip: a few seconds, the
lesson computing in the page) and served from memory to everyone. The first click starts the build and waits for it (the
route awaits it off the event loop, a few seconds), then the download starts; later clicks get the zip at once: one
click either way. A plain link with `download`, so the page stays where it is. The one LessonZip is the server's
(`server.lesson_zip`).
"""

from __future__ import annotations

import asyncio
import html
import threading

import streamlit as st

BUILD_TIMEOUT_S = 900.0
BUILD_MEMORY_MB = 4096
ZIP_NAME = "grpo-lesson.zip"


class LessonZip:
    """One build of the default lesson into a zip in memory: progress, then the bytes or an error."""

    def __init__(self, view_names: str | None = None):
        self.view_names = view_names  # None: the default lesson; else only these views (as the CLI's --views)
        self.lock = threading.Lock()
        self.started = False
        self.finished = threading.Event()
        self.done, self.total = 0, 1
        self.data: bytes | None = None
        self.error: str | None = None

    def start(self) -> None:
        with self.lock:
            if self.started:
                return
            self.started = True
        threading.Thread(target=self._build, name="lesson-zip", daemon=True).start()

    def wait(self, timeout: float = BUILD_TIMEOUT_S) -> bool:
        """Start the build if nobody has, and wait for its end; True once it has ended (zip or error)."""
        self.start()
        return self.finished.wait(timeout)

    def _progress(self, message) -> None:
        self.done, self.total = (int(x) for x in message)

    def _build(self) -> None:
        from sim.lesson.build import lesson_zip
        from sim.runtime.procs import Worker

        try:
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
        except Exception as e:  # a worker that cannot start: said on the page, never a traceback
            self.error = f"{type(e).__name__}: {e}"
        finally:
            self.finished.set()

    def route(self):
        """The Starlette route of the zip (`/assets/grpo-lesson.zip`): the bytes as a download once built; while
        it builds, the request waits for it; a failed build is a plain-text 503 that says why."""
        from starlette.responses import PlainTextResponse, Response
        from starlette.routing import Route

        async def serve(request):
            await asyncio.to_thread(self.wait)
            if self.data is None:
                return PlainTextResponse(f"The lesson could not be built: {self.error or 'the build did not end'}",
                                         status_code=503)
            return Response(self.data, media_type="application/zip", headers={
                "Content-Disposition": f'attachment; filename="{ZIP_NAME}"', "Cache-Control": "no-cache"})

        return Route(f"/assets/{ZIP_NAME}", serve)


def lesson_download(server) -> None:
    """In the sidebar: the download, one click (the server's route), or why the lesson could not be built."""
    job = server.lesson_zip
    url = server.route_url(ZIP_NAME)
    with st.sidebar:
        if job.error is not None:
            st.caption("The lesson could not be built:")
            st.text(job.error)
        elif url is not None:
            note = "Static pages that open offline." if job.data else "The first download takes a few seconds."
            st.html(f'<a class="grpo-download" href="{html.escape(url)}" download="{ZIP_NAME}" title="the views as '
                    'static pages that open offline (unzip, open index.html)">⬇ Download this lesson</a>'
                    f'<p class="grpo-download-note">{note}</p>')
