"""One local cell at a time on this machine, whatever queue or study started it: cells sharing
a machine would time each other (and share its GPUs).

Two flocks in a per-machine dir (ORCHESTRATOR_LOCK_DIR, else /tmp/orchestrator-<uid>):
- cell.lock, held shared by every rank of a running local cell (CellRun takes it), so the
  kernel lets it go when the ranks end, however they end: a killed queue's job still holds it;
- queue.lock, held by the one queue that starts cells here; it records the pid of the job
  it started last, which covers the seconds before that job's ranks take cell.lock.
A queue waits for both (and says so in its log) before it starts a cell.

On a shared login node the dir is private: made with mode 0700, refused when another user owns
it (or it is a link), made 0700 again when it is ours but open to others. Its locks are opened
without following links, only when they are regular files of ours with one name, and kept 0600:
nobody else can hold a lock there (and stall the queue), nor make us write where a link points.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from pathlib import Path
from typing import IO
from collections.abc import Callable, Iterator

from orchestrator.errors import UserError
from orchestrator.local.processes import LOCAL_JOB_MARKERS, pid_alive

LOCK_DIR_ENV = "ORCHESTRATOR_LOCK_DIR"
POLL_S = 1.0
QUEUE_LOCK = "queue.lock"


def lock_dir() -> Path:
    """Per machine (not per results dir): two studies' queues must not overlap either."""
    return Path(os.environ.get(LOCK_DIR_ENV) or f"/tmp/orchestrator-{os.getuid()}")


def cell_lock_path() -> Path:
    return lock_dir() / "cell.lock"


def check_lock_dir() -> None:
    """Make the dir (private) before a queue starts, so that a bad one is said now, not in the queue's log."""
    path = lock_dir()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        found = os.lstat(path)
        if stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() and found.st_mode & 0o077:
            os.chmod(path, 0o700, follow_symlinks=False)  # ours, left open by an earlier version
        _check_private(path, os.lstat(path))
        for lock in (cell_lock_path(), path / QUEUE_LOCK):
            _open_lock(lock).close()
    except OSError as exc:
        raise UserError(f"cannot write the local executor's lock in {path} ({exc.strerror}); "
                        f"set {LOCK_DIR_ENV} to a dir of this machine you can write") from exc


def _check_private(path: Path, found: os.stat_result) -> None:
    if stat.S_ISLNK(found.st_mode) or not stat.S_ISDIR(found.st_mode):
        why = "is a link" if stat.S_ISLNK(found.st_mode) else "is not a directory"
    elif found.st_uid != os.getuid():
        why = "belongs to another user"
    else:
        return
    raise UserError(f"the local executor's lock dir {path} {why}; another user may have made it to "
                    f"meddle with your queue: set {LOCK_DIR_ENV} to a new dir of your own (it is made mode 0700)")


def _open_lock(path: Path) -> IO[str]:
    """A lock file of the private dir, opened read-write without following a link and without
    truncating it; refused unless it is a regular file of ours with one name (a hard link to a
    file elsewhere would be written through)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link
            raise _not_ours(path) from exc
        raise
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode) or found.st_uid != os.getuid() or found.st_nlink != 1:
        os.close(fd)
        raise _not_ours(path)
    if found.st_mode & 0o077:
        os.fchmod(fd, 0o600)
    os.set_blocking(fd, True)
    return open(fd, "r+")


def _not_ours(path: Path) -> UserError:
    return UserError(f"the local executor's lock {path} is not a regular file of yours; remove it "
                     f"(another user may have put it there) or set {LOCK_DIR_ENV} to a new dir of your own")


@contextlib.contextmanager
def running_cell(path: str) -> Iterator[None]:
    """Held by each rank of a local cell while it runs."""
    with _open_lock(Path(path)) as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        yield


@contextlib.contextmanager
def queue_turn(say: Callable[[str], None]) -> Iterator[IO[str]]:
    """This machine's queue lock, for a queue's whole run; another queue's cells go first."""
    check_lock_dir()
    with _open_lock(lock_dir() / QUEUE_LOCK) as handle:
        if not _try_lock(handle, fcntl.LOCK_EX):
            say(f"waiting: another local queue runs cells on this machine ({lock_dir() / QUEUE_LOCK})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield handle


def wait_until_idle(turn: IO[str], say: Callable[[str], None], poll_s: float = POLL_S) -> None:
    """Until no cell runs here: none holds cell.lock and the job last started has ended
    (a queue killed a moment after starting it left that job running, not yet holding the lock)."""
    said = False
    while _cell_running() or _last_job_alive(turn):
        if not said:
            say(f"waiting: a cell is running on this machine ({cell_lock_path()} is held); "
                "this queue starts its next cell when that one ends")
            said = True
        time.sleep(poll_s)


def record_start(turn: IO[str], job_id: str) -> None:
    turn.seek(0)
    turn.truncate()
    turn.write(job_id)
    turn.flush()


def _cell_running() -> bool:
    with _open_lock(cell_lock_path()) as handle:
        free = _try_lock(handle, fcntl.LOCK_EX)
    return not free  # closing the handle let go of the lock if it got it


def _last_job_alive(turn: IO[str]) -> bool:
    turn.seek(0)
    pid = turn.read().strip()
    return pid.isdigit() and pid_alive(int(pid), LOCAL_JOB_MARKERS)


def _try_lock(handle: IO[str], mode: int) -> bool:
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
