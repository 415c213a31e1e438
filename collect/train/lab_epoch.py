"""The lab's timed epochs: where each configuration's epoch went (data wait, all-reduce not hidden
behind the backward pass), from the run the lab's answers quote, so every share they cite is printed."""
from __future__ import annotations

import math
from typing import Any, Optional

import pandas as pd

from collect.render import Grid, number, percent
from collect.train.grids import lr_rule, setup_name
from collect.train.labels import present

TIMED = ["timed_epoch_s", "timed_data_wait_s", "timed_comm_exposed_s"]
COLUMNS = ["cell_id", "timed_epoch"] + TIMED + ["data_share", "comm_share"]  # beside the test table's columns
FORMULAS = ["data wait (%) = the timed epoch's data wait / its time; exposed all-reduce (%) = its all-reduce time not "
            "hidden behind the backward pass / its time (rank 0's)"]


def timed_cell(cells: pd.DataFrame, r: Any) -> Optional[Any]:
    """The first ok cell of a configuration (the test table's row `r`): the run whose timed epoch the lab quotes."""
    if not len(cells):
        return None
    same = cells[(cells.engine == r.engine) & (cells.nodes == r.nodes) & (cells.gpus_per_node == r.gpus_per_node)
                 & (cells.batch_per_gpu == r.batch_per_gpu) & (cells.lr_scaling == r.lr_scaling)
                 & (cells.warmup_epochs == r.warmup_epochs) & (cells.status == "ok")]
    return next(same.itertuples(index=False), None)


def share(cell: Optional[Any], column: str) -> float:
    """A part of the cell's timed epoch as a share of it (NaN where not measured)."""
    if cell is None or not present(getattr(cell, column)) or not cell.timed_epoch_s > 0:
        return math.nan
    return float(getattr(cell, column) / cell.timed_epoch_s)


def lab_epoch_table(test: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """The test table's configurations with a finished run (their columns), with that run's timed epoch and shares."""
    rows = []
    for r in test.itertuples(index=False):
        cell = timed_cell(cells, r) if r.status == "ok" else None
        if cell is not None:
            rows.append({**r._asdict(), "cell_id": cell.cell_id, "timed_epoch": cell.timed_epoch,
                         **{c: getattr(cell, c) for c in TIMED}, "data_share": share(cell, "timed_data_wait_s"),
                         "comm_share": share(cell, "timed_comm_exposed_s")})
    return pd.DataFrame(rows, columns=list(test.columns) + [c for c in COLUMNS if c not in test.columns])


def lab_epoch_grid(table: pd.DataFrame) -> Grid:
    header = ["setup", "batch per GPU", "LR rule", "run", "timed epoch", "epoch (s)", "data wait (s)", "data wait (%)",
              "exposed all-reduce (s)", "exposed all-reduce (%)", "the two (%)"]
    rows = [[setup_name(r), str(r.batch_per_gpu), lr_rule(r), str(r.cell_id), str(r.timed_epoch),
             number(r.timed_epoch_s), number(r.timed_data_wait_s), percent(r.data_share, 0),
             number(r.timed_comm_exposed_s), percent(r.comm_share, 0),
             percent(sum(x for x in (r.data_share, r.comm_share) if present(x)), 0)
             if present(r.data_share) or present(r.comm_share) else "-"]
            for r in table.itertuples(index=False)]
    return Grid("lab_epoch", "Where the timed epoch went", "Units: seconds and shares of the timed epoch. One run per "
                "configuration: its first finished repeat, the run the answers quote.", header, rows, FORMULAS,
                "" if rows else "No run has finished yet.", text_columns=(0, 2, 3))
