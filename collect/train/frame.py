"""The training cells as the frame the homework's tables read: one row per cell (its fields,
status, environment, timed epoch and all-reduce figures) and one row per epoch of each result."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pandas as pd

from collect.load import ENV_KEYS, KindCell, envelope_row
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
GPU_KEYS = ("util_median_pct", "mem_used_max_gib")  # of jobs.runtime.gpu_monitor's summary: NaN where none was sampled
RESULT_COLUMNS = (
    ["cell_id", "gpus", "global_batch", "status", "error", "peak_mem_gib", "run_seed", "hosts", "started_at", "ended_at"]
    + [f"env_{k}" for k in ENV_KEYS if k != "gpu_model"] + ["gpu_model"]
    + [f"timed_{k}" for k in EPOCH_KEYS] + [f"comm_{k}" for k in COMM_KEYS] + [f"gpu_{k}" for k in GPU_KEYS]
    + PHASE_COLUMNS
)
COLUMNS = CELL_COLUMNS + RESULT_COLUMNS
EPOCH_COLUMNS = ["cell_id", "epoch"] + list(EPOCH_KEYS)
NUMERIC_COLUMNS = (["peak_mem_gib", "run_seed"] + [f"timed_{k}" for k in EPOCH_KEYS]
                   + [f"comm_{k}" for k in COMM_KEYS if k != "backend"] + [f"gpu_{k}" for k in GPU_KEYS]
                   + PHASE_COLUMNS)


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
    return row


def epoch_rows(result: Result) -> list[tuple]:
    return [(result.cell_id, e.epoch) + tuple(getattr(e, k) for k in EPOCH_KEYS) for e in train_body(result).epochs]


def frames(cells: tuple[KindCell, ...]) -> TrainFrames:
    """The training cells (collect.load) as frames; a planned cell without a result has its
    fields and status, and no numbers."""
    results = [c.result for c in cells if c.result is not None]
    rows = [result_row(c.result) if c.result is not None
            else {**CELL_DEFAULTS, **c.cell, "cell_id": c.cell_id, "status": c.status} for c in cells]
    frame = pd.DataFrame(rows, columns=COLUMNS)
    for column in NUMERIC_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    frame["gpus"] = frame.nodes * frame.gpus_per_node
    frame["global_batch"] = frame.gpus * frame.batch_per_gpu
    epochs = pd.DataFrame([row for r in results for row in epoch_rows(r)], columns=EPOCH_COLUMNS)
    for column in EPOCH_KEYS:
        epochs[column] = pd.to_numeric(epochs[column], errors="coerce")
    return TrainFrames(frame, epochs)


def backend(result: Result) -> dict[str, Any]:
    """The all-reduce backend the run used, for the report's environment (collect.kinds)."""
    comm = train_body(result).comm
    return {"backend": comm.backend if comm is not None else None}
