"""Opening a file of a results dir, which whoever can write there (a labmate on shared storage, a
slip of `ln -s`) may have made something else: only a regular file is opened, and read only up to
a bound. A FIFO (to read it is to wait for a writer, forever), a device (/dev/zero never ends), a
socket or a directory is refused unopened; so is a file larger than its bound. The error names
the file and says what it is; each reader adds what to do (skip it with a warning, or stop).
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO, Optional

MB = 1 << 20
RESULT_MAX = 64 * MB  # a result: 1.5 kB for a training cell, 250 kB for a PTQ cell
PLAN_MAX = 256 * MB  # plan.json: 8.6 MB for 100,000 cells
REGISTRY_MAX = 512 * MB  # registry.jsonl: about 30 MB for each submit of 100,000 cells
CACHE_MAX = 256 * MB  # the status cache, spent.json: a line per cell or job
LOG_READ_MAX = 64 * MB  # of a log, read at once (its end)

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


_MODES = {os.O_RDONLY: "rb", os.O_WRONLY: "wb", os.O_RDWR: "rb+"}  # fdopen's: it neither truncates nor creates


class NotRegular(OSError):
    """Not a regular file (a FIFO, a device, a socket, a directory): not opened. str() names it."""


class TooLarge(OSError):
    """A regular file larger than its bound: not read. str() names it."""


def open_regular(path: Path, what: str, flags: int = os.O_RDONLY, limit: Optional[int] = None) -> IO[bytes]:
    """`path` opened with `flags` (os.O_*; O_CREAT makes it with mode 0666 less the umask) if it is
    a regular file of at most `limit` bytes; else NotRegular or TooLarge, naming it as `what` PATH.
    Checked before opening (a device is never opened) and again on what was opened (it may have
    been swapped between): opened non-blocking, so that even a FIFO swapped in opens at once.
    With O_NOFOLLOW (the files written to), a link is NotRegular too."""
    try:
        _check(path, what, os.stat(path), limit)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP and flags & os.O_NOFOLLOW:  # what is written is never written through a link
            raise NotRegular(f"{what} {path} is not a regular file (a link)") from exc
        raise
    try:
        _check(path, what, os.fstat(fd), limit)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, _MODES[flags & os.O_ACCMODE])  # O_APPEND, where given, still holds for every write


def read_regular(path: Path, what: str, limit: int) -> bytes:
    """The whole of a regular file of at most `limit` bytes (see open_regular)."""
    with open_regular(path, what, limit=limit) as f:
        data = f.read(limit + 1)
    if len(data) > limit:  # it grew since it was looked at
        raise _too_large(path, what, len(data), limit)
    return data


def read_end(path: Path, what: str, size: int) -> tuple[bytes, int]:
    """The last `size` bytes of a regular file (fewer if it is shorter), and how many bytes
    come before them (see open_regular)."""
    with open_regular(path, what) as f:
        f.seek(0, os.SEEK_END)
        start = max(0, f.tell() - size)
        f.seek(start)
        return f.read(size), start


def _check(path: Path, what: str, found: os.stat_result, limit: Optional[int]) -> None:
    if not stat.S_ISREG(found.st_mode):
        kind = next((name for test, name in _KINDS if test(found.st_mode)), "a special file")
        raise NotRegular(f"{what} {path} is not a regular file ({kind})")
    if limit is not None and found.st_size > limit:
        raise _too_large(path, what, found.st_size, limit)


def _too_large(path: Path, what: str, size: int, limit: int) -> TooLarge:
    return TooLarge(f"{what} {path} is {size / MB:,.0f} MB, more than the {limit / MB:,.0f} MB such a file "
                    "may be: not read")
