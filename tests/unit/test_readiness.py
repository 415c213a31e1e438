"""`status` ends with a line per question (orchestrator.readiness): ready, provisional (from which
cells, waiting on which), waiting, or blocked with the command that retries what failed; one pass
over the cells, under a second at 100,000."""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from results_format.states import CellState
from jobs.train.cell import Cell
from orchestrator.plan.plan import Plan, build_plan
from orchestrator.watch.readiness import provisional_line, readiness, status_lines
from orchestrator.watch.status import CellRow
from orchestrator.plan.study import load_study


def _hw5(tmp_path: Path) -> Plan:
    return build_plan(load_study("hw5"), tmp_path, tmp_path)


def _state(cell: Cell) -> CellState:
    """Q4's 5-epoch cells queued (one running), one 2-GPU DDP timing cell failed, the rest done."""
    if cell.epochs >= 5:
        return CellState.RUNNING if cell.batch_per_gpu == 128 and cell.repeat == 0 else CellState.QUEUED
    if cell.engine == "ddp" and cell.gpus == 2 and cell.batch_per_gpu == 32 and cell.repeat == 0:
        return CellState.FAILED
    return CellState.DONE


def test_a_line_per_question_says_ready_provisional_waiting_or_blocked(tmp_path):
    plan = _hw5(tmp_path)
    rows = [CellRow(c.cell_id, c.label, _state(c)) for c in plan.cells]
    words = {r.question: r.word for r in readiness(plan, {r.cell_id: r.state for r in rows})}
    assert words == {"A.Q1": "ready", "A.Q2": "blocked", "A.Q3.1": "blocked", "A.Q3.2": "blocked",
                     "A.Q4.1": "waiting", "A.Q4.2": "waiting", "A.Q5": "blocked", "A.Q6": "blocked",
                     "A.Q7": "provisional"}
    lines = status_lines(plan, rows)
    assert lines[0] == "Answers:" and lines[1] == "  A.Q1: ready (18 cells)"
    assert (f"  A.Q2: blocked, 1 failed of its 63 cells; retry: python -m orchestrator submit --retry-failed "
            f"--results {tmp_path}") in lines
    assert "  A.Q4.1: waiting on 21 cells (1 running, 20 queued)" in lines
    assert "  A.Q7: provisional, from 3 of 24 cells; waiting on 1 running, 20 queued" in lines
    assert all(len(line) <= 100 for line in lines if "retry:" not in line)


def test_collect_says_a_failed_cell_is_failed_not_to_come(tmp_path):
    """collect's line: a question whose cell failed waits on nothing (the retry does), one still queued
    waits on `status`'s cells."""
    plan = _hw5(tmp_path)
    line = provisional_line(plan, {c.cell_id: _state(c) for c in plan.cells})
    assert "A.Q2 (62 of 63 cells, 1 failed)" in line and "A.Q4.1 (0 of 21 cells)" in line
    assert line.endswith("; `status` says which are still to come; `submit --retry-failed` reruns those that ended "
                         "without a result")
    failed_only = {c.cell_id: CellState.FAILED if _state(c) == CellState.FAILED else CellState.DONE for c in plan.cells}
    assert "still to come" not in provisional_line(plan, failed_only)


def test_a_lab_study_is_asked_the_labs_questions(tmp_path):
    plan = build_plan(load_study("lab"), tmp_path, tmp_path)
    rows = [CellRow(c.cell_id, c.label, CellState.NOT_SUBMITTED) for c in plan.cells]
    assert [(r.question, r.word, r.cells) for r in readiness(plan, {r.cell_id: r.state for r in rows})][0] == ("lab.utilization", "waiting", 30)


def test_100000_cells_take_under_a_second(tmp_path):
    hw5 = _hw5(tmp_path)
    base = [c for c in hw5.cells if c.repeat == 0]
    cells = []
    for i in range(100_000):  # built as a sealed plan's are (plan.sealed_cells): fields, and an id of their own
        cell = object.__new__(Cell)
        cell.__dict__.update(dataclasses.asdict(base[i % len(base)]), seed=i // len(base), cell_id=f"{i:012x}")
        cells.append(cell)
    plan = dataclasses.replace(hw5, cells=tuple(cells), arrays=())
    states = list(CellState)
    rows = [CellRow(c.cell_id, "", states[i % 6]) for i, c in enumerate(cells)]
    start = time.perf_counter()
    lines = status_lines(plan, rows)
    assert time.perf_counter() - start < 1.0
    assert len(lines) == 1 + 9 and "A.Q2: provisional, from" in lines[2]


def test_the_verbs_start_without_pandas():
    """status and submit read the readiness and settle modules' light halves only: pandas (0.3 s) is
    imported by collect and `submit --settle` when they run."""
    import subprocess
    import sys

    code = "import sys; from orchestrator import cli; assert 'pandas' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60).returncode == 0
