"""Who gets the lecturer's priority: a session that showed the server's presenter key. The one rule; the server's
gate (ui/work.py) asks `priority()`, and so should any later queue.

    key = make_key()                 # the Server's: GRPO_PRESENTER_KEY, or a fresh random one (printed at start)
    claim(server)                    # a page, first thing: ?presenter=KEY marks this session, then leaves the URL
    priority()                       # LECTURER for that session, STUDENT for every other one

`?classroom=1` only enlarges the page (ui/page.py's presenter sizes): anyone can add it, so it grants nothing.
The key is compared in constant time (hmac.compare_digest), never written into a page, a share link or the
address bar: `claim()` removes it from the URL on the run that reads it, and the session remembers the answer.
A wrong key is said (one warning) and removed the same way.

A key set in GRPO_PRESENTER_KEY must be hard to guess (`weakness()`: `aaaaaaaaaaaaaaaa` or `1234567890abcdef` is
refused with what a strong one is), and is not printed again (whoever set it has it; scripts/serve.sh prints its
own once). Guessing is slowed per client address (`WrongKeys`): a few wrong keys, then one a minute, while a
right key from any address that has not been guessing is compared at once.
"""

from __future__ import annotations

import hmac
import ipaddress
import itertools
import re
import secrets
import threading
import time
from collections import OrderedDict

PARAM = "presenter"  # ?presenter=KEY
ENV = "GRPO_PRESENTER_KEY"  # set it to give several servers (scripts/serve.sh's replicas) one key
KEY_FORM = re.compile(r"[A-Za-z0-9_-]{16,128}")  # URL-safe, long enough not to guess
LECTURER, STUDENT = 0, 1  # queue priorities: lower first
_FLAG = "_presenter"  # session_state: this session showed the key


MIN_DISTINCT = 10  # different characters in a key
MIN_SURPRISES = 12  # characters that neither repeat nor continue the one before (a, b, c; 1, 2, 3)
STRONG = ("a strong key is random: python3 -c 'import secrets; print(secrets.token_urlsafe(16))' gives 22 "
          "characters (128 bits); or leave it unset for a fresh one at every start")


def weakness(key: str) -> str | None:
    """Why `key` (16-128 URL-safe characters) is too easy to guess, or None. It needs MIN_DISTINCT different
    characters and MIN_SURPRISES that neither repeat nor continue the one before, so a run (`aaaa...`, `abcd...`,
    `1234...`) or a short word repeated is refused. A random key fails rarely: one of secrets.token_urlsafe(16)'s
    22 characters with a probability of about 1e-8, one of 16 random characters about 4e-4 (draw another)."""
    surprises = 1 + sum(abs(ord(a) - ord(b)) > 1 for a, b in itertools.pairwise(key))
    if len(set(key)) < MIN_DISTINCT:
        return f"it has {len(set(key))} different characters (at least {MIN_DISTINCT})"
    if surprises < MIN_SURPRISES:
        return (f"only {surprises} of its characters neither repeat nor continue the one before (at least "
                f"{MIN_SURPRISES}: no aaaa, abcd or 1234 runs)")
    return None


def make_key(environ=None) -> str:
    """GRPO_PRESENTER_KEY when set (ValueError in one line if it is not 16-128 URL-safe characters or is easy to
    guess, `weakness()`, saying what a strong one is), else a random key of 128 bits."""
    import os

    from sim.validate import neutral

    raw = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not raw:
        return secrets.token_urlsafe(16)
    if not KEY_FORM.fullmatch(raw):
        raise ValueError(f"{ENV} must be 16 to 128 characters from A-Z a-z 0-9 _ -, got {len(raw)} characters "
                         f"({neutral(raw[:4])}...); {STRONG}")  # fmt: skip
    if (why := weakness(raw)) is not None:
        raise ValueError(f"{ENV} is too easy to guess: {why}; {STRONG}")
    return raw


def matches(given: str | None, key: str | None) -> bool:
    """Is `given` the key? In constant time (as long as the key's length), so a timing shows nothing of it."""
    if not given or not key:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), key.encode("utf-8"))


def announce(key: str, environ=None) -> str:
    """The line the server prints at start (its log, the lecturer's terminal): the key it made; a key set in
    GRPO_PRESENTER_KEY is not written again (whoever set it has it; scripts/serve.sh prints its own once)."""
    import os

    if (os.environ if environ is None else environ).get(ENV, "").strip() == key:
        return (f"GRPO Playground presenter key: the one in {ENV} (not printed; the lecturer opens a page with "
                f"?presenter=KEY for priority over the class)")
    return (f"GRPO Playground presenter key: {key} (the lecturer opens a page with ?presenter={key} for priority "
            f"over the class; keep it off the projector: the page drops it from the address bar)")


WRONG_FREE = 5  # wrong keys a client address may try at once
WRONG_EVERY_S = 60.0  # then one more for every minute it waits
MAX_CLIENTS = 10_000  # addresses remembered (the least recently seen forgotten first)


class WrongKeys:
    """Wrong presenter keys per client address (an IPv6 address's /64, which one visitor may hold whole): a bucket
    of WRONG_FREE tries that refills one every WRONG_EVERY_S. While a client's bucket is empty its keys are not
    compared at all, so a guesser gets about one try a minute; a client that has not been guessing is never
    slowed, the right key included. The Server holds one (its `wrong_keys`); thread-safe.

        wrong = WrongKeys()
        wrong.wait_s("203.0.113.7")   # 0.0: compare the key now
        wrong.missed("203.0.113.7")   # after a wrong one; five of them, then wait_s() is about 60"""

    def __init__(self, free: int = WRONG_FREE, every_s: float = WRONG_EVERY_S, clock=time.monotonic,
                 max_clients: int = MAX_CLIENTS) -> None:
        self.free, self.every_s, self.clock, self.max_clients = free, every_s, clock, max_clients
        self._left: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (tries left, when)
        self._lock = threading.Lock()

    def _now_left(self, client: str) -> float:
        left, then = self._left.get(client, (self.free, 0.0))
        return min(self.free, left + (self.clock() - then) / self.every_s)

    def wait_s(self, client: str) -> float:
        """Seconds until a key from `client` is compared again; 0.0 now."""
        with self._lock:
            left = self._now_left(client)
        return 0.0 if left >= 1 else (1 - left) * self.every_s

    def missed(self, client: str) -> None:
        """A wrong key from `client`: one try fewer."""
        with self._lock:
            self._left[client] = (self._now_left(client) - 1, self.clock())
            self._left.move_to_end(client)
            while len(self._left) > self.max_clients:
                self._left.popitem(last=False)


def client_of(address: str | None) -> str:
    """Whose tries an address spends: an IPv4 address itself, an IPv6 address's /64 network; None (this machine:
    a browser on it, or a proxy on it that sends no X-Forwarded-For) is "local"."""
    if not address:
        return "local"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped is not None:  # ::ffff:a.b.c.d, an IPv4 client of a dual-stack socket
        return str(ip.ipv4_mapped)
    return str(ipaddress.ip_network(f"{ip}/64", strict=False))


def claim(server) -> None:
    """Read ?presenter= once: a right key (`server.presenter_key`) marks this session as the lecturer's; right or
    wrong, the parameter leaves the address bar at once (a wrong one with a warning). A client address that has
    tried too many wrong keys (`server.wrong_keys`) has its key not compared until a try comes back."""
    import streamlit as st

    given = st.query_params.get_all(PARAM)
    if not given:
        return
    del st.query_params[PARAM]
    client = client_of(st.context.ip_address)  # behind serve.sh's HAProxy, the address HAProxy saw
    wait = server.wrong_keys.wait_s(client)
    if wait > 0:
        st.warning(f"Too many wrong presenter keys from your address: a key is not checked for another "
                   f"{wait:.0f} s. The page opens as a student's.", icon="⚠️")
    elif matches(given[-1], server.presenter_key):
        st.session_state[_FLAG] = True
    else:
        server.wrong_keys.missed(client)
        st.warning("This link's presenter key is not this server's: the page opens as a student's. (The key is "
                   "printed by the server when it starts.)", icon="⚠️")  # fmt: skip


def priority() -> int:
    """LECTURER for a session that showed the presenter key (claim()), else STUDENT; STUDENT outside a page."""
    import streamlit as st

    try:
        return LECTURER if st.session_state.get(_FLAG, False) else STUDENT
    except Exception:  # no script run (a thread of the server): nobody's priority
        return STUDENT
