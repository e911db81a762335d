"""Class mode's server side (ui/classroom.py, ui/classroom_routes.py) and the browser's pure parts
(assets/js/class_mode.js under node). The walk through a class in Chromium is tests/test_class_mode_browser.py.

- A class: students join with no name (a random id), send one guess per round within the question's range; the
  students' message carries what the lecturer decides and nothing a student sent, and a guess does not change it;
  the board counts the guesses by round; a second round is kept beside the first; Reveal is once; the class ends
  when closed or when its lecturer has been away IDLE_S.
- Limits: classes per server, students per class, questions remembered, rounds, the size and shape of each message.
- The routes, driven in process (no socket): only a lecturer token opens, leads, asks, reveals and closes, and a
  wrong one spends a wrong-key try of its address; bodies are capped and parsed strictly; joins are rate-limited;
  the streams send the message at once, then each change.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.fixtures.node import js
from ui import classroom
from ui.classroom import MAX_ROUNDS, Class, Classes, LecturerTokens, Refused
from ui.classroom_routes import ClassRoutes, lead_of, question_of
from ui.presenter import WrongKeys

VIEWS = frozenset({"wasted", "training"})
WASTED_Q = {"text": "With G = 8, in what share of its groups ...?", "kind": "number", "lo": 0.0, "hi": 100.0,
            "unit": "%"}
CLIP_Q = {"text": "Is the token still pushed?", "kind": "choice", "options": ["still pushed", "no gradient: clipped"]}


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def refused(fn, *args) -> Refused:
    with pytest.raises(Refused) as e:
        fn(*args)
    return e.value


# ---- a class ----------------------------------------------------------------------------------------------
def test_students_guess_once_per_round_within_the_range_and_the_board_counts_them():
    c = Class("K7QX2M")
    a, b, d = c.join(None), c.join(None), c.join(None)
    assert len({a, b, d}) == 3 and all(classroom.STUDENT_FORM.fullmatch(s) for s in (a, b, d))
    assert c.join(a) == a  # a reload keeps its id
    poll = c.ask(WASTED_Q)
    assert c.ask(dict(WASTED_Q)) is poll  # asked again (a page drawn again): the same poll
    version = c.version
    for sid, x in ((a, 30.0), (b, 34.0), (d, 50.0)):
        c.guess(sid, poll.id, 1, x)
    assert c.version == version  # guesses never change what the students are sent
    assert refused(c.guess, a, poll.id, 1, 31.0).status == 409  # one guess per round
    for bad in (-1.0, 100.5, float("nan"), float("inf"), "34", True, None):
        assert refused(c.guess, c.join(None), poll.id, 1, bad).status == 400, bad
    said = refused(c.guess, c.join(None), poll.id, 1, 100.5).message
    assert said == "This class counts guesses from 0 to 100 only; 100.5 was not counted.", said
    assert refused(c.guess, "x" * 16, poll.id, 1, 30.0).status == 403  # an id the class never gave
    assert refused(c.guess, a, poll.id, 2, 30.0).status == 409  # not the open round
    board = json.loads(c.board_message())
    (p,) = board["polls"]
    assert p["counts"] == [3] and p["guesses"] == [[30.0, 34.0, 50.0]] and not p["revealed"]
    students = c.students_message().decode()
    assert "30.0" not in students and a not in students and "guesses" not in students  # nothing a student sent
    assert json.loads(students)["polls"] == [{"id": poll.id, "text": WASTED_Q["text"], "kind": "number", "lo": 0.0,
                                              "hi": 100.0, "round": 1, "revealed": False}]


def test_another_round_is_kept_beside_the_first_and_reveal_closes_a_round():
    c = Class("K7QX2M")
    a, b = c.join(None), c.join(None)
    poll = c.ask(WASTED_Q)
    c.guess(a, poll.id, 1, 30.0)
    c.again(poll.id)  # after a discussion: everyone again
    c.guess(a, poll.id, 2, 33.0)
    c.guess(b, poll.id, 2, 35.0)
    c.reveal(poll.id)
    assert refused(c.guess, b, poll.id, 2, 36.0).status == 409  # revealed: no more guesses
    board = json.loads(c.board_message())["polls"][0]
    assert board["counts"] == [1, 2] and board["guesses"] == [[30.0], [33.0, 35.0]] and board["revealed"]
    said = json.loads(c.students_message())["polls"][0]
    assert (said["round"], said["revealed"]) == (2, True)
    c.again(poll.id)  # a third round hides the answer again until the next Reveal
    assert not c.polls[poll.id].revealed
    assert len(c.polls[poll.id].rounds) == MAX_ROUNDS
    assert refused(c.again, poll.id).status == 409


def test_a_choice_takes_an_option_index():
    c = Class("K7QX2M")
    a = c.join(None)
    poll = c.ask(CLIP_Q)
    for bad in (2, -1, 0.0, "no gradient: clipped", True):
        assert refused(c.guess, a, poll.id, 1, bad).status == 400, bad
    c.guess(a, poll.id, 1, 1)
    assert json.loads(c.board_message())["polls"][0]["guesses"] == [[1]]


def test_joined_counts_open_pages_and_a_page_change_in_between():
    clock = Clock()
    c = Class("K7QX2M", clock)
    a, b = c.join(None), c.join(None)
    assert c.joined() == 2  # joined just now
    clock.t += classroom.GONE_S + 1
    assert c.joined() == 0  # never opened a page
    c.stream_opened(a)
    assert c.joined() == 1
    c.stream_closed(a)
    clock.t += classroom.GONE_S - 1
    assert c.joined() == 1  # its next page reconnects
    clock.t += 2
    assert c.joined() == 0
    clock.t += classroom.FORGET_S
    c.forget(clock())
    assert a not in c.students and b not in c.students
    assert refused(c.stream_opened, a).status == 403


def test_the_limits_of_a_class_and_of_a_server(monkeypatch):
    monkeypatch.setattr(classroom, "MAX_STUDENTS", 3)
    c = Class("K7QX2M")
    for _ in range(3):
        c.stream_opened(c.join(None))
    assert refused(c.join, None).status == 503
    monkeypatch.setattr(classroom, "MAX_POLLS", 2)
    polls = [c.ask({**WASTED_Q, "text": f"question {i}"}) for i in range(3)]
    assert list(c.polls) == [polls[1].id, polls[2].id]  # the oldest forgotten
    assert refused(c.reveal, polls[0].id).status == 404
    classes = Classes()
    for _ in range(classroom.MAX_CLASSES):
        classes.open()
    assert refused(classes.open).status == 503
    assert all(classroom.CODE_FORM.fullmatch(code) for code in classes.open_classes)


def test_a_class_ends_when_closed_or_when_its_lecturer_is_away():
    clock = Clock()
    classes = Classes(clock)
    c = classes.open()
    sid = c.join(None)
    classes.close(c.code)
    assert c.closed and json.loads(c.students_message())["closed"]
    assert refused(classes.get, c.code).status == 404
    assert refused(c.join, sid).status == 410
    d = classes.open()
    d.boards = 1  # the lecturer's board is open: not idle however long
    clock.t += classroom.IDLE_S + 60
    classes.sweep(force=True)
    assert d.code in classes.open_classes
    d.boards = 0
    d.lecturer_here()
    clock.t += classroom.IDLE_S - 1
    classes.sweep(force=True)
    assert d.code in classes.open_classes
    clock.t += 2
    classes.sweep(force=True)
    assert d.code not in classes.open_classes and d.closed


def test_lecturer_tokens_expire_and_the_oldest_are_forgotten():
    clock = Clock()
    tokens = LecturerTokens(clock)
    first = tokens.mint()
    assert tokens.valid(first) and not tokens.valid(first[:-1]) and not tokens.valid(None) and not tokens.valid("")
    for _ in range(classroom.TOKENS_MAX):
        tokens.mint()
    assert not tokens.valid(first)
    last = tokens.mint()
    clock.t += classroom.TOKEN_TTL_S
    assert not tokens.valid(last)


@pytest.mark.parametrize("lead", [
    None, [], {"view": "tinylm"}, {"view": "wasted", "query": "<script>"}, {"view": "wasted", "query": "G=1" * 400},
    {"view": "wasted", "players": {"k": {"t": 1.5}}}, {"view": "wasted", "players": {"k": {"t": -1}}},
    {"view": "wasted", "players": {"<b>": {"t": 1}}}, {"view": "wasted", "players": {"k": {"t": 1, "speed": 0}}},
    {"view": "wasted", "players": {f"k{i}": {"t": 1} for i in range(9)}},
])  # fmt: skip
def test_a_lead_is_checked(lead):
    assert refused(lead_of, lead, VIEWS).status == 400


def test_a_lead_keeps_what_it_should():
    lead = lead_of({"view": "training", "predict": 1, "query": "G=16&beta=0.04", "extra": "dropped",
                    "players": {"live:training": {"t": 12.0, "playing": True, "speed": 10}}}, VIEWS)
    assert lead == {"view": "training", "predict": False, "query": "G=16&beta=0.04",
                    "players": {"live:training": {"t": 12, "playing": True, "speed": 10.0}}}


@pytest.mark.parametrize("q", [
    None, {"text": ""}, {"text": "x" * 601, "lo": 0, "hi": 1}, {"text": "q", "lo": 1, "hi": 1},
    {"text": "q", "lo": 0, "hi": float("inf")}, {"text": "q", "kind": "essay"}, {"text": "q", "kind": "choice"},
    {"text": "q", "kind": "choice", "options": ["only one"]}, {"text": "q", "lo": 0, "hi": 1, "unit": "\n"},
])  # fmt: skip
def test_a_question_is_checked(q):
    assert refused(question_of, q).status == 400


# ---- the routes, in process ------------------------------------------------------------------------------
KEY_CLIENT = "203.0.113.7"


def app_of(routes: ClassRoutes):
    from starlette.applications import Starlette

    return Starlette(routes=routes.routes())


async def request(app, method: str, path: str, body=None, *, token: str | None = None, raw: bytes | None = None,
                  query: str = "", stream: bool = False) -> tuple[int, object]:
    """One request through the ASGI app (no socket): (status, JSON body), or for a stream (status, the first
    message), the stream then closed as a browser closing its tab closes it."""
    data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
    headers = [(b"content-length", str(len(data)).encode())] if method == "POST" else []
    if token is not None:
        headers.append((b"x-class-token", token.encode()))
    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": query.encode(), "headers": headers, "client": (KEY_CLIENT, 5000),
             "server": ("127.0.0.1", 80), "root_path": ""}  # fmt: skip
    sent, got_body, gone = [], asyncio.Event(), asyncio.Event()
    first = [True]

    async def receive():
        if first[0]:
            first[0] = False
            return {"type": "http.request", "body": data, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)
        if message["type"] == "http.response.body" and message.get("body"):
            got_body.set()

    task = asyncio.create_task(app(scope, receive, send))
    if stream:
        await asyncio.wait_for(got_body.wait(), 5)
        gone.set()
        await asyncio.wait_for(task, 5)
        status = sent[0]["status"]
        text = b"".join(m.get("body", b"") for m in sent[1:]).decode()
        return status, json.loads(text.split("data: ", 1)[1].split("\n\n", 1)[0])
    await asyncio.wait_for(task, 5)
    return sent[0]["status"], json.loads(b"".join(m.get("body", b"") for m in sent[1:]))


def test_only_a_lecturer_token_opens_leads_asks_reveals_and_closes():
    async def walk():
        classes, wrong = Classes(), WrongKeys()
        routes = ClassRoutes(classes, wrong)
        routes._views = VIEWS
        app = app_of(routes)
        token = classes.tokens.mint()
        assert (await request(app, "POST", "/_class/open", {}))[0] == 403
        assert (await request(app, "POST", "/_class/open", {}, token="not-a-token"))[0] == 403
        assert wrong._now_left(KEY_CLIENT) < wrong.free - 0.99  # one try spent: the wrong token, not the missing one
        status, out = await request(app, "POST", "/_class/open", {}, token=token)
        code = out["code"]
        assert status == 200 and (await request(app, "GET", "/_class/mine", token=token))[1] == {
            "classes": [{"code": code, "joined": 0}]}
        for action in ("lead", "ask", "again", "reveal", "close"):
            assert (await request(app, "POST", f"/_class/{code}/{action}", {}))[0] == 403, action
        status, joined = await request(app, "POST", f"/_class/{code}/join", {"id": None})
        sid = joined["id"]
        lead = {"view": "wasted", "predict": True, "query": "G=16", "players": {}}
        assert (await request(app, "POST", f"/_class/{code}/lead", {"lead": lead}, token=token))[0] == 200
        status, asked = await request(app, "POST", f"/_class/{code}/ask", {"question": WASTED_Q}, token=token)
        poll = asked["poll"]["id"]
        status, first = await request(app, "GET", f"/_class/{code}/events", query=f"id={sid}", stream=True)
        assert status == 200 and first["lead"] == lead and first["polls"][0]["id"] == poll
        guess = {"id": sid, "poll": poll, "round": 1, "guess": 34}
        assert await request(app, "POST", f"/_class/{code}/guess", guess) == (200, {"ok": True})
        assert (await request(app, "POST", f"/_class/{code}/guess", guess))[0] == 409
        status, board = await request(app, "GET", f"/_class/{code}/board", token=token, stream=True)
        assert board["polls"][0]["guesses"] == [[34.0]] and board["joined"] == 1
        assert (await request(app, "GET", f"/_class/{code}/board", token="nope", stream=False))[0] == 403
        assert (await request(app, "POST", f"/_class/{code}/reveal", {"poll": poll}, token=token))[0] == 200
        assert (await request(app, "POST", f"/_class/{code}/close", {}, token=token))[0] == 200
        assert (await request(app, "POST", f"/_class/{code}/join", {"id": sid}))[0] == 404
        # five wrong tokens from one address: then its tokens are not even compared, the right one included
        for _ in range(4):
            await request(app, "POST", "/_class/open", {}, token="wrong")
        assert (await request(app, "POST", "/_class/open", {}, token=token))[0] == 429

    asyncio.run(walk())


def test_messages_are_capped_and_parsed_strictly_and_joins_are_rate_limited(monkeypatch):
    async def walk():
        classes = Classes()
        routes = ClassRoutes(classes, WrongKeys())
        app = app_of(routes)
        code = classes.open().code
        sid = (await request(app, "POST", f"/_class/{code}/join", {"id": None}))[1]["id"]
        for raw in (b"not json", b"[1, 2]", b'{"id": NaN}', b"\xff\xfe", b'{"id": "' + b"a" * 600 + b'"}'):
            status, out = await request(app, "POST", f"/_class/{code}/guess", raw=raw)
            assert status in (400, 413) and set(out) == {"error"}, raw
        assert (await request(app, "POST", f"/_class/{code}/join", {"id": "<img src=x>"}))[0] == 400
        unknown = await request(app, "GET", f"/_class/{code}/events", query="id=unknownunknown12")
        assert unknown[0] == 403
        assert (await request(app, "POST", "/_class/NOPE00/join", {"id": sid}))[0] == 404
        assert (await request(app, "POST", f"/_class/{code}/join", {"id": sid}))[1] == {"id": sid}  # a rejoin is free
        monkeypatch.setattr(routes, "joins", WrongKeys(free=2, every_s=60))
        assert [(await request(app, "POST", f"/_class/{code}/join", {}))[0] for _ in range(3)] == [200, 200, 429]

    asyncio.run(walk())


# ---- the browser's pure parts (node) ---------------------------------------------------------------------
def test_the_histogram_puts_every_round_on_the_same_round_bins():
    (wasted, revealed, one, empty, choice) = js([
        {"op": "call", "module": "class_mode", "fn": "histogram", "args": args} for args in (
            [[[30, 34, 50]], {"kind": "number"}],
            [[[30, 34, 50], [33, 35]], {"kind": "number"}, 27.5],
            [[[0.0157, 0.0157]], {"kind": "number"}],
            [[[]], {"kind": "number"}],
            [[[1, 1, 0], [1]], {"kind": "choice", "options": ["still pushed", "no gradient: clipped"]}],
        )])  # fmt: skip
    # 30..50 over about 10 bars: width 2 from 30; 50 is in the last bar [50, 52)
    assert wasted["edges"][0] == 30 and wasted["edges"][1] == 32 and wasted["edges"][-1] == 52
    assert wasted["counts"] == [[1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]]
    # the answer 27.5 is on the axis: 27.5..50 over about 10 bars is bars of 5 from 25
    assert revealed["edges"] == [25, 30, 35, 40, 45, 50, 55]
    assert revealed["counts"] == [[0, 2, 0, 0, 0, 1], [0, 1, 1, 0, 0, 0]]  # round 2 on round 1's bars
    assert sum(one["counts"][0]) == 2 and len(one["counts"][0]) == 1
    assert empty == {"edges": [], "counts": [[]]}
    assert choice == {"labels": ["still pushed", "no gradient: clipped"], "counts": [[1, 2], [0, 1]]}


def test_the_pure_parts_of_class_mode():
    calls = [("niceStep", [0.37]), ("niceStep", [2]), ("niceStep", [7.1]), ("niceStep", [0]),
             ("classCode", ["?class=K7QX2M&G=4"]), ("classCode", ["?class=k7qx2m"]), ("classCode", ["?class=<b>"]),
             ("followUrl", [{"view": "training", "predict": True, "query": "G=16&hide=G,beta"}]),
             ("followUrl", [{"view": "wasted", "predict": False, "query": ""}]),
             ("leadT", [{"t": 10, "playing": True, "speed": 10}, 1500, 200]),
             ("leadT", [{"t": 195, "playing": True, "speed": 10}, 1000, 200]),
             ("leadT", [{"t": 10, "playing": False, "speed": 10}, 5000, 200]),
             ("parseEvents", ['data: {"v":1}\n\n: \n\ndata: {"v":2}\n\ndata: {"v"']),
             ("questionOf", [{"question": "q", "answer": 33.7, "unit": "%", "lo": None, "hi": None}]),
             ("questionOf", [{"question": "k3?", "answer": 0.0157, "unit": None, "lo": 0, "hi": None}])]
    out = js([{"op": "call", "module": "class_mode", "fn": fn, "args": args} for fn, args in calls])
    assert out[:4] == [0.5, 2, 10, 1]
    assert out[4:7] == ["K7QX2M", None, None]
    assert out[7:9] == ["./training?G=16&hide=G,beta&predict=1", "./wasted"]
    assert [o["t"] for o in out[9:12]] == [25, 200, 10] and out[10]["playing"] is False
    assert out[12] == [[{"v": 1}, {"v": 2}], 'data: {"v"']
    assert out[13] == {"text": "q", "kind": "number", "lo": 0, "hi": 100, "unit": "%"}
    assert out[14] == {"text": "k3?", "kind": "number", "lo": 0, "hi": 1000, "unit": ""}  # predict.js answerRange
