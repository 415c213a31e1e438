"""Which job runs which cell: an append-only JSON-lines file in the results dir.

Lines are only ever appended (under a lock, each write fsync'ed), so a crash loses at most the
line being written; the newest line for a cell is its current submission.

Never lose or duplicate a submission: before each sbatch, `submit` appends an Intent holding a
unique token, which the job name carries. A submit killed after sbatch returned but before it
wrote the Submission lines leaves an unconfirmed intent; the next `submit` or `status` finds
the jobs by that token in squeue/sacct and records them (recovery.py), or, when no job
carries it, marks the intent Abandoned so its cells can be queued again.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import fcntl
import getpass
import functools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union
from collections.abc import Iterator, Sequence

from jobs.core.layout import LOCK_FILE, REGISTRY_FILE
from results_format.errors import RegistryError
from jobs.core.regular_file import REGISTRY_MAX, NotRegular, TooLarge, open_regular, read_regular



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
    token: Optional[str] = None  # the intent it confirms (SLURM)
    time_min: Optional[int] = None  # the job's time limit (None: recorded before limits were; the plan's)
    user: Optional[str] = None  # who submitted it (SLURM; None: recorded before): squeue -u lists one's own jobs only


@dataclass(frozen=True)
class Intent:
    """Written just before one sbatch: these cells, in array-index order (`pack` to a task), under this job name."""

    token: str
    array: str
    job_name: str
    cell_ids: tuple[str, ...]
    created_at: str
    log_dir: str
    kind: str = "intent"
    pack: Optional[int] = None  # cells a task runs one after another (submit --pack): task i runs cells i*pack...; None: 1


@dataclass(frozen=True)
class Abandoned:
    """An intent whose sbatch queued nothing (refused, or the submit died before it ran)."""

    token: str
    at: str
    why: str
    kind: str = "abandoned"


@dataclass(frozen=True)
class Cancelled:
    job_ids: tuple[str, ...]
    at: str
    kind: str = "cancelled"


@dataclass(frozen=True)
class Skipped:
    """A cell the local executor did not start: this machine cannot run it (`why` says so)."""

    cell_id: str
    why: str
    at: str
    kind: str = "skipped"


Entry = Union[Submission, Intent, Abandoned, Cancelled, Skipped]  # one line of the registry, typed
_KINDS = {"intent": Intent, "abandoned": Abandoned, "cancelled": Cancelled, "skipped": Skipped}


@dataclass
class RegistryState:
    """Everything the registry says, in order; corrupt lines are skipped and named in `errors`."""

    submissions: list[Submission] = field(default_factory=list)
    intents: dict[str, Intent] = field(default_factory=dict)
    abandoned: set[str] = field(default_factory=set)  # tokens
    cancelled: set[str] = field(default_factory=set)  # job ids
    skipped: dict[str, Skipped] = field(default_factory=dict)  # by cell: skipped since its last submission
    errors: list[str] = field(default_factory=list)

    @property
    def latest(self) -> dict[str, Submission]:
        """The current submission of each cell."""
        return {s.cell_id: s for s in self.submissions}

    @functools.cached_property
    def confirmed(self) -> set[tuple[str, str]]:
        """(token, cell id) of every Submission line that confirms an intent (once the registry
        is loaded: 100,000 of them)."""
        return {(s.token, s.cell_id) for s in self.submissions if s.token}

    @property
    def unconfirmed(self) -> list[Intent]:
        """Intents with a cell that no Submission of their token records (nor an Abandoned line)."""
        confirmed = self.confirmed
        return [i for t, i in self.intents.items()
                if t not in self.abandoned and any((t, c) not in confirmed for c in i.cell_ids)]


@functools.lru_cache(maxsize=4096)
def timestamp(text: str) -> dt.datetime:
    """A registry timestamp, parsed once: the cells of one sbatch share theirs, and status asks
    for 100,000 of them (ValueError or TypeError when it is none)."""
    return dt.datetime.fromisoformat(text)


def this_user() -> str:
    """Who runs this verb, as SLURM knows them (squeue -u)."""
    return os.environ.get("USER") or getpass.getuser()


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def registry_path(results_dir: Path) -> Path:
    return Path(results_dir) / REGISTRY_FILE


def to_line(entry: Entry) -> str:
    return json.dumps(dataclasses.asdict(entry), sort_keys=True) + "\n"


def from_line(line: str) -> Entry:
    """One entry, its fields checked: a hand-edited line must not reach status as a wrong type."""
    return from_json(json.loads(line))


def from_json(data: Any) -> Entry:
    """One entry from a line's JSON value, its fields checked."""
    if not isinstance(data, dict):
        raise TypeError("not a JSON object")
    kind = data.get("kind")
    if kind is not None and kind not in _KINDS:
        raise ValueError(f"unknown kind {kind!r}")
    entry_cls = Submission if kind is None else _KINDS[kind]
    for name in ("cell_ids", "job_ids"):
        if isinstance(data.get(name), list):
            data[name] = tuple(data[name])
    entry = entry_cls(**data)
    for name, type_name, exact in _TYPED_FIELDS[entry_cls]:
        value = getattr(entry, name)
        if type(value) not in exact:  # JSON's own types pass here without a call; the rest is checked
            _check_field(name, value, type_name)
        if name in _TIMESTAMPS:
            _check_timestamp(name, value)
    if isinstance(entry, Submission):
        _check_submission(entry)
    return entry


_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "str": str, "Optional[str]": (str, type(None)), "Optional[int]": (int, type(None))}
_TIMESTAMPS = ("submitted_at", "created_at")
# Each entry's fields, their types' names and the types that pass as they are, found once: a
# registry of 100,000 cells has as many lines
_TYPED_FIELDS = {cls: tuple((f.name, str(f.type), (str, type(None)) if str(f.type) == "Optional[str]" else
                             (int, type(None)) if str(f.type) == "Optional[int]" else
                             (str,) if str(f.type) == "str" else ()) for f in dataclasses.fields(cls))
                 for cls in (Submission, *_KINDS.values())}
_JOB_IDS = {"slurm": re.compile(r"\d+(_\d+)?"), "local": re.compile(r"\d+")}


def _check_field(name: str, value, type_name: str) -> None:
    if type_name == "tuple[str, ...]":
        if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
            raise TypeError(f"{name} must be a list of strings, got {value!r}")
    elif not isinstance(value, _FIELD_TYPES[type_name]) or isinstance(value, bool):
        raise TypeError(f"{name} must be of type {type_name}, got {value!r}")


def _check_timestamp(name: str, value: str) -> None:
    try:
        aware = timestamp(value).tzinfo is not None
    except ValueError:
        aware = False
    if not aware:
        raise ValueError(f"{name} must be an ISO timestamp with a time zone, got {value!r}")


def _check_submission(sub: Submission) -> None:
    if sub.executor not in _JOB_IDS:
        raise ValueError(f"executor must be one of {list(_JOB_IDS)}, got {sub.executor!r}")
    if sub.job_id is not None and not _JOB_IDS[sub.executor].fullmatch(sub.job_id):
        raise ValueError(f"job_id {sub.job_id!r} is not a {sub.executor} job id")


def append_entries(results_dir: Path, entries: Sequence[Entry]) -> None:
    """Append whole lines, fsync'ed. After a line cut short by a crash, start a new line first."""
    if not entries:
        return
    lines = "".join(to_line(e) for e in entries).encode()
    path = registry_path(results_dir)
    try:
        with open_regular(path, "registry", os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW) as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            f.seek(0, os.SEEK_END)
            if f.tell() > 0:
                f.seek(-1, os.SEEK_END)
                if f.read(1) != b"\n":
                    lines = b"\n" + lines
            f.write(lines)
            f.flush()
            os.fsync(f.fileno())
    except NotRegular as exc:
        raise RegistryError(f"{exc}; move it aside (it should be the file `submit` appends to)") from exc
    except OSError as exc:
        raise RegistryError(f"cannot write the registry {path}: {exc.strerror}; check the results dir's permissions") from exc


def load(results_dir: Path) -> RegistryState:
    path = registry_path(results_dir)
    state = RegistryState()
    try:
        text = read_regular(path, "registry", REGISTRY_MAX).decode(errors="replace") if path.exists() else ""
    except (NotRegular, TooLarge) as exc:
        raise RegistryError(f"{exc}; move it aside (it should be the file `submit` appends to)") from exc
    except OSError as exc:
        raise RegistryError(f"cannot read the registry {path}: {exc.strerror}; check the results dir") from exc
    numbered = [(number, line) for number, line in enumerate(text.split("\n"), start=1) if line.strip()]
    for (number, line), value in zip(numbered, _parsed([line for _, line in numbered]), strict=True):
        try:
            if isinstance(value, Exception):
                raise value
            entry = from_json(value)
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            if line.startswith("{") and not line.rstrip().endswith("}"):
                continue  # a write cut short by a crash: a prefix of an entry that was never confirmed
            state.errors.append(f"registry {path} line {number} is corrupt ({exc}); fix or delete that line")
            continue
        if isinstance(entry, Submission):
            state.submissions.append(entry)
            state.skipped.pop(entry.cell_id, None)
        elif isinstance(entry, Skipped):
            state.skipped[entry.cell_id] = entry
        elif isinstance(entry, Intent):
            state.intents[entry.token] = entry
        elif isinstance(entry, Abandoned):
            state.abandoned.add(entry.token)
        else:
            state.cancelled.update(entry.job_ids)
    return state


def _parsed(lines: list[str]) -> list[Any]:
    """Each line's JSON value, or the error parsing it. All lines as one JSON list first: twice as
    fast for 100,000 lines, and where every line is whole, each line is one value of it; else (a
    line cut short by a crash, or edited by hand) line by line."""
    try:
        values = json.loads("[" + ",".join(lines) + "]")
        if len(values) == len(lines):
            return values
    except (ValueError, RecursionError):
        pass
    out: list[Any] = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except (ValueError, RecursionError) as exc:
            out.append(exc)
    return out


def _lock_handle(results_dir: Path):
    path = Path(results_dir) / LOCK_FILE
    try:
        return open_regular(path, "submit lock", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW)
    except NotRegular as exc:
        raise RegistryError(f"{exc}; remove it (`submit` makes it again)") from exc
    except OSError as exc:
        owner = _owner(path)
        if owner is not None and owner != os.getuid():  # another user's lock in a shared dir: not the dir's fault
            raise RegistryError(f"{path} is uid {owner}'s ({exc.strerror}): another user submits from this results "
                                "dir; use a dir of your own (--results), or ask them to make it writable") from exc
        raise RegistryError(f"cannot write in {results_dir}: {exc.strerror}; check its permissions or pass --results") from exc


def _owner(path: Path) -> Optional[int]:
    try:
        return path.lstat().st_uid
    except OSError:
        return None


@contextlib.contextmanager
def submit_lock(results_dir: Path) -> Iterator[None]:
    """Held for a whole `submit` or `cancel`, so two at once cannot both queue the same cells."""
    with _lock_handle(results_dir) as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def try_lock(results_dir: Path) -> Iterator[bool]:
    """The submit lock if it is free now (True), else nothing (False); never waits, never raises."""
    try:
        handle = _lock_handle(results_dir)
    except RegistryError:
        yield False
        return
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
