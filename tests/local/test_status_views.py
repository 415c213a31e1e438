"""`status` from the command line: every cell of a small study listed, as always; a larger one
summarised (counts, the cells that need a look); --all, --state, --grep and --json on demand."""
from __future__ import annotations

import json

import pytest
from rich.console import Console

from jobs.core.result import Result, write_result
from orchestrator.budget import budget
from orchestrator.cli import main
from orchestrator.commands.submit import wait_for
from orchestrator.plan.plan import read_plan
from results_format.registry import Submission, append_entries

GRID = """name = "grid"
[cluster]
time_min = 5
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 32
batch_per_gpu = 16
engine = "single"
[[grid]]
seed = {seeds}
"""
REASON = "RuntimeError: [/pytorch/gloo/pair.cc:534] Connection closed by peer"


def status(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["status", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def grid(in_tmp, capsys):
    """40 cells: 3 done, 1 failed (its job gone, its result says why), the rest never submitted."""
    study = in_tmp / "grid.toml"
    study.write_text(GRID.format(seeds=list(range(40))))
    assert main(["plan", "--study", str(study)]) == 0
    results = in_tmp / "runs" / "grid"
    plan = read_plan(results)
    for cell in plan.cells[:3]:
        write_result(results, Result(cell.cell_id, cell.to_dict(), "ok"))
    failed = plan.cells[3]
    write_result(results, Result(failed.cell_id, failed.to_dict(), "failed", error=f"Traceback ...\n{REASON}\n"))
    append_entries(results, [Submission(failed.cell_id, "local", "999999999", "n1-g1-t1", "2025-01-01T00:00:00+00:00")])
    return str(study), plan


def test_a_small_study_lists_every_cell_as_always(in_tmp, capsys):
    assert main(["plan", "--study", "quick"]) == 0
    plan = read_plan(in_tmp / "runs" / "quick")
    code, out, _ = status(capsys, "--study", "quick")
    assert code == 0 and out.splitlines()[0].strip() == "Study quick: 12 not submitted"
    for cell in plan.cells:
        [line] = [line for line in out.splitlines() if cell.cell_id in line]
        assert cell.label in line and "not submitted" in line


def test_a_larger_study_is_summarised_with_the_failed_cell_and_its_reason(grid, capsys):
    study, plan = grid
    code, out, _ = status(capsys, "--study", study)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Study grid: 40 cells: 36 not submitted, 3 done, 1 failed"
    assert lines[1].split() == ["array", "cells", "not", "submitted", "done", "failed"]
    assert lines[2].split() == ["n1-g1-t1", "40", "36", "3", "1"]
    assert "Need a look: 1 failed" in out and "".join(REASON.split()) in "".join(out.split())  # its reason whole
    assert sum(cid in out for cid in plan.cell_ids) == 1, "the other 39 cells are counted, not listed"
    assert "--all" in out and f"{'CPU' if budget.gpus_here() == 0 else 'GPU'}-hours:" in out  # local cells: here


def test_all_state_and_grep_list_the_cells_asked_for(grid, capsys):
    study, plan = grid
    out = status(capsys, "--study", study, "--all")[1]
    assert all(cid in out for cid in plan.cell_ids)
    out = status(capsys, "--study", study, "--state", "done")[1]
    assert out.splitlines()[0].strip() == "Study grid: 3 of 40 cells (state done)"
    assert [cid for cid in plan.cell_ids if cid in out] == list(plan.cell_ids[:3])
    out = status(capsys, "--study", study, "--state", "not-submitted", "--state", "failed", "--grep", "connection")[1]
    assert [cid for cid in plan.cell_ids if cid in out] == [plan.cell_ids[3]]
    assert "3 of 40" not in out and "(state not submitted/failed, with 'connection')" in out


def test_an_unknown_state_is_refused_naming_the_states(grid, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["status", "--study", grid[0], "--state", "fail"])
    assert exit_.value.code == 2
    assert "unknown state 'fail'; one of not-submitted, queued, pending" in capsys.readouterr().err


def test_json_has_the_counts_and_a_typed_record_per_cell_asked_for(grid, capsys):
    study, plan = grid
    data = json.loads(status(capsys, "--study", study, "--json")[1])
    assert data["counts"] == {"not submitted": 36, "done": 3, "failed": 1}
    assert data["arrays"] == {"n1-g1-t1": {"not submitted": 36, "done": 3, "failed": 1}}
    assert [c["cell_id"] for c in data["cells"]] == list(plan.cell_ids)
    failed = data["cells"][3]
    assert failed["state"] == "failed" and failed["detail"] == REASON and failed["job_id"] == "999999999"
    assert set(failed) == {"cell_id", "label", "state", "job_id", "elapsed_s", "node", "detail", "job_state",
                           "waited_s", "epochs_s"}
    data = json.loads(status(capsys, "--study", study, "--json", "--state", "done")[1])
    assert [c["cell_id"] for c in data["cells"]] == list(plan.cell_ids[:3]) and data["counts"]["not submitted"] == 36


def test_submit_wait_names_at_most_a_screenful_of_cells_that_ended_badly(grid):
    study, plan = grid
    for cell in plan.cells[4:]:  # 36 more fail alike: 37 in all
        write_result(plan.results_dir, Result(cell.cell_id, cell.to_dict(), "failed", error=f"Traceback\n{REASON}\n"))
    append_entries(plan.results_dir, [Submission(c.cell_id, "local", "999999999", "n1-g1-t1", "2025-01-01T00:00:00+00:00")
                              for c in plan.cells[4:]])
    console = Console(record=True, width=300, markup=False)
    assert wait_for(plan, console, 0.1) == 1
    lines = console.export_text().splitlines()
    named = [line for line in lines if line.startswith("failed ")]
    assert len(named) == 30 and "... and 7 more that did not end well:" in lines
    assert any(line.endswith(f"and 4 more (failed): {REASON}") for line in lines), lines[-3:]
