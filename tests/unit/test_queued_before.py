"""A job queued before the orchestrator was grouped by role (issue 39) still runs after it: its
call, as submitit pickled it then (tests/unit/golden/cellrun-*-before-issue-39.pkl, written by
that code), unpickles and runs its cell; a local job's ranks still hold the machine's cell lock;
its local queue, started as `python -m orchestrator.local_queue`, is still known by its command line."""
from __future__ import annotations

import datetime as dt
import fcntl
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import pytest
from submitit.helpers import DelayedSubmission

import jobs.core.kinds
from orchestrator.local.processes import QUEUE_MARKERS, local_snapshot, pid_alive
from results_format.registry import Submission

GOLDEN = Path(__file__).parent / "golden"
ROOT = Path(__file__).resolve().parents[2]


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
    alias = importlib.util.find_spec("orchestrator.submitit_adapter")
    assert alias is not None and Path(alias.origin).parents[1] == ROOT, alias  # this code's, not an installed copy's
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


@pytest.mark.parametrize("module", ["orchestrator.local_queue", "orchestrator.local.queue"])
def test_a_local_queue_started_by_either_version_is_seen_waiting_and_can_be_stopped(module):
    """`status` knows a queue by its module in its command line: one started before the move runs on."""
    queue = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "-m", module, "runs/x", "abc"])
    try:
        sub = Submission("abc", "local", None, "n1-g1-t1", "2026-01-01T00:00:00+00:00", queue_pid=queue.pid)
        deadline = time.monotonic() + 10
        while not pid_alive(queue.pid, QUEUE_MARKERS) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the interpreter has its command line
        assert local_snapshot([sub], dt.datetime.now(dt.UTC))[f"queue-{queue.pid}"].state == "PENDING"
    finally:
        queue.kill()
        queue.wait()
    assert local_snapshot([sub], dt.datetime.now(dt.UTC))[f"queue-{queue.pid}"].state == "LOST"
