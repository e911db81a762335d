"""Class mode's routes on the app's own server (ui/server.py registers them; ui/classroom.py holds the state). Small
JSON messages, never a Streamlit script run per student:

    POST {api}/open                       lecturer: open a class -> {"code"}
    GET  {api}/mine                       lecturer: the classes open on this server -> {"classes": [{code, joined}]}
    POST {api}/CODE/lead|ask|again|reveal|close    lecturer: lead the page and setting; ask, rerun, reveal a question
    GET  {api}/CODE/board                 lecturer: Server-Sent Events, the board (joined count, guesses)
    POST {api}/CODE/join                  student: {"id": a stored id or null} -> {"id"}
    POST {api}/CODE/guess                 student: {"id", "poll", "round", "guess"}
    GET  {api}/CODE/events?id=ID          student: Server-Sent Events, what the lecturer decides
    GET  {api}/views/NAME                 a view's declaration (its manifest): a student's page follows the
                                          lecturer to another view in place, with no script run (class_mode.js)

The lecturer is a page whose session showed the presenter key (ui/presenter.py): its script run hands it a token
(`class_data`, minted by ui/classroom.py LecturerTokens), which it sends in the X-Class-Token header; a wrong token
counts as a wrong presenter key of its address (Server.wrong_keys), so guessing tokens is slowed as guessing keys is.
Bodies are JSON objects of at most STUDENT_BODY or LECTURER_BODY bytes; a refusal is {"error": one sentence} with
its status. Joins are rate-limited per client address (a bucket of JOIN_BURST, refilled JOIN_PER_S a second: a
class behind one NAT address joins at once); a guess is one per student and round (ui/classroom.py).

Why Server-Sent Events: a stream per student stays open and each change is one write of bytes serialised once;
measured against long polling (a request per student per change) in docs/serving.md, "Class mode".
"""

from __future__ import annotations

import asyncio
import json
import re

from ui.classroom import STUDENT_FORM, Classes, Refused, finite
from ui.presenter import LECTURER, WrongKeys, client_of, priority

API = "/_class"
STUDENT_BODY = 512
LECTURER_BODY = 8192
HEARTBEAT_S = 15.0  # a comment line on a quiet stream, so that no proxy takes it for dead
BOARD_EVERY_S = 0.25  # the lecturer's board at most 4 times a second, however fast the guesses come
JOIN_BURST, JOIN_PER_S = 1200, 20.0
TOKEN_HEADER = "x-class-token"
_TOKEN = "_class_token"  # session_state: this lecturer session's token
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
# what a lecturer's message may carry
VIEW_QUERY = re.compile(r"[A-Za-z0-9_.,=&%+*-]{0,1000}")  # a lead's setting as a link's query: G=16&beta=0.04
PLAYER_KEY = re.compile(r"[A-Za-z0-9_:-]{1,64}")
MAX_PLAYERS = 8
MAX_T = 1_000_000
MAX_TEXT = 600  # a question's text
MAX_OPTIONS = 12
MAX_OPTION = 200
UNIT = re.compile(r"[^\x00-\x1f\x7f]{0,8}")


def _text(x, what: str, most: int) -> str:
    if not isinstance(x, str) or not x.strip() or len(x) > most:
        raise Refused(400, f"{what} must be text of 1 to {most} characters")
    return x


def lead_of(raw, views) -> dict:
    """The lecturer's page and setting, checked: {view (one of `views`), predict, query (the setting as a link's
    query, read by each student's page by the link's rules), players: {key: {t, playing, speed}}}."""
    if not isinstance(raw, dict):
        raise Refused(400, "a lead must be an object")
    view, query, players = raw.get("view"), raw.get("query", ""), raw.get("players", {})
    if view not in views:
        raise Refused(400, "a lead's view must be one of the app's views computed in the browser")
    if not isinstance(query, str) or not VIEW_QUERY.fullmatch(query):
        raise Refused(400, "a lead's query must be a link's query of at most 1000 characters")
    if not isinstance(players, dict) or len(players) > MAX_PLAYERS:
        raise Refused(400, f"a lead has at most {MAX_PLAYERS} players")
    out = {}
    for key, p in players.items():
        if not PLAYER_KEY.fullmatch(key) or not isinstance(p, dict):
            raise Refused(400, "a player must be named and described")
        t, speed = finite(p.get("t"), "a player's t"), finite(p.get("speed", 10), "a player's speed")
        if not (t.is_integer() and 0 <= t <= MAX_T and 0 < speed <= 1000):
            raise Refused(400, "a player's t must be a whole number and its speed 0 to 1000")
        out[key] = {"t": int(t), "playing": p.get("playing") is True, "speed": speed}
    return {"view": view, "predict": raw.get("predict") is True, "query": query, "players": out}


def question_of(raw) -> dict:
    """A question as the lecturer's page asks it, checked: its text (how students' pages find it), its kind, and
    what a guess may be: a number from lo to hi (assets/js/predict.js answerRange), or one of the options."""
    if not isinstance(raw, dict):
        raise Refused(400, "a question must be an object")
    q = {"text": _text(raw.get("text"), "a question", MAX_TEXT), "kind": raw.get("kind", "number")}
    if q["kind"] == "number":
        lo, hi = finite(raw.get("lo"), "a question's lo"), finite(raw.get("hi"), "a question's hi")
        if not lo < hi:
            raise Refused(400, "a question's lo must be under its hi")
        unit = raw.get("unit") or ""
        if not isinstance(unit, str) or not UNIT.fullmatch(unit):
            raise Refused(400, "a question's unit must be short text")
        q |= {"lo": lo, "hi": hi, "unit": unit}
    elif q["kind"] == "choice":
        options = raw.get("options")
        if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS:
            raise Refused(400, f"a choice has 2 to {MAX_OPTIONS} options")
        q["options"] = [_text(o, "an option", MAX_OPTION) for o in options]
    else:
        raise Refused(400, "a question's kind must be number or choice")
    return q


def class_data(server) -> dict:
    """What a view's page needs for class mode (ui/view.py hands it to assets/js/class_mode.js): where the routes
    are ("" without them: AppTest, a test app) and, for the lecturer's session only, its token."""
    import streamlit as st

    api = server.class_api or ""
    token = None
    if api and priority() == LECTURER:
        token = st.session_state.get(_TOKEN)
        if not server.classes.tokens.valid(token):
            token = st.session_state[_TOKEN] = server.classes.tokens.mint()
    return {"api": api, "lecturer": token}


def _json(data, status: int = 200):
    from starlette.responses import Response

    return Response(json.dumps(data, separators=(",", ":")), status, media_type="application/json",
                    headers={"Cache-Control": "no-store"})


async def _body(request, limit: int) -> dict:
    """The request's JSON object, strictly: a declared length of at most `limit` bytes, no NaN or Infinity."""
    size = request.headers.get("content-length", "")
    if not size.isdigit() or int(size) > limit:
        raise Refused(413, f"A message to the class must be at most {limit} bytes.")
    raw = await request.body()
    if len(raw) > limit:
        raise Refused(413, f"A message to the class must be at most {limit} bytes.")

    def refuse(name):
        raise ValueError(name)

    try:
        data = json.loads(raw, parse_constant=refuse)
    except (ValueError, UnicodeDecodeError):
        raise Refused(400, "A message to the class must be JSON.") from None
    if not isinstance(data, dict):
        raise Refused(400, "A message to the class must be a JSON object.")
    return data


class ClassRoutes:
    """The routes over one Classes, with the server's wrong-key buckets; `routes(prefix)` for Starlette."""

    def __init__(self, classes: Classes, wrong_keys: WrongKeys) -> None:
        self.classes, self.wrong_keys = classes, wrong_keys
        self._views: frozenset[str] | None = None
        self._manifests: dict[str, bytes] = {}
        self.joins = WrongKeys(free=JOIN_BURST, every_s=1.0 / JOIN_PER_S)  # the same bucket, spent by each join

    def routes(self, prefix: str = "") -> list:
        from starlette.routing import Route

        base = f"{prefix}{API}"
        return [Route(f"{base}/views/{{name}}", self._guarded(self.manifest), methods=["GET"]),
                Route(f"{base}/open", self._guarded(self.open_class), methods=["POST"]),
                Route(f"{base}/mine", self._guarded(self.mine), methods=["GET"]),
                Route(f"{base}/{{code}}/board", self._guarded(self.board), methods=["GET"]),
                Route(f"{base}/{{code}}/events", self._guarded(self.events), methods=["GET"]),
                Route(f"{base}/{{code}}/{{action}}", self._guarded(self.act), methods=["POST"])]

    @property
    def views(self) -> frozenset[str]:
        """The views a class can follow: those the browser computes (read on the first lead, after the server's
        warm-up has imported every view: TinyLM's declaration imports torch)."""
        if self._views is None:
            from sim.views.catalog import NAMES, view

            self._views = frozenset(n for n in NAMES if view(n).lesson == "page")
        return self._views

    @staticmethod
    def _guarded(handler):
        async def route(request):
            try:
                return await handler(request)
            except Refused as e:
                return _json({"error": e.message}, e.status)

        return route

    async def manifest(self, request):
        """A view's manifest (sim/views/doc.py View.manifest()), as ui/view.py hands it to a page: what a student's page
        needs to show that view in place when the class follows the lecturer there. Serialised once per view."""
        from starlette.responses import Response

        name = request.path_params["name"]
        if name not in self.views:
            raise Refused(404, "No such view.")
        if name not in self._manifests:
            from sim.views.catalog import view

            self._manifests[name] = json.dumps(view(name).manifest(), separators=(",", ":")).encode()
        return Response(self._manifests[name], media_type="application/json",
                        headers={"Cache-Control": "public, max-age=600"})

    # ---- who asks ----
    @staticmethod
    def _client(request) -> str:
        return client_of(request.client.host if request.client else None)

    def _lecturer(self, request) -> None:
        """The request carries a lecturer token, else Refused (a wrong one spends a wrong-key try of its address)."""
        client = self._client(request)
        wait = self.wrong_keys.wait_s(client)
        if wait > 0:
            raise Refused(429, f"Too many wrong presenter keys from your address: try again in {wait:.0f} s.")
        token = request.headers.get(TOKEN_HEADER)
        if not self.classes.tokens.valid(token):
            if token:  # a guess at a token (none at all guesses nothing)
                self.wrong_keys.missed(client)
            raise Refused(403, "Only the lecturer (the presenter key's page) may do this.")

    # ---- the lecturer ----
    async def open_class(self, request):
        self._lecturer(request)
        c = self.classes.open()
        return _json({"code": c.code})

    async def mine(self, request):
        self._lecturer(request)
        self.classes.sweep()
        return _json({"classes": [{"code": c.code, "joined": c.joined()} for c in self.classes.open_classes.values()]})

    async def act(self, request):
        action = request.path_params["action"]
        code = request.path_params["code"]
        if action in ("join", "guess"):
            return await self._student(request, code, action)
        if action not in ("lead", "ask", "again", "reveal", "close"):
            raise Refused(404, "No such action.")
        self._lecturer(request)
        data = await _body(request, LECTURER_BODY)
        c = self.classes.get(code)
        c.lecturer_here()
        if action == "close":
            self.classes.close(code)
            return _json({"closed": True})
        if action == "lead":
            c.set_lead(lead_of(data.get("lead"), self.views))
            return _json({"v": c.version})
        if action == "ask":
            poll = c.ask(question_of(data.get("question")))
        else:
            poll = c.again(data.get("poll")) if action == "again" else c.reveal(data.get("poll"))
        return _json({"poll": poll.public()})

    async def board(self, request):
        self._lecturer(request)
        c = self.classes.get(request.path_params["code"])
        c.lecturer_here()
        return self._stream(c, board=True)

    # ---- students ----
    async def _student(self, request, code: str, action: str):
        data = await _body(request, STUDENT_BODY)
        c = self.classes.get(code)
        sid = data.get("id")
        if sid is not None and (not isinstance(sid, str) or not STUDENT_FORM.fullmatch(sid)):
            raise Refused(400, "A student's id is 16 letters, digits, - or _.")
        if action == "join":
            if sid is None or sid not in c.students:
                client = self._client(request)
                if self.joins.wait_s(client) > 0:
                    raise Refused(429, "Too many joins from your address: try again in a few seconds.")
                self.joins.missed(client)
            return _json({"id": c.join(sid)})
        c.guess(sid, data.get("poll"), data.get("round"), data.get("guess"))
        return _json({"ok": True})

    async def events(self, request):
        c = self.classes.get(request.path_params["code"])
        sid = request.query_params.get("id", "")
        if not STUDENT_FORM.fullmatch(sid):
            raise Refused(400, "A student's id is 16 letters, digits, - or _.")
        c.stream_opened(sid)  # Refused for an id the class does not know
        return self._stream(c, sid=sid)

    # ---- the streams ----
    def _stream(self, c, *, board: bool = False, sid: str | None = None):
        """Server-Sent Events: the message now, then at each change (the board at most every BOARD_EVERY_S), a
        comment every HEARTBEAT_S while nothing changes; the last message once the class has ended."""
        from starlette.responses import StreamingResponse

        async def events():
            sent = -1
            if board:
                c.boards += 1
            try:
                while True:
                    version = c.board_version if board else c.version
                    if version != sent:
                        sent = version
                        message = c.board_message() if board else c.students_message()
                        yield b"data: " + message + b"\n\n"
                        if c.closed:
                            return
                        if board:
                            await asyncio.sleep(BOARD_EVERY_S)
                            continue
                    try:
                        async with asyncio.timeout(HEARTBEAT_S):
                            await c.changed(board)
                    except TimeoutError:
                        yield b": \n\n"
                    if board:
                        c.lecturer_here()
            finally:
                if board:
                    c.boards -= 1
                    c.lecturer_here()
                elif sid is not None:
                    c.stream_closed(sid)

        return StreamingResponse(events(), media_type="text/event-stream", headers=SSE_HEADERS)
