"""No two local cells on one GPU of this machine, whatever queue or study started them: cells
sharing a GPU would time each other. Cells on disjoint GPUs run side by side (placement.py).

Flocks in a per-machine dir (ORCHESTRATOR_LOCK_DIR, else /tmp/orchestrator-<uid>):
- gpu-N.lock, one per GPU (cell.lock: the one slot of a machine without GPUs), held shared by
  every rank of a cell running on it (LocalCellRun takes them), so the kernel lets it go when
  the ranks end, however they end: a killed queue's job still holds it. It also holds the id of
  the job started on it last, which covers the seconds before that job's ranks take the lock,
  and tells a job which cell ran beside it (jobs.core.beside);
- queue.lock, held by a queue while it finds free GPUs and claims them (a shared lock of its
  own on each until its job ends), so that two queues never claim one GPU.

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
from pathlib import Path
from typing import IO
from collections.abc import Iterable, Iterator

from orchestrator.errors import UserError
from orchestrator.local.placement import WHOLE
from orchestrator.local.processes import LOCAL_JOB_MARKERS, pid_alive

LOCK_DIR_ENV = "ORCHESTRATOR_LOCK_DIR"
QUEUE_LOCK = "queue.lock"


def lock_dir() -> Path:
    """Per machine (not per results dir): two studies' queues must not overlap either."""
    return Path(os.environ.get(LOCK_DIR_ENV) or f"/tmp/orchestrator-{os.getuid()}")


def slot_lock_path(slot: int) -> Path:
    return lock_dir() / ("cell.lock" if slot == WHOLE else f"gpu-{slot}.lock")


def cell_lock_path() -> Path:
    """The lock of a machine without GPUs."""
    return slot_lock_path(WHOLE)


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
def running_cell(paths: Iterable[str]) -> Iterator[None]:
    """Held by each rank of a local cell while it runs: its GPUs' locks, shared."""
    with contextlib.ExitStack() as stack:
        for path in paths:
            fcntl.flock(stack.enter_context(_open_lock(Path(path))), fcntl.LOCK_SH)
        yield


@contextlib.contextmanager
def placing() -> Iterator[None]:
    """This machine's queue lock, while a queue finds free GPUs and claims them (a moment). The dir is
    checked each time: it may have been replaced since the queue started."""
    check_lock_dir()
    with _open_lock(lock_dir() / QUEUE_LOCK) as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def free_slots(slots: Iterable[int]) -> frozenset[int]:
    """The slots no cell runs on (inside placing()): none holds its lock and the job started on it
    last has ended (a queue killed a moment after starting it left that job running, not yet
    holding the lock)."""
    return frozenset(slot for slot in slots if _slot_free(slot))


class Claim:
    """A queue's hold on the slots of a cell it starts (shared locks, beside its ranks'), from before
    the job starts until it has ended."""

    def __init__(self, slots: tuple[int, ...]) -> None:
        self.slots = slots
        self.handles: list[IO[str]] = []
        try:
            for slot in slots:
                self.handles.append(_open_lock(slot_lock_path(slot)))
                fcntl.flock(self.handles[-1], fcntl.LOCK_SH)
        except BaseException:
            self.release()
            raise

    def record(self, job_id: str) -> None:
        """The job started on these slots, in their files (free_slots and jobs.core.beside read it)."""
        for handle in self.handles:
            handle.seek(0)
            handle.truncate()
            handle.write(job_id)
            handle.flush()

    def release(self) -> None:
        for handle in self.handles:
            handle.close()
        self.handles = []


def _slot_free(slot: int) -> bool:
    with _open_lock(slot_lock_path(slot)) as handle:
        if not _try_lock(handle, fcntl.LOCK_EX):
            return False
        handle.seek(0)
        job = handle.read().strip()
    return not (job.isdigit() and pid_alive(int(job), LOCAL_JOB_MARKERS))


def _try_lock(handle: IO[str], mode: int) -> bool:
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
