"""One local cell at a time on this machine, whatever queue or study started it: cells sharing
a machine would time each other (and share its GPUs).

Two flocks in a per-machine dir (ORCHESTRATOR_LOCK_DIR, else /tmp/orchestrator-<uid>):
- cell.lock, held shared by every rank of a running local cell (CellRun takes it), so the
  kernel lets it go when the ranks end, however they end: a killed queue's job still holds it;
- queue.lock, held by the one queue that starts cells here; it records the pid of the job
  it started last, which covers the seconds before that job's ranks take cell.lock.
A queue waits for both (and says so in its log) before it starts a cell.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from typing import IO
from collections.abc import Callable, Iterator

from orchestrator.errors import UserError
from orchestrator.local_jobs import LOCAL_JOB_MARKER, pid_alive

LOCK_DIR_ENV = "ORCHESTRATOR_LOCK_DIR"
POLL_S = 1.0


def lock_dir() -> Path:
    """Per machine (not per results dir): two studies' queues must not overlap either."""
    return Path(os.environ.get(LOCK_DIR_ENV) or f"/tmp/orchestrator-{os.getuid()}")


def cell_lock_path() -> Path:
    return lock_dir() / "cell.lock"


def check_lock_dir() -> None:
    """Make the dir before a queue starts, so that a bad one is said now, not in the queue's log."""
    try:
        lock_dir().mkdir(parents=True, exist_ok=True)
        with open(cell_lock_path(), "a"):
            pass
    except OSError as exc:
        raise UserError(f"cannot write the local executor's lock in {lock_dir()} ({exc.strerror}); "
                        f"set {LOCK_DIR_ENV} to a dir of this machine you can write") from exc


@contextlib.contextmanager
def running_cell(path: str) -> Iterator[None]:
    """Held by each rank of a local cell while it runs."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        yield


@contextlib.contextmanager
def queue_turn(say: Callable[[str], None]) -> Iterator[IO[str]]:
    """This machine's queue lock, for a queue's whole run; another queue's cells go first."""
    check_lock_dir()
    with open(lock_dir() / "queue.lock", "a+") as handle:
        if not _try_lock(handle, fcntl.LOCK_EX):
            say(f"waiting: another local queue runs cells on this machine ({handle.name})")
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
    with open(cell_lock_path(), "a") as handle:
        free = _try_lock(handle, fcntl.LOCK_EX)
    return not free  # closing the handle let go of the lock if it got it


def _last_job_alive(turn: IO[str]) -> bool:
    turn.seek(0)
    pid = turn.read().strip()
    return pid.isdigit() and pid_alive(int(pid), LOCAL_JOB_MARKER)


def _try_lock(handle: IO[str], mode: int) -> bool:
    try:
        fcntl.flock(handle, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
