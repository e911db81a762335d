"""Class mode's state: the classes a lecturer opened on this server, each in memory and gone when it ends. The routes
that reach it are ui/classroom_routes.py; the browser's side is assets/js/class_mode.js.

    classes = Classes()                                   # the Server's (ui/server.py), one per process
    token = classes.tokens.mint()                         # a session that showed the presenter key gets one
    c = classes.open()                                    # the lecturer opens a class: c.code, e.g. "K7QX2M"
    sid = c.join(None)                                    # a student: no account, no name, a random id
    c.set_lead({"view": "wasted", "predict": True, "query": "G=16", "players": {}})
    poll = c.ask({"text": "With G = 8, ...?", "kind": "number", "lo": 0, "hi": 100})
    c.guess(sid, poll.id, 1, 34.0)                        # once per round, within the question's range
    c.reveal(poll.id)                                     # every screen shows the answer
    c.students_message(), c.board_message()               # what the students' and the lecturer's streams send

Two messages, two audiences. The students' message holds what the lecturer decides (the page and setting to follow,
the questions asked, their rounds, which are revealed) and nothing a student sent: it changes only when the lecturer
acts, so a class of 1,000 guessing sends the students nothing. The lecturer's board holds the joined count and the
guesses, for the histograms; it may change with every guess, and its stream sends it at most BOARD_EVERY_S apart.
Each message is serialised once per change and the same bytes go to every stream.

The server never knows a question's answer: the lecturer's page and each student's page compute it (the views are
computed in the browser); the server keeps the question's text and the range of numbers it accepts
(assets/js/predict.js answerRange), checks each guess against it and counts.

Everything here runs on the server's event loop (the routes are coroutines), one request at a time, so a class needs
no lock; the lecturer tokens are minted in a script run's thread and have their own.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I: a code is read off a projector
CODE_LEN = 6  # 32**6, about 1e9 codes
CODE_FORM = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LEN}}}")
STUDENT_FORM = re.compile(r"[A-Za-z0-9_-]{16}")  # secrets.token_urlsafe(12)
MAX_CLASSES = 4  # open at once on one server
MAX_STUDENTS = 2000  # ids a class keeps (joined or recently gone)
MAX_STREAMS = 2 * MAX_STUDENTS  # open student streams per class (a student's second tab is a second stream)
MAX_POLLS = 32  # questions a class remembers (the oldest forgotten first)
MAX_ROUNDS = 3  # rounds of one question, kept side by side
BOARD_POLLS = 4  # the newest questions whose guesses the board carries (the older ones: their counts)
IDLE_S = 30 * 60.0  # a class whose lecturer has been away this long (no request, no board open) ends
GONE_S = 20.0  # a student whose stream closed this long ago no longer counts as joined (a page change reconnects)
FORGET_S = 15 * 60.0  # a student id without a stream this long is forgotten (its guesses stay counted)
TOKENS_MAX = 64  # lecturer tokens remembered (the oldest forgotten first)
TOKEN_TTL_S = 12 * 3600.0


class Refused(Exception):
    """A request the class refuses: an HTTP status and one sentence for the person who sent it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class LecturerTokens:
    """Lecturer tokens: what a session that showed the presenter key (ui/presenter.py) hands its page, so that the
    page can open, lead and close a class through the routes. Not the presenter key: a token is random, one per
    session, forgotten after TOKEN_TTL_S or when TOKENS_MAX newer ones exist. Kept as SHA-256 digests, so a lookup's
    timing says nothing about a token. Thread-safe (minted in script runs, checked on the event loop)."""

    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        self._seen: OrderedDict[bytes, float] = OrderedDict()  # digest -> when minted
        self._lock = threading.Lock()

    @staticmethod
    def _digest(token: str) -> bytes:
        return hashlib.sha256(token.encode("utf-8", "replace")).digest()

    def mint(self) -> str:
        token = secrets.token_urlsafe(24)
        with self._lock:
            self._seen[self._digest(token)] = self.clock()
            while len(self._seen) > TOKENS_MAX:
                self._seen.popitem(last=False)
        return token

    def valid(self, token: str | None) -> bool:
        if not token or len(token) > 64:
            return False
        with self._lock:
            when = self._seen.get(self._digest(token))
            return when is not None and self.clock() - when < TOKEN_TTL_S


def finite(x, what: str) -> float:
    """`x` if it is a finite number (not a bool), else Refused."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise Refused(400, f"{what} must be a number")
    return float(x)


@dataclass
class Poll:
    """One question asked of the class: its rounds of guesses (student id -> guess), the last one open until the
    lecturer reveals the answer or starts another round."""

    id: int
    question: dict
    rounds: list[dict[str, float]] = field(default_factory=lambda: [{}])
    revealed: bool = False

    def public(self) -> dict:
        q = self.question
        extra = {"lo": q["lo"], "hi": q["hi"]} if q["kind"] == "number" else {"options": q["options"]}
        return {"id": self.id, "text": q["text"], "kind": q["kind"], **extra, "round": len(self.rounds),
                "revealed": self.revealed}


@dataclass
class Student:
    streams: int = 0  # open event streams (tabs)
    left_at: float = 0.0  # when the last one closed


class Class:
    """One class: its students (anonymous ids), what the lecturer leads, its questions. See the module's docstring."""

    def __init__(self, code: str, clock=time.monotonic) -> None:
        self.code, self.clock = code, clock
        self.students: dict[str, Student] = {}
        self.streams = 0
        self.lead: dict | None = None
        self.polls: OrderedDict[int, Poll] = OrderedDict()
        self._next_poll = 1
        self.closed = False
        self.lecturer_seen = clock()
        self.boards = 0  # the lecturer's open board streams: while one is open the class is not idle
        self.version = 0  # of the students' message
        self.board_version = 0  # of the lecturer's board
        # set (and replaced) at each change of the students' message, and of the board: a guess wakes the lecturer's
        # stream only, never the students'
        self._students_changed, self._board_changed = asyncio.Event(), asyncio.Event()
        self._cache: dict[str, tuple[int, bytes]] = {}

    # ---- changes ----
    def _bump(self, students: bool) -> None:
        if students:
            self.version += 1
            self._students_changed.set()
            self._students_changed = asyncio.Event()
        self.board_version += 1
        self._board_changed.set()
        self._board_changed = asyncio.Event()

    async def changed(self, board: bool) -> None:
        """Returns at the next change of the board (`board`) or of the students' message."""
        await (self._board_changed if board else self._students_changed).wait()

    def lecturer_here(self) -> None:
        self.lecturer_seen = self.clock()

    def idle(self, now: float) -> bool:
        return self.boards == 0 and now - self.lecturer_seen > IDLE_S

    # ---- students ----
    def join(self, sid: str | None) -> str:
        """A student's id: `sid` again if this class knows it (a reload, a page the class followed), else a new one."""
        if self.closed:
            raise Refused(410, "This class has ended.")
        if sid is not None and sid in self.students:
            return sid
        if len(self.students) >= MAX_STUDENTS:
            self.forget(self.clock(), FORGET_S / 10)
            if len(self.students) >= MAX_STUDENTS:
                raise Refused(503, f"This class is full ({MAX_STUDENTS} students).")
        sid = secrets.token_urlsafe(12)
        self.students[sid] = Student(left_at=self.clock())
        self._bump(students=False)
        return sid

    def stream_opened(self, sid: str) -> None:
        if sid not in self.students:
            raise Refused(403, "Join the class first.")
        if self.streams >= MAX_STREAMS:
            raise Refused(503, "This class has too many open pages.")
        self.students[sid].streams += 1
        self.streams += 1
        self._bump(students=False)

    def stream_closed(self, sid: str) -> None:
        s = self.students.get(sid)
        if s is not None and s.streams > 0:
            s.streams -= 1
            s.left_at = self.clock()
            self.streams -= 1
            self._bump(students=False)

    def joined(self) -> int:
        """Students with a page open, or closed less than GONE_S ago (a page the class follows reconnects)."""
        now = self.clock()
        return sum(1 for s in self.students.values() if s.streams or now - s.left_at < GONE_S)

    def forget(self, now: float, after: float = FORGET_S) -> None:
        """Drop the ids that have had no page open for `after` s (their guesses stay counted)."""
        for sid in [k for k, s in self.students.items() if not s.streams and now - s.left_at > after]:
            del self.students[sid]

    def guess(self, sid: str, poll_id, round_no, value) -> None:
        """A student's guess for the open round of a question: once, and within what the question accepts."""
        if sid not in self.students:
            raise Refused(403, "Join the class first.")
        poll = self.polls.get(poll_id) if isinstance(poll_id, int) else None
        if poll is None or poll.revealed or round_no != len(poll.rounds):
            raise Refused(409, "This question is not open for guesses now.")
        votes = poll.rounds[-1]
        if sid in votes:
            raise Refused(409, "You have already sent a guess this round.")
        q = poll.question
        if q["kind"] == "number":
            x = finite(value, "A guess")
            if not q["lo"] <= x <= q["hi"]:
                raise Refused(400, f"This class counts guesses from {q['lo']:g} to {q['hi']:g} only; {x:g} was not "
                                   "counted.")
            votes[sid] = float(f"{x:.6g}")
        else:
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(q["options"]):
                raise Refused(400, "A guess must be one of the question's options.")
            votes[sid] = value
        self._bump(students=False)

    # ---- the lecturer ----
    def set_lead(self, lead: dict) -> None:
        if lead != self.lead:
            self.lead = lead
            self._bump(students=True)

    def ask(self, question: dict) -> Poll:
        """Ask `question`: a new poll, or the one already asked with the same text (a page drawn again asks again)."""
        for poll in self.polls.values():
            if poll.question == question:
                return poll
        poll = self.polls[self._next_poll] = Poll(self._next_poll, question)
        self._next_poll += 1
        while len(self.polls) > MAX_POLLS:
            self.polls.popitem(last=False)
        self._bump(students=True)
        return poll

    def _poll(self, poll_id) -> Poll:
        poll = self.polls.get(poll_id) if isinstance(poll_id, int) else None
        if poll is None:
            raise Refused(404, "This class has no such question (it may have been forgotten: ask it again).")
        return poll

    def again(self, poll_id) -> Poll:
        """Another round of the same question (after a discussion): the guesses so far are kept beside it, every
        screen asks again, and the answer is hidden until the next Reveal."""
        poll = self._poll(poll_id)
        if len(poll.rounds) >= MAX_ROUNDS:
            raise Refused(409, f"A question has at most {MAX_ROUNDS} rounds.")
        poll.rounds.append({})
        poll.revealed = False
        self._bump(students=True)
        return poll

    def reveal(self, poll_id) -> Poll:
        poll = self._poll(poll_id)
        if not poll.revealed:
            poll.revealed = True
            self._bump(students=True)
        return poll

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._bump(students=True)

    # ---- the messages ----
    def students_message(self) -> bytes:
        """What every student's stream sends: the lead, the questions (no guess), whether the class has ended."""
        return self._cached("students", self.version, lambda: {
            "code": self.code, "v": self.version, "closed": self.closed, "lead": self.lead,
            "polls": [p.public() for p in self.polls.values()]})  # fmt: skip

    def board_message(self) -> bytes:
        """What the lecturer's board sends: the joined count, and each question's guesses by round (the newest
        BOARD_POLLS questions' guesses; the older ones' counts)."""
        def board() -> dict:
            newest = set(list(self.polls)[-BOARD_POLLS:])
            polls = [{**p.public(), "counts": [len(r) for r in p.rounds],
                      "guesses": [sorted(r.values()) for r in p.rounds] if p.id in newest else None}
                     for p in self.polls.values()]  # fmt: skip
            return {"code": self.code, "v": self.board_version, "closed": self.closed, "joined": self.joined(),
                    "lead": self.lead, "polls": polls}

        return self._cached("board", self.board_version, board)

    def _cached(self, name: str, version: int, build) -> bytes:
        hit = self._cache.get(name)
        if hit is None or hit[0] != version:
            hit = self._cache[name] = (version, json.dumps(build(), separators=(",", ":")).encode())
        return hit[1]


class Classes:
    """The classes open on this server (at most MAX_CLASSES), and the lecturer tokens. The Server holds one."""

    def __init__(self, clock=time.monotonic) -> None:
        self.clock = clock
        self.tokens = LecturerTokens(clock)
        self.open_classes: dict[str, Class] = {}
        self._swept = 0.0

    def open(self) -> Class:
        self.sweep(force=True)
        if len(self.open_classes) >= MAX_CLASSES:
            raise Refused(503, f"This server has {MAX_CLASSES} classes open: end one first.")
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LEN))
        while code in self.open_classes:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LEN))
        c = self.open_classes[code] = Class(code, self.clock)
        return c

    def get(self, code: str) -> Class:
        self.sweep()
        c = self.open_classes.get(code) if isinstance(code, str) and CODE_FORM.fullmatch(code) else None
        if c is None:
            raise Refused(404, "This class is not open on this server: it has ended, or the link is wrong.")
        return c

    def close(self, code: str) -> None:
        c = self.get(code)
        c.close()
        del self.open_classes[code]

    def sweep(self, force: bool = False) -> None:
        """End the classes whose lecturer has been away IDLE_S, forget students gone FORGET_S; every 10 s at most."""
        now = self.clock()
        if not force and now - self._swept < 10.0:
            return
        self._swept = now
        for code, c in list(self.open_classes.items()):
            if c.idle(now):
                c.close()
                del self.open_classes[code]
            else:
                c.forget(now)
