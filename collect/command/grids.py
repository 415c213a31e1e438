"""The command tables (collect.command.tables) laid out for people as Grids: the cells, one table
per metric (its timed value per setup) and the scaling table (speedup, efficiency and the verdict
against the fewest processes)."""
from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

from collect.command.rows import UNREADABLE
from collect.command.tables import FIXED, STRONG, THRESHOLD, WEAK
from collect.render import Grid, number, status_text
from collect.repeats import ranged
from collect.verdict import BEYOND, EQUIVALENT
from collect.view import DEFAULT_VIEW, View, shown

SPREAD = ("median over repeats (the setup's ok cells), min-max beside it; * marks a spread (max - min) / median "
          "above 5%")
TIMED = "each cell's timed line: the line whose epoch is the study's timed_epoch, else its last line"
FORMULAS = ["speedup S = T(N0) / T(N), medians over repeats, N0 the series' fewest processes; efficiency = "
            "S / (N / N0)",
            f"{WEAK}: batch_per_gpu fixed; {STRONG}: the global batch batch_per_gpu x N fixed; {FIXED}: the study "
            "has no batch_per_gpu, every other field fixed",
            f"vs N0: collect.verdict on the times, ratio T(N) / T(N0) with its 95% interval; beyond {THRESHOLD:.0%}: "
            "faster or slower; within it: equivalent; else inconclusive (one run a side always is)"]


def figure(value: Any) -> str:
    """A metric's value: three significant digits ("0.0421", "11.8", "1,234"); "-" when missing."""
    if value is None or pd.isna(value):
        return "-"
    return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def cells_grid(cells: pd.DataFrame) -> Grid:
    header = ["cell", "setup", "repeat", "status", "hosts"]
    rows = [[r.cell_id, r.setup, str(r.repeat),
             status_text(r.status) + (f": {r.error}" if isinstance(r.error, str) and r.error else ""),
             r.hosts if isinstance(r.hosts, str) else ""] for r in cells.itertuples(index=False)]
    unreadable = int((cells.status == UNREADABLE).sum())
    caption = f"Cells: {len(cells)}." + (f" {unreadable} unreadable: their results are in no table." if unreadable else "")
    return Grid("command_cells", "Your script's runs: one per cell", caption, header, rows,
                ["failed: the script exited non-zero, wrote no metrics or a line that is not a JSON object of numbers "
                 "(the message says which; `logs CELL` shows its stderr)"],
                "" if rows else "No command cells.", text_columns=(0, 1, 3, 4))


def metric_grid(metric: str, part: pd.DataFrame, index: int) -> Grid:
    rows = [[r.setup, str(r.processes), ranged(r, "value", figure), str(r.repeats)]
            for r in part.itertuples(index=False)]
    return Grid(f"command_metric_{index}", f"{metric} per setup", f"The timed value of {metric}: {TIMED}.",
                ["setup", "processes", metric, "repeats"], rows, [SPREAD], "" if rows else "No ok result.",
                text_columns=(0,))


def judged(r: Any) -> str:
    """The verdict's words for a scaling row: "0.52x (0.5-0.54): faster, beyond 5%"."""
    if not r.outcome:
        return "the base"
    if r.one_run:
        return f"{r.ratio:.2f}x: one run a side, no spread measured (inconclusive)"
    centre = f"{r.ratio:.2f}x ({r.ratio_low:.3g}-{r.ratio_high:.3g})"
    if r.outcome == BEYOND:
        return f"{centre}: {'faster' if r.direction < 0 else 'slower'}, beyond {THRESHOLD:.0%}"
    if r.outcome == EQUIVALENT:
        return f"{centre}: equivalent (within {THRESHOLD:.0%})"
    return f"{centre}: inconclusive"


def scaling_grid(scaling: pd.DataFrame) -> Grid:
    header = ["series", "N", "time", "speedup", "efficiency", "vs N0"]
    several = scaling.metric.nunique() > 1
    rows = [[f"{r.regime}, " + (f"{r.metric}: " if several else "") + r.series, str(r.processes), ranged(r, "time", figure),
             number(r.speedup), number(r.efficiency), judged(r)] for r in scaling.itertuples(index=False)]
    metrics = ", ".join(dict.fromkeys(scaling.metric))
    return Grid("command_scaling", "Scaling: speedup and efficiency on the declared time metric",
                f"Time: {metrics + ', ' if metrics else ''}each cell's time_metric, at its timed line ({TIMED}).",
                header, rows,
                [SPREAD, *FORMULAS],
                "" if rows else "No scaling: no series of setups that differ only in their process count has its "
                "time_metric at two or more counts.", text_columns=(0, 2, 5))


def build(built: dict[str, pd.DataFrame], view: View = DEFAULT_VIEW) -> tuple[Grid, ...]:
    """The cells, the scaling table, then a table per metric (the first view.rows metrics; every
    one is in command_metrics.csv)."""
    metrics = built["command_metrics"]
    names = list(dict.fromkeys(metrics.metric))
    grids = []
    for i, name in enumerate(names[:view.rows]):
        part = shown(metrics[metrics.metric == name], "command_metrics.csv", view.rows, "setups")
        grids.append(part.noted(metric_grid(name, part.table, i)))
    if len(names) > view.rows:
        grids[-1] = dataclasses.replace(grids[-1], more=f"{len(names) - view.rows:,} more metrics are in "
                                                         "command_metrics.csv.")
    cells = shown(built["command_cells"], "command_cells.csv", view.rows, "cells")
    scaling = shown(built["command_scaling"], "command_scaling.csv", view.rows, "rows")
    return (cells.noted(cells_grid(cells.table)), scaling.noted(scaling_grid(scaling.table)), *grids)


