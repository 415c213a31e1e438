"""The current study: the one `plan` last planned in the results root (runs/), which the other
verbs act on when neither --study nor --results is given.

A small pointer file in the root names it: the study's name, its results dir (a folder of the
root, by name) and when it was planned. Written atomically by `plan`; read only when it is a
regular file of this user that names a folder of the root: on a shared disk, anyone who can
write in runs/ could otherwise send your `cancel` to another study.
"""
from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from jobs.core.atomic import write_json_atomic
from orchestrator.errors import PlanError

ROOT = Path("runs")  # the default results root: runs/<study>
POINTER = "current-study.json"
POINTER_MAX = 4096  # bytes: three short fields


@dataclass(frozen=True)
class CurrentStudy:
    study: str  # the study's name, as plan.json says
    results: str  # its results dir: a folder of the root, by name
    planned_at: str  # plan.json's created_at (ISO, UTC)

    def results_dir(self, root: Path = ROOT) -> Path:
        return root / self.results


def write_current(results_dir: Path, study: str, planned_at: str, root: Path = ROOT) -> Optional[Path]:
    """Make `study` (planned in `results_dir`) the current one, where its dir is a folder of `root`;
    a plan elsewhere (--results /scratch/...) changes nothing. The pointer's path, or None."""
    if Path(results_dir).absolute().parent != root.absolute():
        return None
    data = {"study": study, "results": Path(results_dir).name, "planned_at": planned_at}
    return write_json_atomic(root / POINTER, data)


def read_current(root: Path = ROOT) -> Optional[CurrentStudy]:
    """The current study, or None where no plan made one; a pointer that is not this user's
    regular file, or that names anything but a folder of the root, is refused (PlanError)."""
    path = root / POINTER
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    fix = f"remove it (`rm {path}`) and plan again, or pass --study or --results"
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > POINTER_MAX:
        owner = "another user's file" if info.st_uid != os.getuid() else "not a small regular file"
        raise PlanError(f"{path} is {owner}, not a pointer `plan` wrote; {fix}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            data = json.loads(f.read(POINTER_MAX))
        current = CurrentStudy(**{k: data[k] for k in ("study", "results", "planned_at")})
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PlanError(f"{path} is unreadable ({type(exc).__name__}); {fix}") from None
    name = current.results
    if not all(isinstance(v, str) and v for v in (current.study, name, current.planned_at)) \
            or name in (".", "..") or "/" in name or "\0" in name:
        raise PlanError(f"{path} names a results dir outside {root}/; {fix}")
    return current
