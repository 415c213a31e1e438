"""A job queued before the orchestrator was grouped by role (issue 39) still runs after it: its
call, as submitit pickled it then (tests/unit/golden/cellrun-*-before-issue-39.pkl, written by
that code), unpickles and runs its cell; a local job's ranks still hold the machine's cell lock."""
from __future__ import annotations

import fcntl
from pathlib import Path

import pytest
from submitit.helpers import DelayedSubmission

import jobs.core.kinds

GOLDEN = Path(__file__).parent / "golden"


def lock_is_held(path: str) -> bool:
    with open(path, "a") as other:
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False


@pytest.mark.parametrize("executor", ["slurm", "local"])
def test_a_call_pickled_before_the_move_runs_its_cell_and_requeues_as_itself(executor, tmp_path, monkeypatch):
    ran = []

    def run_cell(cell, out_dir, data_dir):
        ran.append((cell.cell_id, out_dir, data_dir, lock_is_held(lock) if lock else None))
        return "done"

    monkeypatch.setattr(jobs.core.kinds, "run_cell", run_cell)
    delayed = DelayedSubmission.load(GOLDEN / f"cellrun-{executor}-before-issue-39.pkl")
    call = delayed.function
    lock = str(tmp_path / "cell.lock") if executor == "local" else ""
    if lock:
        assert call.lock == "/tmp/orchestrator-lock/cell.lock"  # as pickled: this machine's lock dir then
        call.lock = lock
    assert delayed.result() == "done"
    assert ran == [("435748d79bc0", Path("/results/quick"), Path("/data"), True if lock else None)]
    again = call.checkpoint(*delayed.args)  # SIGUSR2: submitit requeues the same call
    assert again.function is call and again.args == delayed.args
