"""A headless browser tab for Streamlit 1.67: speaks the websocket protocol the way Chromium's frontend does.

No browser, no rendering: one `Tab` opens `/_stcore/stream`, sends the same `BackMsg`s the frontend
(`static/js/index.*.js`, 1.67) sends for the same user actions, and keeps the little state those messages
depend on. What it copies from the frontend, rule by rule:

- **Opening a page.** GET `/_stcore/health` and `/_stcore/host-config`, then the websocket (subprotocol
  `streamlit`, an `Origin` header, no client pings). The first `rerun_script` carries `page_name` (the URL
  path) and empty `widget_states`; every later one carries `page_script_hash`: the page the last
  `navigation` message named (`st.navigation` apps), else the last `new_session`'s.
- **The navigation** (`Tab.navigate`): a click in the sidebar is a rerun of the same session with the
  target page's `page_script_hash` (from the last `navigation` message's `app_pages`), the query string
  dropped and no widget states.
- **Widget states.** Every widget the page draws commits its value on mount (slider `double_array_value`,
  checkbox/toggle `bool_value`, radio/selectbox `string_value`, multiselect `string_array_value`, ...):
  the element's `default`, or its `value` when the server sets `set_value`. EVERY rerun carries all of
  them (the frontend's widget map); widgets that a finished run no longer draws are dropped.
- **A button click** is one rerun whose states end with `{id, trigger_value: true}`; the trigger is
  then forgotten. A disabled button cannot be clicked.
- **A widget bound to the URL** (`query_param_key`) writes `key=value` into the query string when the
  user changes it (removed again at its default); `rerun_script.query_string` carries it.
- **`auto_rerun` (fragment `run_every`)** starts a timer on a fixed grid (JavaScript `setInterval`):
  each beat sends a fragment rerun (`fragment_id`, `is_auto_rerun`) whether or not the last run
  finished; beats missed while late are skipped; the same interval again is ignored. `stop_auto_rerun`
  and every full-app `new_session` cancel the timers (the frontend's `cleanupAutoReruns`).
- **The message cache.** Large elements come marked `cacheable`; the tab keeps them and lists their hashes
  in `cached_message_hashes`, so the server answers with `ref_hash` stubs exactly as it does to Chromium;
  entries expire after `max_cached_message_age` finished runs (fragment runs only age their fragment's).

What it measures: finished runs by kind (full / fragment, read from `script_finished` and its run
identity), errors (exception or error elements on the page, lost connections, cache misses), and,
through `expect`, when the first chart carrying given content arrives.
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

FINISHED_OK, FINISHED_EARLY_FOR_RERUN, FINISHED_FRAGMENT_OK = 0, 2, 3  # ForwardMsg.ScriptFinishedStatus
# Elements that can carry a chart's data: where "new data arrived" is looked for.
CHART_KINDS = frozenset(
    {
        "plotly_chart",
        "bidi_component",  # st.components.v2.component
        "component_instance",  # st.components.v1
        "vega_lite_chart",
        "deck_gl_json_chart",
        "echarts_chart",
        "graphviz_chart",
    }
)
BUTTON_KINDS = frozenset({"button"})
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _get(url: str, timeout: float) -> bytes:
    with _NO_PROXY.open(url, timeout=timeout) as response:
        return response.read()


def js_string(value) -> str:
    """String(value) as JavaScript writes it (9.0 -> "9", True -> "true"): the URL form of a widget value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def initial_state(kind: str, w) -> WidgetState | None:
    """The state a widget of `kind` commits when it mounts (None: the frontend commits nothing)."""
    s = WidgetState(id=w.id)
    use = getattr(w, "set_value", False)
    if kind == "slider":
        s.double_array_value.data.extend(w.value if use else w.default)
    elif kind == "checkbox":
        s.bool_value = w.value if use else w.default
    elif kind in ("radio", "selectbox"):
        if use:
            s.string_value = w.raw_value
        elif w.HasField("default") and 0 <= w.default < len(w.options):
            s.string_value = w.options[w.default]
        else:
            return None  # no selection: nothing committed
    elif kind == "multiselect":
        s.string_array_value.data.extend(w.raw_values if use else [w.options[i] for i in w.default])
    elif kind in ("text_input", "text_area"):
        s.string_value = w.value if use else w.default
    elif kind == "number_input":
        x = w.value if use else w.default
        if w.data_type == NumberInput.INT:
            s.int_value = int(x)
        else:
            s.double_value = x
    else:
        return None  # buttons and anything this client does not emulate
    return s


def url_value(kind: str, w) -> str | None:
    """The URL form of a widget's default, for the "drop the parameter at its default" rule."""
    s = initial_state(kind, w)
    if s is None:
        return None
    which = s.WhichOneof("value")
    v = getattr(s, which)
    if which.endswith("array_value"):
        v = list(v.data)
        return js_string(v[0]) if len(v) == 1 else ",".join(js_string(x) for x in v)
    return js_string(v)


@dataclass
class Widget:
    """A widget or button the page drew: enough to click it or change it as a user would."""

    id: str
    kind: str
    label: str
    fragment_id: str  # "" outside fragments
    run_id: str  # the script run that drew it last
    disabled: bool
    query_param_key: str
    default_url: str | None
    proto: object

    @property
    def key(self) -> str:
        """The user key of `$$ID-<hash>-<key>` ids."""
        parts = self.id.split("-", 2)
        return parts[2] if self.id.startswith("$$ID-") and len(parts) == 3 else self.id


WAIT_LINE = re.compile(r"(Computing this setting|The server is busy|Computed; the server is busy)")  # ui/work.py


@dataclass
class _Expectation:
    pattern: re.Pattern
    since: float
    future: asyncio.Future


@dataclass
class TabStats:
    full_runs: int = 0  # finished successfully
    fragment_runs: int = 0  # fragment runs finished successfully: frames served while playing
    interrupted_runs: int = 0  # finished early for a newer request
    sent: int = 0
    received: int = 0
    bytes_received: int = 0
    waits_shown: int = 0  # "Computing this setting: N ahead ..." / "The server is busy ..." lines (ui/work.py)
    errors: list[str] = field(default_factory=list)


class Tab:
    """One emulated browser tab on `base_url/path?query`."""

    def __init__(self, base_url: str, path: str = "", query: str = "", *, record: bool = False):
        self.base_url = base_url.rstrip("/")
        self.path = path.strip("/")
        self.params: dict[str, str] = dict(p.split("=", 1) if "=" in p else (p, "") for p in query.split("&") if p)
        self.record: list[tuple[float, BackMsg]] | None = [] if record else None
        self.stats = TabStats()
        self.widgets: dict[str, Widget] = {}  # by id, in drawing order
        self.states: dict[str, WidgetState] = {}  # the frontend's widget map
        self.page_script_hash = ""
        self.pages: dict[str, str] = {}  # the app's navigation: url path -> page script hash
        self.run_id = ""  # the run whose messages are arriving (its new_session came last)
        self.run_started = 0.0  # when that new_session arrived
        self.timers: dict[str, tuple[float, asyncio.Task]] = {}  # fragment id -> (interval, task)
        self._cache: dict[str, list] = {}  # hash -> [raw bytes, run count, fragment id]
        self._cache_runs = 0
        self._max_cache_age = 2
        self._new_session_seen = False
        self._navigation_seen = False
        self._expectations: list[_Expectation] = []
        self.last_sent = 0.0
        self.full_run_finished_at = 0.0  # when the last full-app run finished successfully
        self.component_json = ""  # the data the page's last st.components.v2 component received (its JSON)
        self._finished = asyncio.Event()  # set by each finished full run
        self._ws = None
        self._reader: asyncio.Task | None = None
        self.closed = False

    # ---- connection ----
    @property
    def url(self) -> str:
        qs = self.query_string
        return f"{self.base_url}/{self.path}" + (f"?{qs}" if qs else "")

    @property
    def query_string(self) -> str:
        return urlencode(self.params)

    async def open(self, timeout: float = 30.0) -> None:
        """Load the page as the browser does and send the first rerun."""
        for endpoint in ("/_stcore/health", "/_stcore/host-config"):
            await asyncio.to_thread(_get, self.base_url + endpoint, timeout)
        parts = urlsplit(self.base_url)
        self._ws = await connect(
            f"ws://{parts.netloc}/_stcore/stream",
            subprotocols=["streamlit"],
            origin=f"{parts.scheme}://{parts.netloc}",
            proxy=None,
            max_size=None,
            ping_interval=None,  # Chromium sends no pings; it answers the server's
            open_timeout=timeout,
        )
        self._reader = asyncio.create_task(self._read())
        await self._send_rerun(first=True)

    async def navigate(self, path: str) -> float:
        """Open another page from the app's navigation, as a click in its sidebar does: a rerun of this session
        (no new connection) with that page's hash, the query string dropped and no widget states. Returns when it
        was sent (wait_full_run(after=...) then waits for the page)."""
        path = path.strip("/")
        if path not in self.pages:
            raise ValueError(f"/{path} is not in this app's navigation ({sorted(self.pages)})")
        self.path, self.params, self.page_script_hash = path, {}, self.pages[path]
        self.widgets.clear()
        self.states.clear()
        return await self._send_rerun()

    async def close(self) -> None:
        self.closed = True
        for _, task in self.timers.values():
            task.cancel()
        self.timers.clear()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
        for e in self._expectations:
            e.future.cancel()

    # ---- what the page shows ----
    def widget(self, key: str) -> Widget | None:
        return next((w for w in self.widgets.values() if w.key == key and w.kind not in BUTTON_KINDS), None)

    def button(self, label: str) -> Widget | None:
        return next((w for w in self.widgets.values() if w.kind in BUTTON_KINDS and w.label == label), None)

    @property
    def playing(self) -> bool:
        """A fragment timer is running (the page animates through server reruns)."""
        return bool(self.timers)

    @property
    def idle(self) -> bool:
        """The page shows the answer to everything sent (a full run finished after the last message)."""
        return self.full_run_finished_at > self.last_sent

    # ---- user actions ----
    async def set_value(self, key: str, value) -> float:
        """Move a slider / tick a box / pick an option; returns the send time (time.monotonic())."""
        w = self.widget(key)
        if w is None:
            raise KeyError(f"no widget with key {key!r} on the page")
        s = WidgetState(id=w.id)
        if w.kind == "slider":
            s.double_array_value.data.append(float(value))
        elif w.kind == "checkbox":
            s.bool_value = bool(value)
        elif w.kind in ("radio", "selectbox", "text_input", "text_area"):
            s.string_value = str(value)
        elif w.kind == "number_input" and w.proto.data_type == NumberInput.INT:
            s.int_value = int(value)
        elif w.kind == "number_input":
            s.double_value = float(value)
        else:
            raise ValueError(f"{key!r} is a {w.kind}: not emulated")
        self.states[w.id] = s
        if w.query_param_key:
            text = js_string(value)
            if text == w.default_url:
                self.params.pop(w.query_param_key, None)
            else:
                self.params[w.query_param_key] = text
        return await self._send_rerun(fragment_id=w.fragment_id)

    async def click(self, label: str) -> float | None:
        """Click the enabled button labelled `label`; None (nothing sent) if there is none."""
        b = self.button(label)
        if b is None or b.disabled:
            return None
        self.states[b.id] = WidgetState(id=b.id, trigger_value=True)
        try:
            return await self._send_rerun(fragment_id=b.fragment_id)
        finally:
            self.states.pop(b.id, None)

    def expect(self, pattern: re.Pattern, since: float) -> asyncio.Future:
        """A future set to the arrival time of the first chart element matching `pattern` (bytes regex)
        in a script run that started at or after `since`."""
        fut = asyncio.get_running_loop().create_future()
        self._expectations.append(_Expectation(pattern, since, fut))
        return fut

    async def wait_full_run(self, after: float, timeout: float) -> bool:
        """Wait until a full-app run finishes (successfully) at or after `after`; False on timeout."""
        deadline = time.monotonic() + timeout
        while self.full_run_finished_at < after:
            self._finished.clear()
            try:
                await asyncio.wait_for(self._finished.wait(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                return False
        return True

    # ---- sending ----
    async def _send_rerun(self, *, first: bool = False, fragment_id: str = "", auto: bool = False) -> float:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query_string
        if first:
            cs.page_name = self.path
            cs.widget_states.SetInParent()
        else:
            cs.page_script_hash = self.page_script_hash
            cs.widget_states.widgets.extend(self.states.values())
        cs.fragment_id = fragment_id
        cs.is_auto_rerun = auto
        cs.cached_message_hashes.extend(self._cache)
        ci = cs.context_info
        ci.timezone, ci.timezone_offset, ci.locale = "UTC", 0, "en-US"
        ci.url, ci.is_embedded, ci.color_scheme = self.url, False, "light"
        self._new_session_seen = False
        t = time.monotonic()
        if self.record is not None:
            self.record.append((t, msg))
        await self._ws.send(msg.SerializeToString())
        self.stats.sent += 1
        self.last_sent = t
        return t

    async def _tick(self, fragment_id: str, interval: float) -> None:
        """setInterval: beats on a fixed grid, sent whatever the last run did; late beats are skipped."""
        loop = asyncio.get_running_loop()
        start, beat = loop.time(), 1
        while not self.closed:
            await asyncio.sleep(max(0.0, start + beat * interval - loop.time()))
            try:
                await self._send_rerun(fragment_id=fragment_id, auto=True)
            except Exception:  # the connection is gone: the reader reports it
                return
            beat = int((loop.time() - start) // interval) + 1

    def _cancel_timers(self, ids=None) -> None:
        for fid in list(self.timers) if ids is None else ids:
            entry = self.timers.pop(fid, None)
            if entry is not None:
                entry[1].cancel()

    # ---- receiving ----
    async def _read(self) -> None:
        try:
            async for raw in self._ws:
                self._handle(raw, time.monotonic())
        except Exception as e:  # noqa: BLE001 - any failure of the connection is an error to report
            if not self.closed:
                self.stats.errors.append(f"connection: {type(e).__name__}: {e}"[:200])
        else:
            if not self.closed:
                self.stats.errors.append("connection: closed by the server")
        self._cancel_timers()

    def _handle(self, raw: bytes, now: float) -> None:
        self.stats.received += 1
        self.stats.bytes_received += len(raw)
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":  # the element is in our cache: what the frontend does with it
            entry = self._cache.get(msg.ref_hash)
            if entry is None:
                self.stats.errors.append(f"cache miss {msg.ref_hash}")
                return
            entry[1] = self._cache_runs
            raw, metadata = entry[0], msg.metadata
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            msg.metadata.CopyFrom(metadata)
            kind = msg.WhichOneof("type")
        elif msg.metadata.cacheable and msg.hash and msg.hash not in self._cache:
            self._cache[msg.hash] = [raw, self._cache_runs, msg.delta.fragment_id or None]
        if kind == "new_session":
            self._on_new_session(msg, now)
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._on_element(msg, raw, now)
        elif kind == "auto_rerun":
            fid, interval = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
            if fid and self.timers.get(fid, (None,))[0] != interval:
                self._cancel_timers([fid])
                self.timers[fid] = (interval, asyncio.create_task(self._tick(fid, interval)))
        elif kind == "stop_auto_rerun":
            self._cancel_timers(list(msg.stop_auto_rerun.fragment_ids))
        elif kind == "script_finished":
            self._on_finished(msg)
        elif kind == "navigation":  # st.navigation: the page being shown, sent by every full run
            self._navigation_seen = True
            self.page_script_hash = msg.navigation.page_script_hash
            self.pages = {p.url_pathname.strip("/"): p.page_script_hash for p in msg.navigation.app_pages}

    def _on_new_session(self, msg: ForwardMsg, now: float) -> None:
        ns = msg.new_session
        self._new_session_seen = True
        if not self._navigation_seen:  # a multipage app names its page in `navigation` instead
            self.page_script_hash = ns.page_script_hash
        self._max_cache_age = ns.config.max_cached_message_age or self._max_cache_age
        if not msg.metadata.run.fragment_ids:  # a full-app run: the frontend drops every fragment timer
            self._cancel_timers()
        self.run_id = msg.metadata.run.script_run_id
        self.run_started = now

    def _on_element(self, msg: ForwardMsg, raw: bytes, now: float) -> None:
        el = msg.delta.new_element
        kind = el.WhichOneof("type")
        if kind == "exception":
            self.stats.errors.append(f"exception on the page: {el.exception.type}: {el.exception.message}"[:300])
        elif kind == "alert" and el.alert.format == Alert.ERROR:
            self.stats.errors.append(f"error on the page: {el.alert.body}"[:300])
        elif kind == "alert" and el.alert.format == Alert.INFO and WAIT_LINE.match(el.alert.body):
            self.stats.waits_shown += 1
        if kind == "bidi_component":
            self.component_json = el.bidi_component.json
        if kind in CHART_KINDS and self._expectations:
            for e in list(self._expectations):
                if e.future.done():
                    self._expectations.remove(e)
                elif self.run_started >= e.since and e.pattern.search(raw):
                    e.future.set_result(now)
                    self._expectations.remove(e)
        w = getattr(el, kind) if kind else None
        wid = getattr(w, "id", "")
        if not wid or kind in CHART_KINDS:
            return
        self.widgets[wid] = Widget(
            id=wid,
            kind=kind,
            label=getattr(w, "label", ""),
            fragment_id=msg.delta.fragment_id,
            run_id=self.run_id,
            disabled=getattr(w, "disabled", False),
            query_param_key=getattr(w, "query_param_key", ""),
            default_url=url_value(kind, w),
            proto=w,
        )
        if wid not in self.states or getattr(w, "set_value", False):
            state = initial_state(kind, w)
            if state is not None:
                self.states[wid] = state

    def _on_finished(self, msg: ForwardMsg) -> None:
        status, run = msg.script_finished, msg.metadata.run
        fragments = set(run.fragment_ids)
        if status == FINISHED_EARLY_FOR_RERUN:
            self.stats.interrupted_runs += 1
        elif status == FINISHED_FRAGMENT_OK or (status == FINISHED_OK and fragments):
            self.stats.fragment_runs += 1
        elif status == FINISHED_OK:
            self.stats.full_runs += 1
        if status in (FINISHED_OK, FINISHED_FRAGMENT_OK) and (fragments or run.script_run_id == self.run_id):
            self._drop_stale(run.script_run_id, fragments)
            if not fragments:
                self.full_run_finished_at = time.monotonic()
                self._finished.set()
        if status != FINISHED_EARLY_FOR_RERUN and self._new_session_seen and msg.metadata.HasField("run"):
            self._age_cache(fragments)

    def _drop_stale(self, run_id: str, fragments: set[str]) -> None:
        """Widgets the finished run did not draw again are gone, with their states."""
        for wid, w in list(self.widgets.items()):
            if w.run_id != run_id and (not fragments or w.fragment_id in fragments):
                del self.widgets[wid]
                self.states.pop(wid, None)

    def _age_cache(self, fragments: set[str]) -> None:
        self._cache_runs += 1
        for h, (_, runs, fid) in list(self._cache.items()):
            if fragments and (not fid or fid not in fragments):
                continue
            if self._cache_runs - runs > self._max_cache_age:
                del self._cache[h]
