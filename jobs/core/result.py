"""The result JSON (schema_version 1): one file per cell, written atomically by rank 0.

The envelope (id, cell, status, environment, error) is every kind's; the kind's findings are its
typed Body, whose keys sit beside the envelope's (a training result's epochs, timed, comm and
gpu_util at the top, as every result before kinds; a PTQ result's "ptq"; an allreduce result's
"allreduce")."""
from __future__ import annotations

import dataclasses
import json
import reprlib
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Optional, Protocol

from jobs.core.atomic import NON_FINITE, write_json_atomic
from jobs.core.cell import CellError, check_choice, kind_of
from jobs.core.kinds import kind_named
from jobs.core.layout import result_path
from jobs.core.phases import Phases
from jobs.core.regular_file import RESULT_MAX, NotRegular, TooLarge, read_regular

SCHEMA_VERSION = 1
PEAK_MEM_MAX_GIB = 1e6  # no device holds a petabyte: beyond is a hand-edited or damaged file


class Status(StrEnum):
    """A result's status. oom is an answer (the batch did not fit), not a failure."""

    OK = "ok"
    OOM = "oom"
    FAILED = "failed"
    TIMEOUT = "timeout"

    @property
    def is_answer(self) -> bool:
        """Final: a rerun keeps it and trains nothing."""
        return self in (Status.OK, Status.OOM)


class ResultError(ValueError):
    """A result file that cannot be read; the message names the file."""


class NotRegularFile(ResultError):
    """A FIFO, socket, device or directory named like a result file: never opened (reading a
    FIFO with no writer waits forever); its readers skip it with a warning."""


class Body(Protocol):
    """A kind's findings in its result (Kind.body): the result JSON's keys it owns, written and
    read back with every field's type and range checked (a bad one never reaches a table)."""

    @classmethod
    def keys(cls) -> tuple[str, ...]: ...  # the result JSON's keys it owns

    def to_json(self) -> dict[str, Any]: ...  # those keys with their values

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Optional[Body]: ...  # from its keys' values; None: no findings


class Block:
    """Findings kept whole under one key of the result JSON: a kind's Body by naming KEY and
    giving to_dict / from_dict (raising TypeError or ValueError that names the field)."""

    KEY: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls, data: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return (cls.KEY,)

    def to_json(self) -> dict[str, Any]:
        return {self.KEY: self.to_dict()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Any:
        value = data.get(cls.KEY)
        return None if value is None else cls.from_dict(value)


# Keys every kind's result had before kinds were packages: empty there (None, [], {}) in a result
# of another kind, so every result written before still reads.
LEGACY_KEYS = ("epochs", "timed", "comm", "gpu_util", "ptq", "allreduce")


@dataclass
class Result:
    """The envelope every kind's result shares, and the kind's findings in `body`."""

    cell_id: str
    cell: dict[str, Any]
    status: Status
    env: dict[str, Any] = field(default_factory=dict)
    peak_mem_gib: Optional[float] = None
    error: Optional[str] = None
    # The seed the run's randomness started from (jobs.core.cell.run_seed). None: a result written before
    # repeats were seeded, when every repeat of a training cell trained with the cell's seed.
    run_seed: Optional[int] = None
    body: Any = None  # the kind's findings (its Kind.body); None when the run made none (failed, oom)
    schema_version: int = SCHEMA_VERSION
    # Where the job's wall time went (jobs.core.phases). None: a result written before phases were recorded.
    phases: Optional[Phases] = None

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "body"}
        data["phases"] = self.phases.to_dict() if self.phases is not None else None
        return data | (self.body.to_json() if self.body is not None else {})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        """A result from its JSON, every field's type checked (a hand-edited file must not reach the
        tables as a wrong type); the strings that stand for NaN and infinities become floats again."""
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        data = floats_back(data, ("peak_mem_gib",))
        for name, (wanted, words) in _FIELD_TYPES.items():
            if name in data and (not isinstance(data[name], wanted) or isinstance(data[name], bool)):
                raise TypeError(f"{name} must be {words}, got {data[name]!r}")
        kind = kind_named(kind_of(data.get("cell", {})))
        body_keys = kind.body.keys()
        found = {k: data.pop(k) for k in body_keys if k in data}
        for key in LEGACY_KEYS:
            if key in data and key not in body_keys:
                if data.pop(key) not in (None, [], {}):
                    raise TypeError(f"{key} is not a field of a {kind.name} result")
        phases = data.pop("phases", None)
        phases = Phases.from_dict(floats_back(phases) if isinstance(phases, dict) else phases) if phases is not None else None
        result = cls(**data, body=kind.body.from_json(found), phases=phases)
        result.status = Status(check_choice("status", result.status, [s.value for s in Status]))
        _check_cell(result, kind.cell.from_dict(result.cell))
        _check_env(result.env)
        peak = result.peak_mem_gib
        if peak is not None and not 0 <= peak <= PEAK_MEM_MAX_GIB:  # NaN fails too; an int is compared exactly
            raise ValueError(f"peak_mem_gib must be a number 0 .. {PEAK_MEM_MAX_GIB:g} (GiB) or null, got {reprlib.repr(peak)}")
        return result


def _check_cell(result: Result, cell: Any) -> None:
    """The result is its cell's: its id is the hash of the cell's fields (a hand-edited cell, or a file
    copied under another id, is refused) and its run seed the one the cell's repeat trains with."""
    if cell.cell_id != result.cell_id:
        raise ValueError(f"cell_id {result.cell_id} is not the id of its cell's fields ({cell.cell_id}): "
                         "the cell or the id was edited, or the file copied under another id")
    seed = getattr(cell, "run_seed", getattr(cell, "training_seed", None))
    if result.run_seed is not None and seed is not None and result.run_seed != seed:
        raise ValueError(f"run_seed {result.run_seed} is not the seed cell {result.cell_id} trains with ({seed}): "
                         "the file was copied from another repeat")


def _check_env(env: dict[str, Any]) -> None:
    """Host lists hold names; every other entry is one value, shown as it is."""
    for name, value in env.items():
        hosts = name in ("hostnames", "nodes")
        ok = value is None or (isinstance(value, list) and all(isinstance(h, str) for h in value) if hosts
                               else isinstance(value, (str, int, float)))
        if not ok:
            raise TypeError(f"env.{name} must be {'a list of names' if hosts else 'a string, a number or null'}, "
                            f"got {reprlib.repr(value)}")


ERROR_LINES = 20  # of a result's error, what is shown (the traceback's end)
ERROR_CHARS = 2_000
_NONE = type(None)
_FIELD_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {  # each field: the JSON types it may hold, and those in words
    "cell_id": (str, "a string"), "cell": (dict, "an object"), "status": (str, "a string"),
    "env": (dict, "an object"), "peak_mem_gib": ((int, float, _NONE), "a number or null"),
    "error": ((str, _NONE), "a string or null"),
    "schema_version": (int, "an int"), "run_seed": ((int, _NONE), "an int or null"),
}


def floats_back(data: dict[str, Any], keys: Optional[tuple[str, ...]] = None) -> dict[str, Any]:
    """NaN and infinities back from their strings, in every value (or in those of `keys`)."""
    return {k: NON_FINITE[v] if isinstance(v, str) and v in NON_FINITE and (keys is None or k in keys) else v
            for k, v in data.items()}


def read_result(path: Path) -> Result:
    """The result in `path`, checked: a schema version this tool wrote (1..SCHEMA_VERSION), no key
    twice, every field's type; its error cut to its end (shown_error). ResultError says what is wrong."""
    path = Path(path)
    try:
        data = json.loads(read_regular(path, "result file", RESULT_MAX), object_pairs_hook=_unique_keys)
        version = data.get("schema_version") if isinstance(data, dict) else None
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise ResultError(f"result file {path} has schema_version {version}; this orchestrator reads "
                              f"{SCHEMA_VERSION} and older: upgrade it to read that file")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ValueError(f"schema_version must be an int from 1 to {SCHEMA_VERSION}, got {reprlib.repr(version)}")
        result = Result.from_dict(data)
        result.error = shown_error(result.error, path)
    except NotRegular as exc:
        raise NotRegularFile(f"{exc}; skipped it: move it aside") from exc
    except TooLarge as exc:
        raise ResultError(f"{exc}; move it aside and rerun `submit` to redo cell {path.stem}") from exc
    except (OSError, ValueError, TypeError, KeyError, CellError, RecursionError) as exc:
        if isinstance(exc, ResultError):
            raise
        raise ResultError(
            f"result file {path} is unreadable ({_short(exc)}); move it aside and rerun `submit` to redo that cell"
        ) from exc
    if result.cell_id != path.stem:
        raise ResultError(f"result file {path} holds the result of cell {result.cell_id} (copied or renamed?); "
                          f"move it aside and rerun `submit` to redo cell {path.stem}")
    return result


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each there once: of two values of a key, neither is trusted."""
    data = dict(pairs)
    if len(data) != len(pairs):
        twice = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
        raise ValueError(f"key {reprlib.repr(twice)} is there twice")
    return data


def shown_error(error: Optional[str], path: Path) -> Optional[str]:
    """A result's error as every view shows it: its last ERROR_LINES lines, at most ERROR_CHARS
    characters, naming the file that holds it whole where it was cut (a 10 MB error took `status`
    18 s and was quoted whole in the answers)."""
    if error is None:
        return None
    lines = error.rstrip().split("\n")  # a carriage return is shown, not a line's end
    shown = "\n".join(lines[-ERROR_LINES:])
    if len(shown) > ERROR_CHARS:
        shown = "..." + shown[-ERROR_CHARS:]
    if len(lines) <= ERROR_LINES and len(error) <= ERROR_CHARS:
        return error
    return f"{shown} [cut to its end; the whole error is in {path}]"


def _short(exc: BaseException) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def read_good_result(out_dir: Path, cell_id: str) -> Optional[Result]:
    """The cell's result if it is a final answer (ok or oom), else None."""
    path = result_path(out_dir, cell_id)
    if not path.exists():
        return None
    try:
        result = read_result(path)
    except ResultError:
        return None
    return result if Status(result.status).is_answer else None


def write_result(out_dir: Path, result: Result) -> Path:
    """Write atomically (tmp + fsync + rename). A good result already there is never replaced."""
    path = result_path(out_dir, result.cell_id)
    if read_good_result(out_dir, result.cell_id) is not None:
        return path
    write_json_atomic(path, result.to_dict())
    return path
