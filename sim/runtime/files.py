"""Writing files the user named: checked before any work, written whole or not at all.

    target = check_writable("out/history.csv", "--out")          # OutputPathError (one line) before a run
    check_apart([("--out", target)], inputs=[("FILE", "pool.csv")], keep=shipped())  # not what it reads
    write_atomically({target: rows_csv(rows).encode()})          # after it: temp file + rename

`check_writable` refuses, before anything is computed, what would fail or do harm later: a name too long for
the file system, a symlink loop, a link to a device (/dev/full), a directory, a parent that is not a directory
or cannot take a new file (a real probe: a read-only file system answers too). A symlink to a regular file is
followed (its target is replaced). `write_atomically` writes each file to a temporary file in the same directory,
fsyncs it, and renames all of them into place only once every one is complete: a full disk or an interruption
leaves the old files (or none), never half a file. `check_apart` refuses, before any work too, an output that is
a file the same run reads, a file the playground ships (`shipped()`: TinyLM's checkpoint, the recorded runs, the
examples) or another output of the same run.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import stat
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import BinaryIO

from sim.paths import DATA
from sim.validate import neutral

NAME_MAX = 255  # bytes in one file name (Linux, macOS); ENAMETOOLONG beyond


class OutputPathError(ValueError):
    """A path that cannot be written (bad input: the CLIs exit 2); str() says why, in one line."""


def user_path(path) -> Path:
    """`path` with `~` and `~user` expanded as a shell expands them: `~nosuch/x` (no such user) stays as written.
    (pathlib's expanduser raises RuntimeError for it, which once reached the user as a traceback.)"""
    return Path(os.path.expanduser(os.fspath(path)))


def shown_path(path) -> str:
    """A path for a one-line message: control and bidi characters escaped, a long one cut."""
    text = str(path)
    return neutral(text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)")


def check_writable(path, flag: str, *, also=()) -> Path:
    """The real path `path` would be written to (a link to a regular file followed); OutputPathError when
    writing it, or the companion files `also` (functions of that real path, e.g. a sidecar), cannot succeed."""
    shown = shown_path(path)
    try:
        target = Path(os.path.realpath(user_path(path)))
        for p in (target, *(f(target) for f in also)):
            _check_replaceable(p, flag, shown)
        parent = next((p for p in (target.parent, *target.parents) if p.exists()), None)
        if parent is None or not parent.is_dir():
            raise OutputPathError(f"{flag} {shown}: {shown_path(parent)} is not a directory")
        if parent == target.parent:  # a real probe: permissions, a read-only file system, no inodes left
            fd, probe = tempfile.mkstemp(dir=parent, prefix=".probe-")
            os.close(fd)
            os.unlink(probe)
        elif not os.access(parent, os.W_OK | os.X_OK):
            raise OutputPathError(f"{flag} {shown}: cannot create directories in {shown_path(parent)}")
    except OutputPathError:
        raise
    except OSError as e:  # ENAMETOOLONG, EACCES, EROFS, ELOOP from the path's own components
        raise OutputPathError(f"{flag} {shown}: cannot write there ({e.strerror or type(e).__name__})") from None
    return target


def check_folder(path, what: str) -> Path:
    """The real folder a command that writes into `path` would fill (a parent that is a link followed);
    OutputPathError for a symbolic link itself (what is written would land behind the link's back: give its
    target) and for the file system's root. `what` names the folder's use in the message ("the lesson")."""
    shown, path = shown_path(path), user_path(path)
    if os.path.islink(path):
        raise OutputPathError(f"{shown} is a symbolic link: give the folder it points to "
                              f"({shown_path(os.path.realpath(path))})")
    real = Path(os.path.realpath(path))
    if real == real.parent:
        raise OutputPathError(f"{shown} is the root of the file system: name a folder for {what}")
    return real


def _check_replaceable(p: Path, flag: str, shown: str) -> None:
    try:
        st = os.stat(p)  # follows links: a loop raises ELOOP; a name too long ENAMETOOLONG
    except FileNotFoundError:
        if len(os.fsencode(p.name)) > NAME_MAX:  # not there yet: it must be creatable
            raise OutputPathError(f"{flag} {shown}: the name {neutral(p.name[:40])}... is too long") from None
        return
    except OSError as e:
        raise OutputPathError(f"{flag} {shown}: {shown_path(p)} cannot be written ({e.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise OutputPathError(f"{flag} {shown}: {shown_path(p)} is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise OutputPathError(f"{flag} {shown}: {shown_path(p)} is not a regular file (a device or a pipe)")


Named = tuple[str, "str | os.PathLike"]  # (what the message calls it: "--out", "FILE", "--save-sft's sidecar"; path)


def _identity(path) -> tuple[str, tuple[int, int] | None]:
    """The file `path` names: its real path (links followed) and, if it exists, its device and inode (a hard link
    to a file is the same file)."""
    real = os.path.realpath(user_path(path))
    try:
        st = os.stat(real)
    except OSError:
        return real, None
    return real, (st.st_dev, st.st_ino)


def shipped(but: Iterable = ()) -> list[Named]:
    """The files the playground ships and reads (sim.paths.DATA: TinyLM's checkpoint and its sidecar, the recorded
    runs, the examples), as `check_apart`'s `keep`; `but`: paths an output may replace (TinyLM's documented rebuild
    of its checkpoint)."""
    allowed = {_identity(p)[0] for p in but}
    files = sorted(p for p in DATA.rglob("*") if p.is_file()) if DATA.is_dir() else []
    return [("a file the playground ships", p) for p in files if _identity(p)[0] not in allowed]


def check_apart(outputs: Iterable[Named], *, inputs: Iterable[Named] = (), keep: Iterable[Named] = ()) -> None:
    """OutputPathError, before any work, when an output of a run is a file the run reads (`inputs`), a file to keep
    (`keep`, e.g. `shipped()`), or another output of the same run: the run would destroy its own input, or write
    one output over another. Paths are compared as the files they name (links followed, hard links too).

        check_apart([("--out", "mine.csv")], inputs=[("FILE", "mine.csv")])
        # OutputPathError: --out mine.csv is FILE (mine.csv), which this run reads: ... (nothing was run)"""
    said = {"input": "{o} ({op}), which this run reads: writing it would destroy it",
            "keep": "{o} ({op})", "output": "also {o} ({op}): one output would overwrite the other"}
    others = [(n, _identity(n[1]), "input") for n in inputs] + [(n, _identity(n[1]), "keep") for n in keep]
    for what, path in outputs:
        me = _identity(path)
        for (o_what, o_path), o_id, role in others:
            if me[0] == o_id[0] or (me[1] is not None and me[1] == o_id[1]):
                why = said[role].format(o=o_what, op=shown_path(o_path))
                raise OutputPathError(f"{what} {shown_path(path)} is {why}; name another file (nothing was run)")
        others.append(((what, path), me, "output"))


Writer = bytes | Callable[[BinaryIO], object]


def write_atomically(files: Mapping[Path, Writer]) -> None:
    """Write every file (its bytes, or a function that writes to a binary file object) to a temporary file
    beside it, then put them all in place; on any error before that nothing is replaced and no temporary file is
    left.

    A new file gets the permissions a plain open() would give (the umask applies). A file replaced keeps its
    permissions (a 600 file stays 600: it was left 644, issue 43), and its owner and group where this user may
    set them; the temporary file never has wider permissions than the final one while it is written.

    Hard links: a replaced file that has other names (a hard link), and is this user's, is written in place,
    so that every name of it sees the new content, as `cp` and vim write such a file (renaming a new file over
    one name left the others with the old content without a word). The new content is complete in its temporary
    file first and the space reserved (posix_fallocate), so a full disk still leaves the old content whole; the
    copy itself runs with Ctrl-C and SIGTERM held until it ends. A linked file that is another user's is
    replaced as any other (its other names keep their content): writing into someone else's inode because a
    name of it lies where the output goes (a shared /tmp) would hand them the output."""
    temps: list[tuple[Path, Path, os.stat_result | None]] = []
    try:
        for path, write in files.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            old = _replaced(path)
            mode = 0o666 if old is None else stat.S_IMODE(old.st_mode) & 0o1777  # never set-uid or set-gid
            tmp = path.parent / f".{path.name[:64]}.{secrets.token_hex(6)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode & 0o777)
            temps.append((tmp, path, old))
            with os.fdopen(fd, "wb") as f:
                f.write(write) if isinstance(write, bytes) else write(f)
                f.flush()
                if old is not None:
                    os.fchmod(f.fileno(), mode)  # the umask took bits the old file had
                    with contextlib.suppress(OSError):  # root, or a group of one's own; else the user's
                        os.fchown(f.fileno(), old.st_uid, old.st_gid)
                os.fsync(f.fileno())
        for tmp, path, old in temps:
            if _in_place(old):
                _copy_into(tmp, path, old)
            else:
                os.replace(tmp, path)
    finally:
        for tmp, _, _ in temps:
            if os.path.lexists(tmp):
                os.unlink(tmp)


def _replaced(path: Path) -> os.stat_result | None:
    """The regular file `path` names now (links followed), or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _in_place(old: os.stat_result | None) -> bool:
    return old is not None and old.st_nlink > 1 and old.st_uid == os.geteuid()


def _copy_into(tmp: Path, path: Path, old: os.stat_result) -> None:
    """Overwrite the file `path` (the inode `old`) with the complete file `tmp`, keeping the inode."""
    data = tmp.read_bytes()
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (old.st_dev, old.st_ino):  # replaced meanwhile: not the file we looked at
            raise OSError(errno.ESTALE, f"{path} changed while it was written")
        try:  # the space first: a full disk fails here, with the old content still whole
            os.posix_fallocate(fd, 0, max(len(data), 1))
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):  # a file system that cannot say
                raise
        blocked = {signal.SIGINT, signal.SIGTERM}
        held = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)  # an interrupt lands after the copy, not in it
        try:
            view, at = memoryview(data), 0
            while at < len(data):
                at += os.pwrite(fd, view[at:], at)
            os.ftruncate(fd, len(data))
            os.fsync(fd)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    finally:
        os.close(fd)
