"""Who gets the lecturer's priority: a session that showed the server's presenter key. The one rule; the server's
gate (ui/work.py) asks `priority()`, and so should any later queue.

    key = make_key()                 # the Server's: GRPO_PRESENTER_KEY, or a fresh random one (printed at start)
    claim(server)                    # a page, first thing: ?presenter=KEY marks this session, then leaves the URL
    priority()                       # LECTURER for that session, STUDENT for every other one

`?classroom=1` only enlarges the page (ui/page.py's presenter sizes): anyone can add it, so it grants nothing.
The key is compared in constant time (hmac.compare_digest), never written into a page, a share link or the
address bar: `claim()` removes it from the URL on the run that reads it, and the session remembers the answer.
A wrong key is said (one warning) and removed the same way.
"""

from __future__ import annotations

import hmac
import re
import secrets

PARAM = "presenter"  # ?presenter=KEY
ENV = "GRPO_PRESENTER_KEY"  # set it to give several servers (scripts/serve.sh's replicas) one key
KEY_FORM = re.compile(r"[A-Za-z0-9_-]{16,128}")  # URL-safe, long enough not to guess
LECTURER, STUDENT = 0, 1  # queue priorities: lower first
_FLAG = "_presenter"  # session_state: this session showed the key


def make_key(environ=None) -> str:
    """GRPO_PRESENTER_KEY when set (ValueError in one line if it is not 16-128 URL-safe characters), else a
    random key of 128 bits."""
    import os

    from sim.validate import neutral

    raw = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not raw:
        return secrets.token_urlsafe(16)
    if not KEY_FORM.fullmatch(raw):
        raise ValueError(f"{ENV} must be 16 to 128 characters from A-Z a-z 0-9 _ -, got {len(raw)} characters "
                         f"({neutral(raw[:4])}...)")  # fmt: skip
    return raw


def matches(given: str | None, key: str | None) -> bool:
    """Is `given` the key? In constant time (as long as the key's length), so a timing shows nothing of it."""
    if not given or not key:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), key.encode("utf-8"))


def announce(key: str) -> str:
    """The line the server prints at start (its log, the lecturer's terminal)."""
    return (f"GRPO Playground presenter key: {key} (the lecturer opens a page with ?presenter={key} for priority "
            f"over the class; keep it off the projector: the page drops it from the address bar)")


def claim(server) -> None:
    """Read ?presenter= once: a right key (`server.presenter_key`) marks this session as the lecturer's; right or
    wrong, the parameter leaves the address bar at once (a wrong one with a warning)."""
    import streamlit as st

    given = st.query_params.get_all(PARAM)
    if not given:
        return
    del st.query_params[PARAM]
    if matches(given[-1], server.presenter_key):
        st.session_state[_FLAG] = True
    else:
        st.warning("This link's presenter key is not this server's: the page opens as a student's. (The key is "
                   "printed by the server when it starts.)", icon="⚠️")  # fmt: skip


def priority() -> int:
    """LECTURER for a session that showed the presenter key (claim()), else STUDENT; STUDENT outside a page."""
    import streamlit as st

    try:
        return LECTURER if st.session_state.get(_FLAG, False) else STUDENT
    except Exception:  # no script run (a thread of the server): nobody's priority
        return STUDENT
