"""A results dir nobody else can write, as ssh wants ~/.ssh: its jobs load their pickled calls from
it (logs/), so a labmate who can rewrite one runs code as you. `plan` and `submit` refuse such a dir
(check), or warn where the user opts in (ALLOW_ENV); the dirs they make are theirs alone to write."""
from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from orchestrator.errors import PlanError

ALLOW_ENV = "ORCHESTRATOR_ALLOW_SHARED_DIR"  # "1": a dir others may write is a warning, not an error
LOGS = "logs"  # jobs.core.layout's, where the jobs' calls are pickled


def others_may_write(path: Path) -> str:
    """Why someone else could change what is at `path` (a dir or file that exists), or "": it is
    writable by group or others, or another user (not root) owns it. A sticky dir (/tmp) is safe for
    what its owner keeps in it, which each part below it is checked for."""
    info = path.lstat()
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid not in (os.getuid(), 0):
        return f"{path} is owned by uid {info.st_uid}"
    if mode & 0o022 and not stat.S_ISLNK(info.st_mode) and not (stat.S_ISDIR(info.st_mode) and mode & stat.S_ISVTX):
        return f"{path} is mode {mode:04o}"
    return ""


def unsafe_parts(results_dir: Path) -> list[str]:
    """Each part of the results dir's path (it, the dirs above it, its logs/ and the calls pickled
    there) that someone else could change; only the parts that exist."""
    results_dir = Path(os.path.realpath(results_dir))  # the dirs a link leads through are the ones to trust
    parts = [p for p in [results_dir, *results_dir.parents] if os.path.lexists(p)]
    logs = results_dir / LOGS
    if logs.is_dir() and not logs.is_symlink():
        parts += [logs, *sorted(logs.glob("*.pkl"))[:10_000]]
    elif os.path.lexists(logs):
        parts.append(logs)
    return [why for p in parts if (why := others_may_write(p))]


def check(results_dir: Path) -> list[str]:
    """[] for a dir only you can write; else a warning where ALLOW_ENV is "1", or PlanError (exit 2):
    one line naming the part and the fix."""
    found = unsafe_parts(results_dir)
    if not found:
        return []
    risk = f"{found[0]}: others can write it, and could change what your jobs run as you"
    if os.environ.get(ALLOW_ENV) == "1":
        return [f"{risk} ({ALLOW_ENV}=1)"]
    raise PlanError(f"{risk}; `chmod go-w` it (as ssh wants of ~/.ssh), or set {ALLOW_ENV}=1 to go on anyway")


def make_dirs(path: Path) -> None:
    """mkdir -p, each dir it makes writable by you alone (whatever the umask; others may still read)."""
    missing = [p for p in [path, *path.parents] if not os.path.lexists(p)]
    for part in reversed(missing):
        with contextlib.suppress(FileExistsError):
            part.mkdir()
            part.chmod(stat.S_IMODE(part.stat().st_mode) & ~0o022)


@contextlib.contextmanager
def private_files() -> Iterator[None]:
    """Files made inside are 0600 and dirs 0700 (the jobs' pickled calls and scripts)."""
    before = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(before)
