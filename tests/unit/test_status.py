"""orchestrator.watch.status: each cell's state from its submission, its result and the scheduler's word."""
from __future__ import annotations

import dataclasses

import datetime as dt
import os

import pytest

from jobs.core.result import ResultError, write_result
from orchestrator.plan.cell_names import cell_names
from orchestrator.local.processes import local_snapshot
from orchestrator.plan.plan import build_plan
from results_format.registry import Submission
from orchestrator.slurm.slurm_client import JobState, Snapshot
from results_format.states import SLURM_STATES, CellState
from orchestrator.watch.status import Monitor, cell_state, statuses
from orchestrator.plan.study import load_study
from tests.factories import cell, train_result

SLURM_SUB = Submission("c", "slurm", "17_0", "n1-g1-t1", "2025-01-01T00:00:00+00:00")
LOCAL_QUEUED = Submission("c", "local", None, "n1-g1-t1", "2025-01-01T00:00:00+00:00", queue_pid=4321)
LOCAL_JOB = Submission("c", "local", "5555", "n1-g1-t1", "2025-01-01T00:00:00+00:00", queue_pid=4321)
CELL = cell("single", 32)


def job(state: str, reason: str = "", elapsed: float | None = None) -> JobState:
    return JobState("17_0", state, elapsed, "n1", reason)


# --- a result that is a final answer wins ----------------------------------------------

@pytest.mark.parametrize("live", ["RUNNING", "PENDING", "FAILED", None])
def test_a_good_result_wins_over_any_job(live):
    assert cell_state(SLURM_SUB, train_result(CELL), job(live) if live else None) == ("done", "")


def test_ok_result_without_any_submission_is_done():
    assert cell_state(None, train_result(CELL), None) == ("done", "")


def test_oom_is_a_final_answer_with_its_message():
    oom = train_result(CELL, "oom", error="CUDA out of memory at batch 32768")
    assert cell_state(SLURM_SUB, oom, job("COMPLETED")) == ("oom", "CUDA out of memory at batch 32768")


def test_never_submitted():
    assert cell_state(None, None, None) == ("not submitted", "")
    assert cell_state(None, train_result(CELL, "failed", error="x"), None) == ("not submitted", "")


# --- the local queue ---------------------------------------------------------------------

def test_local_waiting_in_the_queue():
    assert cell_state(LOCAL_QUEUED, None, JobState("queue-4321", "PENDING", reason="waiting in the local queue")) == \
        ("queued", "waiting in the local queue")


def test_local_queue_gone_before_the_cell_ran():
    assert cell_state(LOCAL_QUEUED, None, JobState("queue-4321", "LOST")) == \
        ("failed", "the local queue stopped before it ran")


def test_local_job_running_and_ended():
    assert cell_state(LOCAL_JOB, None, JobState("5555", "RUNNING", 3.0, "localhost"))[0] == "running"
    assert cell_state(LOCAL_JOB, None, JobState("5555", "ENDED", 3.0, "localhost"))[0] == "failed"
    assert cell_state(LOCAL_JOB, train_result(CELL, "failed", error="Traceback\n  ...\nRuntimeError: boom\n"),
                      JobState("5555", "ENDED")) == ("failed", "RuntimeError: boom")


# --- SLURM states ----------------------------------------------------------------------------

@pytest.mark.parametrize("state, reason, expected", [
    ("PENDING", "Priority", ("pending", "Priority")),
    ("REQUEUED", "", ("pending", "")),
    ("RUNNING", "", ("running", "")),
    ("COMPLETING", "", ("running", "")),
    # why it ended, and the fix (see also tests/local/test_recovery.py)
    ("TIMEOUT", "", ("timeout", "TIMEOUT: hit its time limit (after any requeues); submit --retry-failed --time-min N")),
    ("CANCELLED", "", ("cancelled", "CANCELLED: by `cancel`/scancel or an administrator; submit --retry-failed")),
    ("NODE_FAIL", "exit 0:0", ("failed", "NODE_FAIL: node n1 failed under it; submit --retry-failed")),
    ("OUT_OF_MEMORY", "exit 0:125", ("failed", "OUT_OF_MEMORY: the job used more host memory than it asked; "
                                               "raise mem_gb, then submit --retry-failed")),
    ("COMPLETED", "", ("failed", "the job ended without writing a result; see `logs CELL`")),  # no good result
    ("FAILED", "exit 1:0", ("failed", "SLURM state FAILED (exit 1:0); see `logs CELL`")),
    ("WEIRD_NEW_STATE", "", ("unknown", "SLURM state WEIRD_NEW_STATE, no result file")),
])
def test_slurm_states_without_a_result(state, reason, expected):
    assert cell_state(SLURM_SUB, None, job(state, reason)) == expected


def test_a_live_job_wins_over_an_earlier_failed_result():
    """A failed cell resubmitted: its old failure must not hide the new job."""
    old = train_result(CELL, "failed", error="old")
    assert cell_state(SLURM_SUB, old, job("RUNNING")) == ("running", "")
    assert cell_state(SLURM_SUB, old, job("PENDING", "Resources")) == ("pending", "Resources")


def test_failed_result_gives_the_last_line_of_its_error():
    error = "Traceback (most recent call last):\n  File x\nValueError: bad shape\n\n   \n"
    failed = train_result(CELL, "failed", error=error)
    assert cell_state(SLURM_SUB, failed, job("FAILED", "exit 1:0")) == ("failed", "ValueError: bad shape")
    assert cell_state(SLURM_SUB, failed, None) == ("failed", "ValueError: bad shape")


def test_timeout_result_reads_timeout():
    timeout = train_result(CELL, "timeout", error="time limit\nsaved epoch 1")
    assert cell_state(SLURM_SUB, timeout, job("TIMEOUT")) == ("timeout", "saved epoch 1")


def test_an_unreadable_result_file_is_a_failure_that_names_it():
    error = ResultError("result file /r/c.json is unreadable (truncated)")
    assert cell_state(SLURM_SUB, error, job("COMPLETED")) == ("failed", "result file /r/c.json is unreadable (truncated)")


def test_submitted_but_no_scheduler_record_is_unknown():
    assert cell_state(SLURM_SUB, None, None) == ("unknown", "not in squeue; sacct has no record yet")


def test_another_users_job_out_of_sight_is_unknown_and_named_never_failed(monkeypatch):
    """Issue 45 item 5: squeue -u $USER never lists a labmate's job in a shared dir: its cell went
    unknown, then failed, and `submit --retry-failed` queued it again beside theirs."""
    monkeypatch.setenv("USER", "me")
    theirs = dataclasses.replace(SLURM_SUB, user="alice")
    state, detail = cell_state(theirs, None, None, age_s=3600)
    assert state == "unknown" and not state.is_retryable and detail.startswith("job 17_0 is alice's")
    assert cell_state(dataclasses.replace(SLURM_SUB, user="me"), None, None, age_s=3600)[0] == "failed"


def test_a_state_is_live_or_terminal_never_both():
    assert not [s for s in CellState if s.is_live and s.is_terminal]
    assert {s for s in CellState if not s.is_live and not s.is_terminal} == {CellState.NOT_SUBMITTED, CellState.UNKNOWN}
    assert [s for s in CellState if s.is_final] == [CellState.DONE, CellState.OOM]
    assert SLURM_STATES["COMPLETING"].is_live and SLURM_STATES["COMPLETED"] == CellState.FAILED  # no good result
    assert SLURM_STATES["PREEMPTED"].is_retryable and SLURM_STATES["DEADLINE"] == CellState.TIMEOUT


# --- statuses over a small plan -------------------------------------------------------------

def test_statuses_over_a_plan(tmp_path):
    plan = build_plan(load_study("quick"), tmp_path, tmp_path)
    done, oom, running, pending, failed, fresh = plan.cells[:6]
    env = {"started_at": "2025-01-01T10:00:00+00:00", "ended_at": "2025-01-01T10:02:30+00:00"}
    done_result = train_result(done, env=env)
    done_result.phases = None  # written before phases: its own start and end
    write_result(tmp_path, done_result)
    write_result(tmp_path, train_result(oom, "oom", error="CUDA out of memory", env=env))
    write_result(tmp_path, train_result(failed, "failed", error="Traceback\nKeyError: 'x'", env={}))  # no run times
    (tmp_path / f"{running.cell_id}.json").write_text("{")  # being rewritten? unreadable
    subs = {
        done.cell_id: Submission(done.cell_id, "slurm", "17_0", "a", "t"),
        oom.cell_id: Submission(oom.cell_id, "slurm", "17_1", "a", "t"),
        running.cell_id: Submission(running.cell_id, "slurm", "18_0", "b", "t"),
        pending.cell_id: Submission(pending.cell_id, "local", None, "b", "t", queue_pid=99),
        failed.cell_id: Submission(failed.cell_id, "slurm", "19_0", "c", "t"),
    }
    snapshot = Snapshot({
        "17_0": JobState("17_0", "COMPLETED", 200.0, "n1"),
        "18_0": JobState("18_0", "RUNNING", 42.0, "n2"),
        "queue-99": JobState("queue-99", "PENDING", reason="waiting in the local queue"),
        "19_0": JobState("19_0", "FAILED", 5.0, "n3", "exit 1:0"),
    })
    results = Monitor(plan).read_results()
    assert set(results) == {done.cell_id, oom.cell_id, failed.cell_id, running.cell_id}
    assert isinstance(results[running.cell_id], ResultError)
    rows = {r.cell_id: r for r in statuses(plan, subs, results, snapshot)}
    assert [rows[c.cell_id].state for c in plan.cells[:6]] == ["done", "oom", "running", "queued", "failed", "not submitted"]
    assert rows[done.cell_id].elapsed_s == 150.0  # the run's own start/end, not the job's 200 s
    assert rows[done.cell_id].job_id == "17_0" and rows[done.cell_id].node == "n1"
    assert rows[oom.cell_id].elapsed_s == 150.0 and rows[oom.cell_id].detail == "CUDA out of memory"
    assert rows[running.cell_id].elapsed_s == 42.0 and rows[running.cell_id].node == "n2"
    assert rows[pending.cell_id].job_id == "" and rows[pending.cell_id].detail == "waiting in the local queue"
    assert rows[failed.cell_id].detail == "KeyError: 'x'" and rows[failed.cell_id].elapsed_s == 5.0
    assert rows[fresh.cell_id].state == "not submitted" and rows[fresh.cell_id].job_id == ""
    assert rows[done.cell_id].label == cell_names(plan.cells)[0]  # its name: the label, "#k" among repeats


def test_a_cancelled_local_job_reads_cancelled():
    ended = JobState("5555", "ENDED", 3.0, "localhost")
    assert cell_state(LOCAL_JOB, None, ended, cancelled=True)[0] == "cancelled"
    assert cell_state(LOCAL_JOB, None, ended)[0] == "failed"


def test_a_failed_local_cell_stops_its_clock_at_its_end(tmp_path):
    """Measured to now, a failed cell's elapsed time grew on every refresh."""
    plan = build_plan(load_study("quick"), tmp_path, tmp_path)
    with_result, without = plan.cells[:2]
    env = {"started_at": "2025-01-01T10:00:05+00:00", "ended_at": "2025-01-01T10:01:05+00:00"}
    write_result(tmp_path, train_result(with_result, "failed", error="ValueError: x", env=env))
    log = tmp_path / "without.err"
    log.write_text("Traceback\nRuntimeError: boom\n")
    start = dt.datetime(2025, 1, 1, 10, 0, tzinfo=dt.UTC)
    os.utime(log, (start.timestamp() + 90, start.timestamp() + 90))  # its last words, 90 s in
    subs = {c.cell_id: Submission(c.cell_id, "local", "999999999", "a", start.isoformat(), log_err=str(log))
            for c in (with_result, without)}
    for hours in (1, 5):  # refreshed much later: the same figures
        now = start + dt.timedelta(hours=hours)
        snapshot = Snapshot(local_snapshot(list(subs.values()), now))
        rows = {r.cell_id: r for r in statuses(plan, subs, Monitor(plan).read_results(), snapshot, now=now)}
        assert rows[with_result.cell_id].state == "failed" and rows[with_result.cell_id].elapsed_s == 60.0
        assert rows[without.cell_id].state == "failed" and rows[without.cell_id].elapsed_s == 90.0


def test_a_timeout_names_the_limit_its_job_ran_under(tmp_path):
    """A packed task (`submit --pack 3`) or `--time-min` asks for another limit than the array's: the
    cell's detail said the plan's 60 min where its job had 180."""
    plan = build_plan(load_study("quick"), tmp_path, tmp_path)
    first = plan.cells[0]
    sub = Submission(first.cell_id, "slurm", "17_0", "a", "t", time_min=180)
    snapshot = Snapshot({"17_0": JobState("17_0", "TIMEOUT", 10800.0, "n1")})
    (row,) = [r for r in statuses(plan, {first.cell_id: sub}, {}, snapshot) if r.cell_id == first.cell_id]
    assert row.state == "timeout" and "its 180 min limit" in row.detail and "--time-min 360" in row.detail


def test_a_cell_waiting_inside_a_running_packed_job_is_queued_not_running(tmp_path):
    """A job of three cells runs them one after another: the ones whose header is not in its log yet
    wait (they showed as running for the whole job)."""
    from jobs.core.layout import cell_log_header

    plan = build_plan(load_study("quick"), tmp_path, tmp_path)
    cells = plan.cells[:3]
    log = tmp_path / "logs" / "77_0_log.out"
    log.parent.mkdir()
    log.write_text(cell_log_header(cells[0].cell_id, 0, 3, cells[0].label) + "\n[x] epoch 1/2\n")
    subs = {c.cell_id: Submission(c.cell_id, "slurm", "77_0", "a", "t", log_out="logs/77_0_log.out") for c in cells}
    snapshot = Snapshot({"77_0": JobState("77_0", "RUNNING", 30.0, "n1")})
    rows = {r.cell_id: r for r in statuses(plan, subs, {}, snapshot)}
    assert [rows[c.cell_id].state for c in cells] == ["running", "queued", "queued"]
    assert rows[cells[1].cell_id].detail == "waits in job 77_0 for the cells before it to end"
    assert rows[cells[1].cell_id].elapsed_s is None
    with log.open("a") as f:
        f.write(cell_log_header(cells[1].cell_id, 1, 3, cells[1].label) + "\n")
    rows = {r.cell_id: r for r in statuses(plan, subs, {}, snapshot)}
    assert [rows[c.cell_id].state for c in cells] == ["running", "running", "queued"]
    log.unlink()  # no log to tell by: as the scheduler says
    assert {r.state for r in statuses(plan, subs, {}, snapshot) if r.cell_id in subs} == {"running"}
