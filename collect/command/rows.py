"""A command study's cells as flat rows (pandas): one per cell (its status), and one per (cell,
metric) of each ok result's timed line (the line the study's timed_epoch picks).

A setup is the cells that differ only in `repeat`; its name is its processes ("2 GPUs", "2 nodes x
4 GPUs", "2 CPU processes") and the fields that differ between the study's setups ("batch_per_gpu=64").
Its scaling group (`group`) is the same without the process count: the setups a speedup compares.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from collect.cells import KindCell
from jobs.command.cell import CommandCell, processes_text, value_text
from jobs.command.result import CommandFindings

UNREADABLE = "unreadable"
PROCESS_FIELDS = ("nodes", "gpus_per_node", "cpu_ranks_per_node")  # the process count, which scaling varies
BATCH = "batch_per_gpu"  # the user's field that makes a GPU-count series weak (fixed) or strong (fixed global)
NOT_SETUP = ("kind", "repeat")
CELL_COLUMNS = ["cell_id", "setup", "group", "processes", "repeat", "status", "error", "hosts"]
VALUE_COLUMNS = ["cell_id", "setup", "group", "processes", "batch_per_gpu", "repeat", "time_metric", "metric",
                 "value"]


@dataclass(frozen=True)
class CommandRows:
    cells: pd.DataFrame  # every command cell, any status (CELL_COLUMNS)
    values: pd.DataFrame  # each ok cell's timed metrics, one row per metric (VALUE_COLUMNS)


def varying(cells: list[CommandCell]) -> list[str]:
    """The fields (but the process count and the repeat) that differ between the cells, in order."""
    dicts = [c.to_dict() for c in cells]
    names = list(dict.fromkeys(k for d in dicts for k in d if k not in NOT_SETUP + PROCESS_FIELDS))
    return [k for k in names if len({json.dumps(d.get(k), sort_keys=True) for d in dicts}) > 1]


def group_name(cell: CommandCell, extra: list[str]) -> str:
    """"batch_per_gpu=64, lr=0.1": the varying fields' values; "all" when none varies."""
    fields = cell.to_dict()
    return ", ".join(f"{k}={_shown(fields.get(k))}" for k in extra) or "all"


def command_rows(kind_cells: tuple[KindCell, ...]) -> CommandRows:
    """Every command cell's row, and each readable ok result's timed metrics."""
    cells = [CommandCell.from_dict(c.cell) for c in kind_cells]  # checked when loaded (collect.load)
    order = sorted(range(len(cells)), key=lambda i: _order(cells[i]))
    kind_cells, cells = tuple(kind_cells[i] for i in order), [cells[i] for i in order]
    extra = varying(cells)
    cell_rows, value_rows = [], []
    for c, cell in zip(kind_cells, cells, strict=True):
        group = group_name(cell, extra)
        row = _cell_row(c, cell, f"{processes_text(cell)}" + ("" if group == "all" else f", {group}"), group)
        found = c.kept.body if c.kept is not None else None
        if c.status == "ok" and isinstance(found, CommandFindings) and found.world_size == cell.ranks:
            batch = dict(cell.own_fields).get(BATCH)
            value_rows += [dict(cell_id=c.cell_id, setup=row["setup"], group=group, processes=cell.ranks,
                                batch_per_gpu=batch if _number(batch) else math.nan, repeat=cell.repeat,
                                time_metric=cell.time_metric, metric=name, value=value)
                           for name, value in found.timed_line.items()]
        elif c.status == "ok":  # types and ranges were checked on read: held to its cell here
            why = "without its metrics" if found is None else f"of {found.world_size} processes, its cell's {cell.ranks}"
            row.update(status=UNREADABLE, error=f"result file {c.cell_id}.json: an ok result {why}; move it aside "
                                                "and rerun `submit` to redo that cell")
        cell_rows.append(row)
    return CommandRows(pd.DataFrame(cell_rows, columns=CELL_COLUMNS), pd.DataFrame(value_rows, columns=VALUE_COLUMNS))


def _order(cell: CommandCell) -> tuple:
    """CPU before GPU, fewer processes first, then the user's fields by value (8 before 16), the repeat."""
    own = tuple((isinstance(v, str), v if not isinstance(v, str) else 0, str(v)) for _, v in cell.own_fields)
    return (cell.gpus_per_node > 0, cell.ranks, cell.nodes, own, json.dumps(cell.to_dict(), sort_keys=True))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(value)
    return value_text(value) if value is not None else "-"


def _cell_row(c: KindCell, cell: CommandCell, setup: str, group: str) -> dict[str, Any]:
    result = c.kept
    env = result.env if result is not None else {}
    error = result.error if result is not None else None
    hosts = env.get("hostnames")
    return dict(cell_id=c.cell_id, setup=setup, group=group, processes=cell.ranks, repeat=cell.repeat,
                status=c.status, error=error.strip().splitlines()[-1] if error and error.strip() else None,
                hosts=",".join(hosts) if isinstance(hosts, list) else None)
