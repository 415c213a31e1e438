"""Which job runs which cell: an append-only JSON-lines file in the results dir.

Lines are only ever appended (under a lock), so a crash loses at most the line being
written; the newest line for a cell is its current submission.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from orchestrator.errors import RegistryError

REGISTRY_FILE = "registry.jsonl"
LOCK_FILE = ".submit.lock"


@dataclass(frozen=True)
class Submission:
    cell_id: str
    executor: str  # slurm | local
    job_id: Optional[str]  # SLURM "ARRAY_TASK" id, or the local job's pid; None while queued locally
    array: str
    submitted_at: str
    log_out: Optional[str] = None  # rank 0's stdout
    log_err: Optional[str] = None
    queue_pid: Optional[int] = None  # the local queue process that runs it


def registry_path(results_dir: Path) -> Path:
    return Path(results_dir) / REGISTRY_FILE


def append(results_dir: Path, submissions: list[Submission]) -> None:
    if not submissions:
        return
    lines = "".join(json.dumps(dataclasses.asdict(s), sort_keys=True) + "\n" for s in submissions)
    path = registry_path(results_dir)
    try:
        with open(path, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.write(lines)
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise RegistryError(f"cannot write the registry {path}: {exc.strerror}; check the results dir's permissions") from exc


def read_all(results_dir: Path) -> list[Submission]:
    path = registry_path(results_dir)
    if not path.exists():
        return []
    entries = []
    with open(path) as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                entries.append(Submission(**json.loads(line)))
            except (ValueError, TypeError) as exc:
                if not line.endswith("\n"):
                    continue  # a line cut short by a crash: its submission was never confirmed
                raise RegistryError(
                    f"registry {path} line {number} is corrupt ({exc}); fix or delete that line"
                ) from exc
    return entries


def latest(results_dir: Path) -> dict[str, Submission]:
    """The current submission of each cell."""
    return {s.cell_id: s for s in read_all(results_dir)}


@contextlib.contextmanager
def submit_lock(results_dir: Path) -> Iterator[None]:
    """Held for a whole `submit`, so two at once cannot both queue the same cells."""
    path = Path(results_dir) / LOCK_FILE
    try:
        handle = open(path, "a")
    except OSError as exc:
        raise RegistryError(f"cannot write in {results_dir}: {exc.strerror}; check its permissions") from exc
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
