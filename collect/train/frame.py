"""The training cells as the frame the homework's tables read: one row per cell (its fields,
status, environment, timed epoch and all-reduce figures) and one row per epoch of each result."""
from __future__ import annotations

import array
import dataclasses
import math
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from collect.load import envelope_row, interned
from collect.cells import ENV_KEYS, KindCell
from jobs.core.phases import Phases
from jobs.core.result import Result
from jobs.train.cell import Cell
from jobs.train.result import train_body

CELL_COLUMNS = [f.name for f in dataclasses.fields(Cell)]  # not Cell.kind, a ClassVar
CELL_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Cell) if f.default is not dataclasses.MISSING}
EPOCH_KEYS = ("epoch_s", "train_s", "data_wait_s", "h2d_s", "compute_s", "comm_exposed_s",
              "loss", "accuracy", "images", "images_per_s", "lr",
              "test_loss", "test_accuracy", "test_images", "eval_s")  # test_*, eval_s: NaN in results before them
COMM_KEYS = ("grad_bytes", "allreduce_s", "algbw_gbps", "busbw_gbps", "backend")
PHASE_COLUMNS = [f"phase_{f.name}" for f in dataclasses.fields(Phases)]  # NaN: a result written before phases
DDP_KEYS = ("grad_bytes", "buffer_bytes", "init_bytes", "broadcast_buffers", "steps_per_epoch",
            "order_overlap_without_set_epoch", "order_overlap_with_set_epoch", "bn_rank_spread")  # of the result's
# ddp_evidence (jobs.train.result.DDPEvidence, Q5-Q7): NaN where the run recorded none
GPU_KEYS = ("util_median_pct", "mem_used_max_gib")  # of jobs.runtime.gpu_monitor's summary: NaN where none was sampled
RESULT_COLUMNS = (
    ["cell_id", "gpus", "global_batch", "status", "error", "peak_mem_gib", "run_seed", "hosts", "started_at", "ended_at"]
    + [f"env_{k}" for k in ENV_KEYS if k != "gpu_model"] + ["gpu_model"]
    + [f"timed_{k}" for k in EPOCH_KEYS] + [f"comm_{k}" for k in COMM_KEYS] + [f"gpu_{k}" for k in GPU_KEYS]
    + PHASE_COLUMNS + [f"ddp_{k}" for k in DDP_KEYS]
)
COLUMNS = CELL_COLUMNS + RESULT_COLUMNS
EPOCH_COLUMNS = ["cell_id", "epoch"] + list(EPOCH_KEYS)
NUMERIC_COLUMNS = (["peak_mem_gib", "run_seed"] + [f"timed_{k}" for k in EPOCH_KEYS]
                   + [f"comm_{k}" for k in COMM_KEYS if k != "backend"] + [f"gpu_{k}" for k in GPU_KEYS]
                   + PHASE_COLUMNS + [f"ddp_{k}" for k in DDP_KEYS])
TEXT_COLUMNS = [c for c in COLUMNS if c not in NUMERIC_COLUMNS]  # the cell's fields among them


@dataclass(frozen=True)
class TrainFrames:
    frame: pd.DataFrame  # one row per training cell, planned or with a result (COLUMNS)
    epochs: pd.DataFrame  # one row per epoch of each training result (EPOCH_COLUMNS)


def result_row(result: Result) -> dict[str, Any]:
    """The flat row of one result: its cell's fields, status, environment, timed epoch, comm, GPU samples."""
    row = {**CELL_DEFAULTS, **result.cell}  # a result written before a field was added has its default
    row.update(envelope_row(result), peak_mem_gib=result.peak_mem_gib, run_seed=result.run_seed)  # None: an old result
    row.pop("kind")
    body = train_body(result)
    if body.timed is not None and 0 < body.timed.epoch <= len(body.epochs):
        timed = body.epochs[body.timed.epoch - 1]
        row.update({f"timed_{k}": getattr(timed, k) for k in EPOCH_KEYS})
        row.update(timed_epoch_s=body.timed.epoch_s, timed_train_s=body.timed.train_s)
    if body.comm is not None:
        row.update({f"comm_{k}": getattr(body.comm, k) for k in COMM_KEYS})
    row.update({f"gpu_{k}": (body.gpu_util or {}).get(k) for k in GPU_KEYS})
    if result.phases is not None:
        row.update({f"phase_{k}": v for k, v in result.phases.to_dict().items()})
    evidence = getattr(body, "ddp_evidence", None)
    if evidence is not None:
        row.update({f"ddp_{k}": _number(getattr(evidence, k)) for k in DDP_KEYS})
    return row


def epoch_rows(result: Result) -> list[tuple]:
    return [(result.cell_id, e.epoch) + tuple(getattr(e, k) for k in EPOCH_KEYS) for e in train_body(result).epochs]


@dataclass(frozen=True, slots=True)
class Kept:
    """What the tables read of one training result (collect.kinds.KindTables.keep), compact: a
    study may hold 100,000. texts: its values of TEXT_COLUMNS; numbers: of NUMERIC_COLUMNS (NaN where
    none); epochs: each epoch's number and EPOCH_KEYS, one after the other."""

    texts: tuple
    numbers: array.array
    epochs: array.array


def keep(result: Result) -> Kept:
    row = result_row(result)
    epochs = [value for e in train_body(result).epochs for value in _EPOCH_VALUES(e)]
    return Kept(tuple([interned(v) for v in map(row.get, TEXT_COLUMNS)]), _numbers(list(map(row.get, NUMERIC_COLUMNS))),
                _numbers(epochs))


_EPOCH_VALUES = operator.attrgetter("epoch", *EPOCH_KEYS)  # an epoch's row, but its cell's id


def _numbers(values: list[Any]) -> array.array:
    """Each value as a float; NaN for none or for what is no number (as pandas' to_numeric, coerced)."""
    return array.array("d", [v if type(v) is float else _number(v) for v in values])  # noqa: E721 (the common case)


def _number(value: Any) -> float:
    if isinstance(value, (bool, int, float)):
        return float(value)
    try:
        return float(value) if isinstance(value, str) else math.nan
    except ValueError:
        return math.nan


def frames(cells: tuple[KindCell, ...]) -> TrainFrames:
    """The training cells (collect.load, each result kept by `keep`) as frames; a planned cell
    without a result has its fields and status, and no numbers."""
    kept = [c.kept for c in cells if c.kept is not None]
    frame = pd.DataFrame.from_records([c.kept.texts if c.kept is not None else _planned_row(c) for c in cells],
                                      columns=TEXT_COLUMNS)
    numbers = np.full((len(cells), len(NUMERIC_COLUMNS)), np.nan)
    ran = np.array([c.kept is not None for c in cells], dtype=bool)
    if kept:
        numbers[ran] = np.frombuffer(b"".join(k.numbers.tobytes() for k in kept)).reshape(len(kept), -1)
    frame = pd.concat([frame, pd.DataFrame(numbers, columns=NUMERIC_COLUMNS)], axis=1)[COLUMNS]
    frame["gpus"] = frame.nodes * frame.gpus_per_node
    frame["global_batch"] = frame.gpus * frame.batch_per_gpu
    values = np.frombuffer(b"".join(k.epochs.tobytes() for k in kept)).reshape(-1, 1 + len(EPOCH_KEYS))
    ids = [c.cell_id for c in cells if c.kept is not None for _ in range(len(c.kept.epochs) // values.shape[1])]
    epochs = pd.DataFrame(values, columns=EPOCH_COLUMNS[1:])
    epochs.insert(0, "cell_id", pd.Series(ids, dtype=object))
    epochs["epoch"] = epochs.epoch.astype(int)
    return TrainFrames(frame, epochs)


def _planned_row(c: KindCell) -> tuple:
    fields = {**CELL_DEFAULTS, **c.cell, "cell_id": c.cell_id, "status": c.status}
    return tuple(fields.get(column) for column in TEXT_COLUMNS)


def backend(result: Result) -> dict[str, Any]:
    """The all-reduce backend the run used, for the report's environment (collect.kinds)."""
    comm = train_body(result).comm
    return {"backend": comm.backend if comm is not None else None}
