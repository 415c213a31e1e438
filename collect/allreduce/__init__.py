"""collect's side of the all-reduce study: rows (result JSON -> frames), tables (pure), grids, plots."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

from collect.allreduce import compare, grids, rows, tables
from collect.allreduce.questions import QUESTIONS
from collect.kinds import KindTables, Tables
from jobs.allreduce.result import AllreduceFindings
from jobs.core.result import Result


def _plots(built: Tables) -> Mapping[str, Optional[bytes]]:
    from collect.allreduce import plots  # matplotlib: only for the report

    return plots.build(built)


def _environment(result: Result) -> Mapping[str, Optional[str]]:
    return {"backend": result.body.backend if isinstance(result.body, AllreduceFindings) else None}


KIND = KindTables(
    "allreduce", "All-reduce study", "the link's bandwidth as nccl-tests measures it (busbw vs message size)",
    lambda loaded, view: tables.build(rows.allreduce_rows(loaded.of_kind("allreduce"))),
    grids.build,
    ("allreduce_sizes", "allreduce_marked", "allreduce_cells"), _plots,
    {"allreduce_marked": "allreduce_busbw_vs_size"}, environment=_environment,
    questions=QUESTIONS, runs=compare.runs,
)
