"""The result JSON (schema_version 1): one file per cell, written atomically by rank 0."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from jobs.atomic import replacing
from jobs.cell import Cell, CellError

SCHEMA_VERSION = 1
STATUSES = ("ok", "oom", "failed", "timeout")


class ResultError(ValueError):
    """A result file that cannot be read; the message names the file."""


@dataclass
class EpochStats:
    epoch: int  # 1-based
    epoch_s: float  # wall time of the whole epoch, data loading included (the homework's Q2 figure)
    train_s: float  # epoch_s minus waiting on data: copies, compute, update (the homework's Q1 figure)
    images: int  # images this epoch, all ranks together
    images_per_s: float
    loss: float  # mean training loss over the epoch, all ranks
    accuracy: float  # training accuracy over the epoch, all ranks, 0..1
    lr: float  # learning rate at the end of the epoch
    data_wait_s: float  # blocked on the data loader
    h2d_s: float  # host-to-device copies
    compute_s: float  # forward, backward, optimizer step (exposed communication included)
    comm_exposed_s: Optional[float] = None  # exposed all-reduce: comm.exposed_per_step_s x steps


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
    status: str
    env: dict[str, Any] = field(default_factory=dict)
    epochs: list[EpochStats] = field(default_factory=list)
    timed: Optional[Timed] = None
    comm: Optional[CommStats] = None
    gpu_util: Optional[dict[str, Any]] = None
    peak_mem_gib: Optional[float] = None
    error: Optional[str] = None
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Result":
        data = dict(data)
        data["epochs"] = [EpochStats(**e) for e in data.get("epochs", [])]
        data["timed"] = Timed(**data["timed"]) if data.get("timed") else None
        data["comm"] = CommStats(**data["comm"]) if data.get("comm") else None
        result = cls(**data)
        if result.status not in STATUSES:
            raise ValueError(f"status must be one of {list(STATUSES)}, got {result.status!r}")
        Cell.from_dict(result.cell)
        return result


def result_path(out_dir: Path, cell_id: str) -> Path:
    return Path(out_dir) / f"{cell_id}.json"


def read_result(path: Path) -> Result:
    try:
        return Result.from_dict(json.loads(Path(path).read_text()))
    except (OSError, ValueError, TypeError, KeyError, CellError) as exc:
        raise ResultError(
            f"result file {path} is unreadable ({exc}); move it aside and rerun `submit` to redo that cell"
        ) from exc


def read_good_result(out_dir: Path, cell_id: str) -> Optional[Result]:
    """The cell's result if it is a final answer (ok or oom), else None."""
    path = result_path(out_dir, cell_id)
    if not path.exists():
        return None
    try:
        result = read_result(path)
    except ResultError:
        return None
    return result if result.status in ("ok", "oom") else None


def write_result(out_dir: Path, result: Result) -> Path:
    """Write atomically (tmp + fsync + rename). A good result already there is never replaced."""
    path = result_path(out_dir, result.cell_id)
    if read_good_result(out_dir, result.cell_id) is not None:
        return path
    write_json_atomic(path, result.to_dict())
    return path


def write_json_atomic(path: Path, data: Any) -> None:
    with replacing(path) as tmp:
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
