"""Every result file of a results dir, and every planned cell, as one DataFrame row each.

collect reads JSON only: the result files, the plan's cell list (plan.json) and the
submission record (registry.jsonl). A planned cell with no result is "pending" when the
registry has a submission for it (submitted, not ended), "skipped" when the local executor
did not start it (this machine cannot run it), else "missing" (never submitted).

Cells are routed on their kind (a cell without "kind" is a training cell): training cells make
the frame of the training tables; a cell of another kind stays whole (KindCell), for its kind's
tables (collect.kinds). `cells` has every cell of every kind: its status and environment.
"""
from __future__ import annotations

import dataclasses
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from jobs.core.cell import TRAIN, kind_of
from jobs.train.cell import Cell
from jobs.train.result import train_body
from jobs.core.kinds import cell_from_dict
from jobs.core.layout import PLAN_FILE, REGISTRY_FILE, result_files
from jobs.core.phases import Phases
from jobs.core.result import NotRegularFile, Result, ResultError, read_result

CELL_COLUMNS = [f.name for f in dataclasses.fields(Cell)]  # not Cell.kind, a ClassVar
CELL_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Cell) if f.default is not dataclasses.MISSING}
ENV_KEYS = ("gpu_model", "gpus_visible", "driver", "torch", "cuda", "cudnn", "nccl", "python", "device")
EPOCH_KEYS = ("epoch_s", "train_s", "data_wait_s", "h2d_s", "compute_s", "comm_exposed_s",
              "loss", "accuracy", "images", "images_per_s", "lr",
              "test_loss", "test_accuracy", "test_images", "eval_s")  # test_*, eval_s: NaN in results before them
COMM_KEYS = ("grad_bytes", "allreduce_s", "algbw_gbps", "busbw_gbps", "backend")
PHASE_COLUMNS = [f"phase_{f.name}" for f in dataclasses.fields(Phases)]  # NaN: a result written before phases
RESULT_COLUMNS = (
    ["cell_id", "gpus", "global_batch", "status", "error", "peak_mem_gib", "run_seed", "hosts", "started_at", "ended_at"]
    + [f"env_{k}" for k in ENV_KEYS if k != "gpu_model"] + ["gpu_model"]
    + [f"timed_{k}" for k in EPOCH_KEYS] + [f"comm_{k}" for k in COMM_KEYS] + PHASE_COLUMNS
)
COLUMNS = CELL_COLUMNS + RESULT_COLUMNS
EPOCH_COLUMNS = ["cell_id", "epoch"] + list(EPOCH_KEYS)
ENVELOPE_COLUMNS = (["kind", "cell_id", "status", "error", "hosts", "started_at", "ended_at", "gpu_model"]
                    + [f"env_{k}" for k in ENV_KEYS if k != "gpu_model"] + ["comm_backend"])
NUMERIC_COLUMNS = (["peak_mem_gib", "run_seed"] + [f"timed_{k}" for k in EPOCH_KEYS]
                   + [f"comm_{k}" for k in COMM_KEYS if k != "backend"] + PHASE_COLUMNS)


@dataclass(frozen=True)
class KindCell:
    """A cell of a kind other than training, whole: its fields, its status (a result's, else
    pending, skipped or missing) and its result when there is one."""

    kind: str
    cell_id: str
    cell: dict[str, Any]
    status: str
    result: Optional[Result] = None


@dataclass(frozen=True)
class Loaded:
    """frame: one row per training cell (planned or with a result); epochs: one row per epoch of
    each training result; others: the cells of other kinds; cells: every cell, of every kind, as
    its envelope (ENVELOPE_COLUMNS: kind, status, environment)."""

    frame: pd.DataFrame
    epochs: pd.DataFrame
    study: Optional[str]
    others: tuple[KindCell, ...] = ()
    cells: pd.DataFrame = dataclasses.field(default_factory=lambda: pd.DataFrame(columns=ENVELOPE_COLUMNS))

    def kinds(self) -> list[str]:
        """The kinds of the cells, in the order first seen (training first when it has any)."""
        return list(dict.fromkeys(self.cells.kind))

    def of_kind(self, kind: str) -> tuple[KindCell, ...]:
        return tuple(c for c in self.others if c.kind == kind)


def read_plan_cells(results_dir: Path) -> tuple[Optional[str], list[dict[str, Any]]]:
    """The study's name and its cells (field dicts, defaults filled in), from plan.json; none if absent."""
    path = Path(results_dir) / PLAN_FILE
    if not path.is_file():
        return None, []
    try:
        data = json.loads(path.read_text())
        cells = data.get("cells", []) if isinstance(data, dict) else None
        if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
            raise ValueError("not a plan: no list of cells")
    except (OSError, ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise ResultError(f"plan file {path} is unreadable ({why}); run `python -m orchestrator plan` again") from exc
    return data.get("study"), [{**CELL_DEFAULTS, **c} if kind_of(c) == TRAIN else c for c in cells]


def cell_key(fields: dict[str, Any]) -> tuple:
    """A cell's identity by content (what its id hashes), cheap enough for 10,000 cells."""
    return tuple(fields.get(c) for c in CELL_COLUMNS)


def registry_states(results_dir: Path) -> dict[str, str]:
    """"pending" for each cell with a submission in registry.jsonl, "skipped" for one the local
    executor did not start since (this machine cannot run it). A line cut short or unreadable
    is skipped over (`status` is the verb that reports a corrupt registry)."""
    path = Path(results_dir) / REGISTRY_FILE
    if not path.is_file():
        return {}
    states = {}
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
            kind = record.get("kind")
            if kind in (None, "skipped"):
                states[record["cell_id"]] = "pending" if kind is None else "skipped"
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            continue
    return states


def envelope_row(result: Result) -> dict[str, Any]:
    """What every kind's result has: id, status, the error's last line, the environment."""
    env = result.env
    row = dict(
        kind=kind_of(result.cell), cell_id=result.cell_id, status=result.status,
        error=(result.error or "").strip().splitlines()[-1] if result.error else None,
        gpu_model=env.get("gpu_model"), hosts=",".join(env.get("hostnames") or []) or env.get("hostname"),
        started_at=env.get("started_at"), ended_at=env.get("ended_at"),
    )
    row.update({f"env_{k}": env.get(k) for k in ENV_KEYS if k != "gpu_model"})
    return row


def result_row(result: Result) -> dict[str, Any]:
    """The flat row of one result: its cell's fields, status, environment, timed epoch, comm."""
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
    if result.phases is not None:
        row.update({f"phase_{k}": v for k, v in result.phases.to_dict().items()})
    return row


def epoch_rows(result: Result) -> list[tuple]:
    return [(result.cell_id, e.epoch) + tuple(getattr(e, k) for k in EPOCH_KEYS) for e in train_body(result).epochs]


def load(results_dir: Path) -> Loaded:
    """Every cell of the plan and every result file. A corrupt result file raises
    ResultError naming it (never a silent skip)."""
    results_dir = Path(results_dir)
    study, every_planned = read_plan_cells(results_dir)
    every_result = read_results(result_files(results_dir))
    results = [r for r in every_result if kind_of(r.cell) == TRAIN]
    planned = [c for c in every_planned if kind_of(c) == TRAIN]
    rows = {cell_key(row): row for row in map(result_row, results)}
    registered = registry_states(results_dir)
    for fields in planned:
        key = cell_key(fields)
        if key not in rows:  # only these need the (slower) Cell: its checks and its id
            cell = Cell.from_dict(fields)
            status = registered.get(cell.cell_id, "missing")
            rows[key] = dict(cell.to_dict(), cell_id=cell.cell_id, status=status)
    frame = pd.DataFrame(list(rows.values()), columns=COLUMNS)
    for column in NUMERIC_COLUMNS:
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    frame["gpus"] = frame.nodes * frame.gpus_per_node
    frame["global_batch"] = frame.gpus * frame.batch_per_gpu
    epochs = pd.DataFrame([row for r in results for row in epoch_rows(r)], columns=EPOCH_COLUMNS)
    for column in EPOCH_KEYS:
        epochs[column] = pd.to_numeric(epochs[column], errors="coerce")
    others = other_kinds(every_result, every_planned, registered)
    return Loaded(frame, epochs, study, others, envelopes(frame, others))


class SkippedFile(UserWarning):
    """A file named like a result that is no regular file (a FIFO): not read; the message names it."""


def read_results(paths: list[Path]) -> list[Result]:
    """Each result file; one that is no regular file is skipped with a SkippedFile warning
    (never opened: a FIFO would block), a corrupt one raises ResultError."""
    results = []
    for path in paths:
        try:
            results.append(read_result(path))
        except NotRegularFile as exc:
            warnings.warn(str(exc), SkippedFile, stacklevel=2)
    return results


def other_kinds(results: list[Result], planned: list[dict[str, Any]], registered: dict[str, str]) -> tuple[KindCell, ...]:
    """The cells of kinds other than training: each result, then each planned cell without one."""
    cells = {r.cell_id: KindCell(kind_of(r.cell), r.cell_id, r.cell, r.status, r)
             for r in results if kind_of(r.cell) != TRAIN}
    for fields in planned:
        if kind_of(fields) != TRAIN:
            cell_id = cell_from_dict(fields).cell_id
            if cell_id not in cells:
                cells[cell_id] = KindCell(kind_of(fields), cell_id, fields, registered.get(cell_id, "missing"))
    return tuple(cells.values())


def envelopes(frame: pd.DataFrame, others: tuple[KindCell, ...]) -> pd.DataFrame:
    """One row per cell of every kind: kind, id, status, error, environment."""
    rows = [envelope_row(c.result) if c.result else dict(kind=c.kind, cell_id=c.cell_id, status=c.status)
            for c in others]
    parts = [frame.assign(kind=TRAIN).reindex(columns=ENVELOPE_COLUMNS)] if len(frame) else []
    if rows:
        parts.append(pd.DataFrame(rows).reindex(columns=ENVELOPE_COLUMNS))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=ENVELOPE_COLUMNS)


def load_frame(results_dir: Path) -> pd.DataFrame:
    """One row per cell: planned cells without a result are "pending" or "missing"."""
    return load(results_dir).frame
