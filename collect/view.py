"""What a table shows of itself on the console, in tables.md, tables.tex and the report: every row
of a small table, as always; of a large one (a study of 100,000 cells), the rows with a result up
to a readable number, the rows without one counted by status, and a line saying where the rest
are. The CSV files keep every row. The arithmetic is the tables'; nothing here computes a figure.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Optional

import pandas as pd

from collect.render import Grid, status_text
from results_format.states import CellState

MAX_ROWS = 30  # a table's rows on the console; the homework's largest table (hw5) has 28
NO_RESULT = (CellState.PENDING, CellState.QUEUED, CellState.SKIPPED, CellState.NOT_SUBMITTED)  # a planned cell's, in collect.load
VARIES = "varies"  # a cut table's attrs: the columns that vary over the whole table (shown's `named`)
TOP = 20  # the sweep table's best configurations on the console (collect --top)


@dataclass(frozen=True)
class View:
    """How `collect` shows its tables: `rows` per table at most, `top` rows of the sweep table,
    sorted by `sort` (a metric of collect.train.sweep.METRICS; "": its default)."""

    sort: str = ""
    top: int = TOP
    rows: int = MAX_ROWS


DEFAULT_VIEW = View()


@dataclass(frozen=True)
class Shown:
    """The rows of a table to lay out, and what the line under it says of the others ("" when
    every row is there)."""

    table: pd.DataFrame
    note: str = ""

    def noted(self, grid: Grid) -> Grid:
        """The grid with the note; a grid left with no row says the note instead of "no runs"."""
        if not self.note:
            return grid
        return dataclasses.replace(grid, more=self.note, empty=self.note if grid.empty else "")


def shown(table: pd.DataFrame, csv: str, rows: int = MAX_ROWS, what: str = "configurations",
          by: Optional[list[str]] = None, named: Sequence[str] = ()) -> Shown:
    """Every row when there are at most `rows` lines to show. Else the lines without a result (a
    status that is no result's: pending, skipped, not submitted) are counted by status, not
    listed, and of the others the first `rows` (in the table's order) are shown; the note says
    how many of each and that every row is in `csv`. A line is a row, or with `by` the rows that
    share those columns (a grid's line that holds several rows: Table 1's batches of one setup);
    it has a result when one of its rows has. Of the columns `named` (those a grid may name its
    rows by), the shown rows remember which vary over the whole table (attrs[VARIES]): a row is
    named as it would be among all of them."""
    lines = _lines(table, by)
    total = int(lines.nunique())
    if total <= rows:
        return Shown(table)
    answered = ~table.status.isin(NO_RESULT) if "status" in table else pd.Series(True, index=table.index)
    with_result = lines[answered].unique()
    waiting = ~lines.isin(with_result)
    parts = [f"{min(rows, len(with_result)):,} of {total:,} {what} shown"]
    if waiting.any():  # a line's status: the first of its rows' in NO_RESULT's order
        ranks = table.status[waiting].map(NO_RESULT.index).groupby(lines[waiting]).min().value_counts().sort_index()
        by_status = ", ".join(f"{n:,} {status_text(NO_RESULT[rank])}" for rank, n in ranks.items())
        if not len(with_result):
            parts = [f"None of the {total:,} {what} has a result yet: {by_status}"]
        else:
            parts.append(f"{int(ranks.sum()):,} of {total:,} have no result yet: {by_status}")
    if len(with_result) > rows:
        parts.append(f"{len(with_result) - rows:,} more with a result")
    kept = table[lines.isin(with_result[:rows])]
    kept.attrs = {**table.attrs, VARIES: [c for c in named if table[c].nunique(dropna=False) > 1]}
    return Shown(kept, "; ".join(parts) + f". Every row is in {csv}.")


def _lines(table: pd.DataFrame, by: Optional[list[str]]) -> pd.Series:
    """Each row's line of the grid: its position, or the group of `by` it is in (numbered in order)."""
    if by is None:
        return pd.Series(range(len(table)), index=table.index)
    return table.groupby(by, sort=False, dropna=False).ngroup()


