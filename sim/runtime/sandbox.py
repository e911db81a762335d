"""What keeps a worker's code in its box (Linux): its process tree, its threads, its memory.

sim/runtime/procs.py calls these in a worker (`enter`, `reap`, `limit_memory`) and in the caller (`kill_tree`,
`threads`). Why each piece:

  * Nothing left running. A worker is a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so whatever its code
    starts stays in its process tree even in a new session or after a setsid double fork, and the worker kills
    that tree after every call (a process group would not hold them). A worker that runs code from outside (the
    lab's, `sandbox=True`) is boxed further, since its code may turn the subreaper off (prctl(..., 0)) and
    double-fork out of the tree (issue 43: seven `sleep 600` outlived `lab check` as children of PID 1):
      1. "pid namespace": the worker first makes a user and PID namespace (unshare, as `unshare --user --pid
         --fork`) and forks; the child is PID 1 of its namespace and serves. Nothing started inside can leave
         it, every orphan comes back to it, `kill(-1, SIGKILL)` from it ends all of them at once (no tree to
         read), and when it dies the kernel kills the whole namespace. The parent only waits for it (and kills
         it if the caller's process goes). Needs user namespaces, which a kernel or a container may refuse
         (Docker's default seccomp profile, Ubuntu's AppArmor restriction).
      2. "seccomp": else a seccomp filter (x86_64, aarch64) refuses what leaves a subreaper's tree:
         PR_SET_CHILD_SUBREAPER, clone(CLONE_PARENT) (a child of the worker's parent) and clone3 (whose flags a
         filter cannot read: ENOSYS, so glibc falls back to clone), and any foreign system-call ABI (int 0x80,
         x32), through which the same calls have other numbers.
      3. "subreaper": else the subreaper alone (what every other worker has).
    A cgroup would do as well (memory.max, cgroup.kill), but needs one the server may write: on the machine
    this was built on only the machine's own v1 hierarchies are writable (not the project's to touch) and its v2
    has no memory controller; the project's Docker image has a read-only /sys/fs/cgroup.
  * The caller freezes a hung worker's whole tree (SIGSTOP, so nothing forks away) before it kills it; the tree
    is read from /proc (`kill_tree`).
  * Threads: a boxed worker's thread count is read by the caller after each call (`threads`); one that a call
    left behind (a student's `threading.Thread(target=spin)`) makes the caller replace the worker, or it would
    spin on between calls, one more per file change (issue 43: both lab workers at 85-100% CPU).
  * Memory: RLIMIT_DATA, memory_mb above what the worker holds at start (heap, private mappings, thread stacks).
    It does not count shared mappings (6 GiB MAP_SHARED passed a 1,024 MB cap, issue 43), so a boxed worker
    also gets RLIMIT_AS, memory_mb above its address space at start (torch's reservations are made by then:
    the lab's checks leave the address space as it was, measured), and one malloc arena, so that a thread of
    its code does not reserve 64 MB of that budget. Files in a tmpfs (/dev/shm) are memory no rlimit counts.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import resource
import signal
import time

MiB = 1024 * 1024
MODES = ("pid namespace", "seccomp", "subreaper")
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _PR_SET_CHILD_SUBREAPER = 1, 38, 22, 36
_CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_PARENT = 0x10000000, 0x20000000, 0x00008000
_M_ARENA_MAX = -8
_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, arg: int = 0) -> None:
    if _libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


# ---- process trees (Linux /proc) ------------------------------------------------------------------

def _stat(pid) -> tuple[bytes, int] | None:
    """(state letter, parent pid) from /proc/PID/stat, or None once the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb", buffering=0) as f:
            state, ppid = f.read(1024).rsplit(b")", 1)[1].split(None, 2)[:2]
        return state, int(ppid)
    except (OSError, ValueError, IndexError):  # gone, or exiting as we read (an empty file)
        return None


def _signal(pids, sig) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, sig)


def kill_tree(pid: int, *, include_root: bool = True) -> set[int]:
    """Freeze pid and every descendant (SIGSTOP, until no new one appears), then SIGKILL them all and wait until
    the descendants are gone. include_root=False (a process cleaning up after itself): only the descendants."""
    tree = {pid}
    if include_root:
        _signal(tree, signal.SIGSTOP)
    while new := {int(n) for n in os.listdir("/proc") if n.isdigit() and (_stat(n) or (0, 0))[1] in tree} - tree:
        _signal(new, signal.SIGSTOP)
        tree |= new
    if not include_root:
        tree.discard(pid)
    _signal(tree, signal.SIGKILL)
    deadline, rest = time.monotonic() + 2.0, tree - {pid}  # none of what it started runs on once this returns
    while any((_stat(p) or (b"Z", 0))[0] not in (b"Z", b"X") for p in rest) and time.monotonic() < deadline:
        time.sleep(0.001)
    return tree


def threads(pid: int) -> int:
    """How many threads process `pid` has (0 once it is gone)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def host_pid() -> int:
    """This process's pid as the caller sees it: /proc is the caller's mount, so /proc/self names us by the
    caller's number even from inside a PID namespace (where os.getpid() is 1)."""
    with contextlib.suppress(OSError, ValueError):
        return int(os.readlink("/proc/self"))
    return os.getpid()


# ---- in the worker ---------------------------------------------------------------------------------

def enter(boxed: bool, *, closing=(), modes=MODES) -> str:
    """First thing in a fresh worker process, while it has one thread: make it a subreaper and, if `boxed`, box it
    in the first of `modes` this system allows (the module's docstring). Returns the mode in force; with "pid
    namespace" it returns in the namespace's first process, and the process it was called in stays behind to
    wait for that one (closing `closing`, its copies of the caller's pipes) and never returns."""
    if boxed and "pid namespace" in modes and _unshare():
        child = os.fork()
        if child:
            _wait_for(child, closing)  # never returns
        with contextlib.suppress(OSError):
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # its parent killed: the namespace dies with it
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # (PID 1 reaps its namespace anyway)
        return "pid namespace"
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # before the filter, which refuses this very call
    if boxed and "seccomp" in modes and _seccomp():
        return "seccomp"
    return "subreaper"


def _unshare() -> bool:
    """A new PID namespace for this process's children, in a new user namespace (the user's own ids mapped
    inside; as root, a PID namespace alone if user namespaces are off), or False where neither is allowed."""
    uid, gid = os.getuid(), os.getgid()
    if _libc.unshare(_CLONE_NEWUSER | _CLONE_NEWPID) == 0:
        try:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w") as f:
                    f.write(text)
        except OSError:  # not ours to map: the namespace's processes would run as nobody (no fork has happened,
            return False  # so the unused PID namespace costs nothing; the seccomp filter comes next)
        return True
    return os.geteuid() == 0 and _libc.unshare(_CLONE_NEWPID) == 0


def _wait_for(child: int, closing) -> None:
    """The process that made the namespace: wait for its first process and leave as it left; if the caller's
    process goes first, kill it (and so the namespace). It polls: after unshare(CLONE_NEWPID) a process cannot
    start a thread (clone answers EINVAL)."""
    for conn in closing:
        conn.close()  # the caller must see the pipes close when the namespace's process ends
    parent = os.getppid()
    while not (done := os.waitpid(child, os.WNOHANG))[0]:
        if os.getppid() != parent:  # the fork server, so the server, is gone
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        time.sleep(0.02)
    status = done[1]
    if os.WIFSIGNALED(status):  # a crash reads as the same signal in the caller's exit code
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


class _Filter(ctypes.Structure):  # struct sock_filter: one BPF instruction
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):  # struct sock_fprog
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Filter))]


# machine -> (AUDIT_ARCH_*, system-call numbers, the x32 ABI's bit or None)
_ARCH = {"x86_64": (0xC000003E, {"prctl": 157, "clone": 56, "clone3": 435}, 0x40000000),
         "aarch64": (0xC00000B7, {"prctl": 167, "clone": 220, "clone3": 435}, None)}
_LD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS; BPF_JMP|JEQ, JGE, JSET|K; BPF_RET|K
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000  # SECCOMP_RET_ALLOW; SECCOMP_RET_ERRNO | errno


def filter_rows(machine: str) -> list[tuple] | None:
    """The filter of the module's docstring (2.) as (label, code, k, label if true, label if false) rows; the
    seccomp_data it reads: nr at byte 0, arch at 4, the first argument's low half at 16 (little-endian)."""
    if machine not in _ARCH:
        return None
    audit, nr, x32 = _ARCH[machine]
    rows = [(None, _LD, 4, None, None), (None, _JEQ, audit, None, "enosys"), (None, _LD, 0, None, None)]
    if x32 is not None:
        rows.append((None, _JGE, x32, "enosys", None))
    return rows + [
        (None, _JEQ, nr["clone3"], "enosys", None), (None, _JEQ, nr["prctl"], None, "clone"),
        (None, _LD, 16, None, None), (None, _JEQ, _PR_SET_CHILD_SUBREAPER, "eperm", "allow"),
        ("clone", _JEQ, nr["clone"], None, "allow"), (None, _LD, 16, None, None),
        (None, _JSET, _CLONE_PARENT, "eperm", "allow"),
        ("allow", _RET, _ALLOW, None, None), ("eperm", _RET, _ERRNO | errno.EPERM, None, None),
        ("enosys", _RET, _ERRNO | errno.ENOSYS, None, None)]


def _seccomp() -> bool:
    """Install filter_rows' filter for this machine; False where it has none to give."""
    rows = filter_rows(platform.machine())
    if rows is None:
        return False
    at = {label: i for i, (label, *_rest) in enumerate(rows) if label}
    jump = lambda i, label: 0 if label is None else at[label] - i - 1  # noqa: E731 (BPF jumps are relative)
    code = (_Filter * len(rows))(*(_Filter(c, jump(i, t), jump(i, f), k) for i, (_, c, k, t, f) in enumerate(rows)))
    program = _Program(len(rows), code)
    try:
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)  # what an unprivileged process needs to install a filter
    except OSError:
        return False
    return _libc.prctl(_PR_SET_SECCOMP, 2, ctypes.byref(program), 0, 0) == 0  # SECCOMP_MODE_FILTER


def limit_memory(memory_mb: int, *, address_space: bool) -> None:
    """Cap what this process may still allocate at memory_mb above what it holds now: its data (RLIMIT_DATA)
    and, for a boxed worker, its address space (RLIMIT_AS, which counts shared mappings too)."""
    held = {k: int(v.split()[0]) * 1024 for k, v in (line.split(":", 1) for line in open("/proc/self/status"))
            if k in ("VmData", "VmSize")}
    resource.setrlimit(resource.RLIMIT_DATA, (held["VmData"] + memory_mb * MiB,) * 2)
    if address_space:
        _libc.mallopt(_M_ARENA_MAX, 1)  # threads share the main arena: none reserves 64 MB of the budget
        resource.setrlimit(resource.RLIMIT_AS, (held["VmSize"] + memory_mb * MiB,) * 2)


def reap(mode: str) -> None:
    """Kill and reap whatever this worker's calls started, in the worker's mode."""
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:  # no child means no descendant at all: an orphan comes back to this process
        return
    if mode == "pid namespace":  # PID 1: every other process of the namespace, at once, then their zombies
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while True:
                os.waitpid(-1, 0)
        return
    kill_tree(os.getpid(), include_root=False)  # they are zombies now: reap what is ours (later ones: next call)
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
