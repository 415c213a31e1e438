"""status at any size (orchestrator.watch.overview, display.summary_view): counts per state and per
array, the cells that need a look, at most a screenful; the cells asked for by state or text."""
from __future__ import annotations

import pytest
from rich.console import Console

from jobs.train.cell import Cell
from orchestrator.commands import display
from orchestrator.watch import overview
from orchestrator.plan.cluster import ClusterSpec
from orchestrator.plan.cell_names import cell_names
from orchestrator.budget.estimate import profile_estimates
from orchestrator.plan.plan import build_plan
from results_format.states import CellState
from orchestrator.watch.status import CellRow
from orchestrator.plan.study import Study


def plan_of(tmp_path, n: int, time_min: int = 10):
    """n cells in two arrays (1 GPU and 2 GPUs), `time_min` minutes each."""
    cells = tuple(Cell(engine="single" if i % 2 else "ddp", gpus_per_node=1 if i % 2 else 2, batch_per_gpu=32, seed=i)
                  for i in range(n))
    return build_plan(Study("big", "", "data", ClusterSpec(time_min=time_min), cells, ""), tmp_path, tmp_path)


def row(cell_id: str, state: str, detail: str = "", waited_s: float | None = None) -> CellRow:
    return CellRow(cell_id, "single-1g-b32-e2", state, "7_1", None, "", detail, waited_s=waited_s)


def render(renderable, width: int = 80) -> list[str]:
    console = Console(width=width, record=True, markup=False, color_system=None)
    console.print(renderable)
    return console.export_text().splitlines()


def test_the_cells_that_need_a_look_most_urgent_first(tmp_path):
    plan = plan_of(tmp_path, 9)
    ids = plan.cell_ids
    rows = [row(ids[0], "running"), row(ids[1], "pending", waited_s=60.0), row(ids[2], "pending", waited_s=601.0),
            row(ids[3], "done"), row(ids[4], "failed", "ValueError: x"), row(ids[5], "not submitted"),
            row(ids[6], "oom", "CUDA out of memory"), row(ids[7], "unknown"), row(ids[8], "timeout")]
    looks = overview.look_rows(rows, plan)
    # waiting 10 min + 1 s is longer than the 10 min limit; a minute is not; done, oom and not submitted are fine
    assert [r.cell_id for r in looks] == [ids[4], ids[8], ids[7], ids[2], ids[0]]
    assert overview.look_counts(looks) == "1 failed, 1 timeout, 1 unknown, 1 pending longer than their time limit, " \
                                         "1 running"


def test_cells_asked_for_by_state_and_by_text_in_any_case(tmp_path):
    rows = [row("a" * 12, "failed", "RuntimeError: NCCL timeout"), row("b" * 12, "failed", "ValueError: bad"),
            row("c" * 12, "done"), row("d" * 12, "pending", "Priority")]
    assert [r.cell_id for r in overview.matching(rows, [CellState.FAILED])] == ["a" * 12, "b" * 12]
    assert [r.cell_id for r in overview.matching(rows, [], "nccl")] == ["a" * 12]
    assert [r.cell_id for r in overview.matching(rows, [CellState.FAILED, CellState.PENDING], "e")] == \
        ["a" * 12, "b" * 12, "d" * 12]  # "timeout", "ValueError", "Priority" and "pending" hold an e
    assert overview.matching(rows) == rows
    assert overview.matching(rows, [], "[/") == []  # plain text, no pattern


@pytest.mark.parametrize("text, state", [("failed", CellState.FAILED), ("not-submitted", CellState.NOT_SUBMITTED),
                                         ("Not_Submitted", CellState.NOT_SUBMITTED), ("oom", CellState.OOM)])
def test_a_state_as_typed(text, state):
    assert overview.state_named(text) == state


def test_an_unknown_state_names_them_all():
    with pytest.raises(ValueError, match="unknown state 'fail'; one of not-submitted, queued, pending, running, done"):
        overview.state_named("fail")


def test_counts_per_state_and_per_array(tmp_path):
    plan = plan_of(tmp_path, 4)
    ids = plan.cell_ids
    rows = [row(ids[0], "done"), row(ids[1], "done"), row(ids[2], "failed"), row(ids[3], "not submitted")]
    assert overview.state_counts(rows) == {"not submitted": 1, "done": 2, "failed": 1}
    assert overview.array_counts(rows, plan) == {"n1-g2-t2": {"done": 1, "failed": 1},
                                                 "n1-g1-t1": {"not submitted": 1, "done": 1}}


def test_2000_cells_fit_a_screenful_with_the_failed_reasons_whole(tmp_path):
    plan = plan_of(tmp_path, 2000)
    reason = "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer"
    states = ["done", "done", "failed", "running", "pending"]
    rows = [row(cid, states[i % 5], reason if states[i % 5] == "failed" else "", waited_s=30.0)
            for i, cid in enumerate(plan.cell_ids)]
    lines = render(display.summary_view(plan, rows))
    text = "\n".join(lines)
    assert len(lines) <= 30 and all(len(line) <= 80 for line in lines), text
    assert lines[0] == "Study big: 2,000 cells: 400 pending, 400 running, 800 done, 400 failed"
    assert "n1-g1-t1  1,000" in text and "n1-g2-t2  1,000" in text  # the arrays' counts
    assert "Need a look: 400 failed, 400 running (the first 15)" in text
    assert sum(cid in text for cid in plan.cell_ids) <= 15 + 3  # the first 15, and 3 named by the reason
    assert "".join(reason.split()) in "".join(text.split()), "the reason whole, as text"
    assert "`status --state STATE`" in text and "--all" in text


def test_a_cell_waiting_longer_than_its_time_limit_says_for_how_long(tmp_path):
    plan = plan_of(tmp_path, 40, time_min=5)
    rows = [row(cid, "pending", "Priority", waited_s=301.0 if i == 7 else 10.0) for i, cid in enumerate(plan.cell_ids)]
    text = "\n".join(render(display.summary_view(plan, rows, 120), 120))
    assert f"{plan.cell_ids[7]}" in text and "waiting 0:05:01 (limit 5 min); Priority" in text
    assert "Need a look: 1 pending longer than their time limit" in text and plan.cell_ids[8] not in text


def test_nothing_to_look_at_says_so(tmp_path):
    plan = plan_of(tmp_path, 40)
    text = "\n".join(render(display.summary_view(plan, [row(cid, "done") for cid in plan.cell_ids])))
    assert "Nothing needs a look" in text and "Study big: 40 cells: 40 done" in text


def test_a_long_list_as_plain_text_has_the_tables_columns_and_cut(tmp_path):
    rows = [row(f"{i:012x}", "failed", "x" * 200) for i in range(3)]
    lines = display.status_lines("title", rows, 80).splitlines()
    assert lines[0] == "title" and lines[1].split() == ["cell", "label", "state", "job", "detail"]
    assert all(len(line) <= 80 and line.endswith("…") for line in lines[2:]) and len(lines) == 5


def test_cells_queued_for_the_local_executor_wait_their_turn_without_a_look(tmp_path):
    plan = plan_of(tmp_path, 2, time_min=5)
    rows = [row(cid, "queued", "waiting in the local queue", waited_s=3600.0) for cid in plan.cell_ids]
    assert overview.look_rows(rows, plan) == []


def test_a_long_plan_lists_its_cells_as_plain_text_with_the_tables_columns(tmp_path):
    plan = plan_of(tmp_path, 3)
    lines = display.cells_text(plan, profile_estimates(dict(zip(plan.cell_ids, plan.cells)), plan.cluster)).splitlines()
    assert lines[0] == "Cells" and lines[1].split()[:4] == ["cell", "label", "array", "batch/GPU"]
    assert lines[1].endswith("est. GPU-h  from") and len(lines) == 2 + 3
    for cell, name, line in zip(plan.cells, cell_names(plan.cells), lines[2:]):
        assert line.split()[:3] == [cell.cell_id, name, plan.array_of(cell.cell_id).name]
        assert line.endswith("profile")


def test_a_long_plans_cells_fit_the_terminal_the_kinds_columns_giving_way(tmp_path):
    plan = plan_of(tmp_path, 3)
    estimates = profile_estimates(dict(zip(plan.cell_ids, plan.cells)), plan.cluster)
    lines = display.cells_text(plan, estimates, 70).splitlines()
    assert max(map(len, lines)) <= 70 and lines[-2].startswith("(not shown at this width: batch/GPU, ")
    assert lines[1].split()[:3] == ["cell", "label", "array"] and lines[1].endswith("est. GPU-h  from")
