"""Tables for people: wide layouts with a cell's status where it has no number,
rendered as rich console tables, Markdown and CSV."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
from rich.table import Table

STATUS_TEXT = {"oom": "OOM", "failed": "failed", "timeout": "timeout", "missing": "missing"}
ENGINE_NAMES = {"single": "1 GPU", "dp": "DataParallel", "ddp": "DDP"}


@dataclass(frozen=True)
class Grid:
    """A table as text: title, caption (units, timed epoch, GPU, repeats), header, rows."""

    title: str
    caption: str
    header: list[str]
    rows: list[list[str]]


def number(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def cell_text(row: pd.Series, column: str, digits: int = 2) -> str:
    if row.status != "ok":
        return STATUS_TEXT.get(row.status, row.status)
    return number(row[column], digits)


def _setup_name(row: pd.Series) -> str:
    if row.engine == "single":
        return "1 GPU"
    nodes = f", {row.nodes} nodes" if row.nodes > 1 else ""
    return f"{row.gpus} GPUs{nodes}, {ENGINE_NAMES[row.engine]}"


def table1_grid(table: pd.DataFrame, caption: str) -> Grid:
    batches = sorted(table.batch_per_gpu.unique())
    header = ["setup"] + [f"b{b}/GPU {what}" for b in batches for what in ("time (s)", "speedup")]
    rows = []
    for (name, _, _), group in table.groupby([table.apply(_setup_name, axis=1), "gpus", "nodes"], sort=False):
        by_batch = {r.batch_per_gpu: r for r in group.itertuples(index=False)}
        line = [name]
        for b in batches:
            r = by_batch.get(b)
            if r is None:
                line += ["not in study", ""]
                continue
            series = pd.Series(r._asdict())
            line += [cell_text(series, "epoch_s"), cell_text(series, "speedup") if series.status == "ok" else ""]
        rows.append(line)
    return Grid("Table 1: time and speedup of one epoch", caption, header, rows)


def q1_grid(table: pd.DataFrame, caption: str) -> Grid:
    header = ["batch size", "train time (s), no data I/O", "epoch time (s)", "images/s"]
    rows = [
        [str(r.batch_per_gpu), cell_text(r, "train_s"), cell_text(r, "epoch_s"), cell_text(r, "images_per_s", 0)]
        for _, r in table.iterrows()
    ]
    return Grid("Q1: one epoch on 1 GPU by batch size", caption, header, rows)


def to_rich(grid: Grid) -> Table:
    table = Table(title=grid.title, caption=grid.caption, caption_justify="left")
    for i, name in enumerate(grid.header):
        table.add_column(name, justify="left" if i == 0 else "right")
    for row in grid.rows:
        table.add_row(*row)
    return table


def to_markdown(grid: Grid) -> str:
    lines = [f"### {grid.title}", "", f"_{grid.caption}_", ""]
    lines.append("| " + " | ".join(grid.header) + " |")
    lines.append("|" + "|".join("---" for _ in grid.header) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in grid.rows]
    return "\n".join(lines) + "\n"
