"""collect's side of the command study: rows (result JSON -> frames), tables (pure), grids, plot,
its one question (the scaling table's verdicts, counted: what `submit --settle` settles) and its runs
for --compare. Tables and verdicts; no essay questions."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

from collect.command import compare, grids, rows, tables
from collect.command.questions import QUESTIONS
from collect.kinds import KindTables, Tables


def _plots(built: Tables) -> Mapping[str, Optional[bytes]]:
    from collect.command import plots  # matplotlib: only for the report

    return plots.build(built)


KIND = KindTables(
    "command", "Your script", "its metrics per setup, and speedup where the study varies the process count",
    lambda loaded, view: tables.build(rows.command_rows(loaded.of_kind("command"))),
    grids.build, ("command_cells", "command_metrics", "command_scaling"), _plots,
    {"command_scaling": "command_time_vs_processes"}, questions=QUESTIONS, runs=compare.runs,
)
