"""The fork server's last preload (sim.runtime.procs.PRELOAD): two changes to every worker forked from it.

A worker is a fork of the fork server and shares its memory pages until it writes to one.

1. A worker never runs the server's main script again. multiprocessing prepares a new process like the one
   that asked for it: it runs that process's `__main__` file again, as `__mp_main__`, so that functions
   defined there can be unpickled. In the app `__main__` is whichever script Streamlit is running (app.py or a
   page), so a worker started during or after a class (a replaced worker, the first TinyLM run, the lab's pool)
   ran that script again, outside any session: measured, a replaced worker held 52 MB of memory of its own
   and two of the server's threads, where a worker forked before any page ran held 4 MB. What the workers run
   lives in modules (sim/, ui/, tests/), never in `__main__`, so that step is skipped here.
2. Python's cyclic garbage collector writes to the header of every object it visits, so a worker's first full
   collection would copy every page that holds torch's and numpy's module objects: measured, one fresh worker
   went from 4.7 to 55 MB of private memory with one `gc.collect()`. `gc.freeze()` moves the objects alive now
   into a generation the collector never visits, here and so in every worker forked from here; what a worker
   creates later is collected as usual.
"""

import gc
from multiprocessing import spawn


def _skip(_main: str) -> None:
    """In place of spawn's _fixup_main_from_path and _fixup_main_from_name: import nothing as __mp_main__."""


spawn._fixup_main_from_path = spawn._fixup_main_from_name = _skip
gc.freeze()
