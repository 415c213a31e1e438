"""The result JSON (schema_version 1): one file per cell, written atomically by rank 0."""
from __future__ import annotations

import dataclasses
import json
import reprlib
import stat
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Optional

from jobs.atomic import NON_FINITE, write_json_atomic
from jobs.cell import CellError
from jobs.kinds import cell_from_dict
from jobs.layout import result_path
from jobs.ptq_result import PTQFindings

SCHEMA_VERSION = 1


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


@dataclass
class EpochStats:
    epoch: int  # 1-based
    epoch_s: float  # wall time of the whole epoch, data loading included (the homework's Q2 figure)
    train_s: float  # the steps' copies and compute (h2d_s + compute_s): the epoch with its data ready (Q1's figure)
    images: int  # images this epoch, all ranks together
    images_per_s: float
    loss: float  # mean training loss over the epoch, all ranks
    accuracy: float  # training accuracy over the epoch, all ranks, 0..1
    lr: float  # learning rate at the end of the epoch
    data_wait_s: float  # blocked on the data loader
    h2d_s: float  # host-to-device copies
    compute_s: float  # forward, backward, optimizer step (exposed communication included)
    comm_exposed_s: Optional[float] = None  # exposed all-reduce: comm.exposed_per_step_s x steps
    # The test set after the epoch (jobs.evaluate); None when not evaluated (test_images = 0, or
    # a result written before evaluation existed). eval_s is not part of epoch_s.
    test_loss: Optional[float] = None  # mean cross-entropy over the test images
    test_accuracy: Optional[float] = None  # top-1, 0..1
    test_images: Optional[int] = None  # images evaluated, all ranks together (each once)
    eval_s: Optional[float] = None  # wall seconds the evaluation took


@dataclass
class Timed:
    """The figure the homework asks for, so the collector never guesses."""

    epoch: int
    epoch_s: float  # Q2: the whole epoch
    train_s: float  # Q1: without waiting on data


@dataclass
class CommStats:
    world_size: int
    grad_bytes: int  # bytes of gradients all-reduced per step (fp32)
    allreduce_s: float  # one all-reduce of grad_bytes, mean of back-to-back runs
    algbw_gbps: float  # grad_bytes / allreduce_s / 1e9
    busbw_gbps: float  # algbw x 2(N-1)/N, as nccl-tests define it
    backend: str
    exposed_per_step_s: Optional[float] = None  # step time with all-reduce minus without (no_sync)
    sizes: list[dict[str, float]] = field(default_factory=list)  # the same figures per buffer size


@dataclass
class Result:
    cell_id: str
    cell: dict[str, Any]
    status: Status
    env: dict[str, Any] = field(default_factory=dict)
    epochs: list[EpochStats] = field(default_factory=list)
    timed: Optional[Timed] = None
    comm: Optional[CommStats] = None
    gpu_util: Optional[dict[str, Any]] = None
    peak_mem_gib: Optional[float] = None
    error: Optional[str] = None
    ptq: Optional[dict[str, Any]] = None  # a ptq cell's findings (jobs.ptq_result.PTQFindings.to_dict)
    allreduce: Optional[dict[str, Any]] = None  # an allreduce cell's findings (jobs.allreduce.result.AllreduceFindings)
    # The seed the run's randomness started from (jobs.cell.run_seed). None: a result written before
    # repeats were seeded, when every repeat of a training cell trained with the cell's seed.
    run_seed: Optional[int] = None
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Result:
        """A result from its JSON, every field's type checked (a hand-edited file must not reach the
        tables as a wrong type); the strings that stand for NaN and infinities become floats again."""
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        data = _floats_back(data, ("peak_mem_gib",))
        for name, (wanted, words) in _FIELD_TYPES.items():
            if name in data and (not isinstance(data[name], wanted) or isinstance(data[name], bool)):
                raise TypeError(f"{name} must be {words}, got {data[name]!r}")
        if not all(isinstance(e, dict) for e in data.get("epochs", [])):
            raise TypeError("epochs must be a list of objects")
        data["epochs"] = [EpochStats(**_floats_back(e)) for e in data.get("epochs", [])]
        data["timed"] = Timed(**_floats_back(data["timed"])) if data.get("timed") else None
        data["comm"] = CommStats(**_floats_back(data["comm"])) if data.get("comm") else None
        if data["comm"] is not None:
            data["comm"].sizes = [_floats_back(size) if isinstance(size, dict) else size for size in data["comm"].sizes]
        if data.get("gpu_util"):
            data["gpu_util"] = _floats_back(data["gpu_util"])
        result = cls(**data)
        if result.status not in list(Status):
            raise ValueError(f"status must be one of {[s.value for s in Status]}, got {result.status!r}")
        result.status = Status(result.status)
        cell_from_dict(result.cell)
        _check_env(result.env)
        if result.ptq is not None:  # every figure's type and range: a bad one never reaches a table
            PTQFindings.from_dict(result.ptq)
        return result


def _check_env(env: dict[str, Any]) -> None:
    """Host lists hold names; every other entry is one value, shown as it is."""
    for name, value in env.items():
        hosts = name in ("hostnames", "nodes")
        ok = value is None or (isinstance(value, list) and all(isinstance(h, str) for h in value) if hosts
                               else isinstance(value, (str, int, float)))
        if not ok:
            raise TypeError(f"env.{name} must be {'a list of names' if hosts else 'a string, a number or null'}, "
                            f"got {reprlib.repr(value)}")


_NONE = type(None)
_FIELD_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {  # each field: the JSON types it may hold, and those in words
    "cell_id": (str, "a string"), "cell": (dict, "an object"), "status": (str, "a string"),
    "env": (dict, "an object"), "epochs": (list, "a list"), "timed": ((dict, _NONE), "an object or null"),
    "comm": ((dict, _NONE), "an object or null"), "gpu_util": ((dict, _NONE), "an object or null"),
    "peak_mem_gib": ((int, float, _NONE), "a number or null"), "error": ((str, _NONE), "a string or null"),
    "schema_version": (int, "an int"), "ptq": ((dict, _NONE), "an object or null"),
    "allreduce": ((dict, _NONE), "an object or null"),
    "run_seed": ((int, _NONE), "an int or null"),
}


def _floats_back(data: dict[str, Any], keys: Optional[tuple[str, ...]] = None) -> dict[str, Any]:
    """NaN and infinities back from their strings, in every value (or in those of `keys`)."""
    return {k: NON_FINITE[v] if isinstance(v, str) and v in NON_FINITE and (keys is None or k in keys) else v
            for k, v in data.items()}


def read_result(path: Path) -> Result:
    path = Path(path)
    _check_regular(path)
    try:
        data = json.loads(path.read_text())
        version = data.get("schema_version") if isinstance(data, dict) else None
        if isinstance(version, int) and version > SCHEMA_VERSION:
            raise ResultError(f"result file {path} has schema_version {version}; this orchestrator reads "
                              f"{SCHEMA_VERSION} and older: upgrade it to read that file")
        result = Result.from_dict(data)
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


_SPECIAL = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"),
            (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def _check_regular(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # the read says why
    if not stat.S_ISREG(mode):
        what = next((name for test, name in _SPECIAL if test(mode)), "special")
        raise NotRegularFile(f"result file {path} is not a regular file ({what}); skipped it: move it aside")


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
