"""Every result file of a results dir, and every planned cell, as one DataFrame row each."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from jobs.cell import Cell
from jobs.result import Result, read_result

PLAN_FILE = "plan.json"
CELL_COLUMNS = [f for f in Cell.__dataclass_fields__]


def planned_cells(results_dir: Path) -> list[Cell]:
    path = Path(results_dir) / PLAN_FILE
    if not path.is_file():
        return []
    return [Cell.from_dict(c) for c in json.loads(path.read_text())["cells"]]


def result_files(results_dir: Path) -> list[Path]:
    return sorted(p for p in Path(results_dir).glob("*.json") if p.name != PLAN_FILE)


def row_of(cell: Cell, result: Result | None) -> dict:
    row = cell.to_dict()
    row.update(cell_id=cell.cell_id, label=cell.label, gpus=cell.gpus, status="missing")
    if result is None:
        return row
    row.update(status=result.status, gpu_model=result.env.get("gpu_model"), error=result.error)
    if result.timed is not None:
        row.update(timed_epoch_s=result.timed.epoch_s, timed_train_s=result.timed.train_s)
        timed = result.epochs[result.timed.epoch - 1]
        row.update(timed_loss=timed.loss, timed_accuracy=timed.accuracy, timed_data_wait_s=timed.data_wait_s)
    return row


def load_frame(results_dir: Path) -> pd.DataFrame:
    """One row per cell: planned cells without a result have status "missing".
    A corrupt result file raises ResultError naming it (never a silent skip)."""
    results = {r.cell_id: r for r in (read_result(p) for p in result_files(results_dir))}
    cells = {c.cell_id: c for c in planned_cells(results_dir)}
    for cell_id, result in results.items():
        cells.setdefault(cell_id, Cell.from_dict(result.cell))
    rows = [row_of(cell, results.get(cell_id)) for cell_id, cell in cells.items()]
    frame = pd.DataFrame(rows)
    for column in ("timed_epoch_s", "timed_train_s", "timed_loss", "timed_accuracy", "gpu_model", "error"):
        if column not in frame:
            frame[column] = None
    return frame
