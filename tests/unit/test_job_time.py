"""`status` shows a finished cell's time in its job (its phases) and, for all, the epochs' share."""
from __future__ import annotations

from rich.console import Console

from jobs.core.phases import Phases
from jobs.core.result import Result, write_result
from jobs.train.result import Timed, TrainBody
from orchestrator.commands import display
from orchestrator.watch import job_time
from orchestrator.plan.plan import build_plan
from results_format.registry import Submission
from orchestrator.slurm.slurm_client import JobState, Snapshot
from orchestrator.watch.status import Monitor, statuses
from orchestrator.plan.study import load_study
from tests.factories import train_result

ENV = {"started_at": "2025-01-01T10:00:00+00:00", "ended_at": "2025-01-01T10:02:30+00:00"}


def test_a_finished_cells_time_is_its_jobs_whole_time_and_its_epochs(tmp_path):
    plan = build_plan(load_study("quick"), tmp_path, tmp_path)
    timed, old = plan.cells[:2]
    phases = Phases(start_s=2.0, setup_s=3.0, body_s=160.0, write_s=1.0, launch_s=4.0, epochs_s=120.0, eval_s=20.0,
                    measure_s=10.0)  # 170 s from the task's start: 20 s more than its first line to its end
    epochs = train_result(timed).body.epochs  # the timed epoch is one of them (a result without it is refused)
    write_result(tmp_path, Result(timed.cell_id, timed.to_dict(), "ok", env=ENV, phases=phases,
                                  body=TrainBody(epochs, timed=Timed(2, 10.0, 9.0))))
    write_result(tmp_path, Result(old.cell_id, old.to_dict(), "ok", env=ENV,
                                  body=TrainBody(epochs, timed=Timed(2, 10.0, 9.0))))
    subs = {c.cell_id: Submission(c.cell_id, "slurm", f"17_{i}", "a", "t") for i, c in enumerate((timed, old))}
    snapshot = Snapshot({f"17_{i}": JobState(f"17_{i}", "COMPLETED", 200.0, "n1") for i in range(2)})
    rows = {r.cell_id: r for r in statuses(plan, subs, Monitor(plan).read_results(), snapshot)}
    assert (rows[timed.cell_id].elapsed_s, rows[timed.cell_id].epochs_s) == (170.0, 120.0)
    assert (rows[old.cell_id].elapsed_s, rows[old.cell_id].epochs_s) == (150.0, None), "before phases: its own clock"
    line = job_time.summary(list(rows.values()))
    assert line == ("1 finished job(s) with phases: 0:02:50 in all, 0:02:00 of it in epochs (71 %); `collect` shows where the "
                    "rest went (overhead)")
    console = Console(record=True, width=100)
    console.print(display.status_view("quick", list(rows.values()), 100))
    assert "0:02:00 of it in epochs (71 %)" in console.export_text()


def test_no_finished_job_with_phases_says_nothing():
    assert job_time.summary([]) is None
