"""Off-cluster queue: a background process that runs the given cells one after another.

One at a time, because cells sharing a machine would time each other (and its GPUs): even
beside another queue's cells, or a killed queue's job still running (machine_lock.py).
`submit` starts it detached, so it outlives the shell; it records each job it starts.

    python -m orchestrator.local.queue RESULTS_DIR CELL_ID...
"""
from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path

from jobs.core.kinds import kind_named
from jobs.core.regular_file import open_regular
from jobs.core.result import read_good_result
from results_format import registry
from orchestrator.local import machine_lock
from orchestrator.plan.plan import read_plan
from results_format.registry import Submission
from orchestrator.local.warm_start import warm_server

QUEUE_LOG = "local-queue.log"  # in the plan's log dir
POLL_S = 0.1  # a look at the job's controller process: cheap


def queue_cells(results_dir: Path, cell_ids: list[str]) -> None:
    plan = read_plan(results_dir)
    from orchestrator.local.launch import start_local_job  # submitit: only in this process

    pid = os.getpid()
    registry.append_entries(results_dir, [
        Submission(cid, "local", None, plan.array_of(cid).name, registry.now_iso(), queue_pid=pid) for cid in cell_ids
    ])
    print(f"queued {len(cell_ids)}", flush=True)  # `submit` waits for this line
    _detach_stdout(Path(plan.log_dir) / QUEUE_LOG)
    with machine_lock.queue_turn(_say) as turn, warm_server(job_modules(plan, cell_ids), _say) as warm:
        for cid in cell_ids:
            if read_good_result(results_dir, cid) is not None:
                continue
            machine_lock.wait_until_idle(turn, functools.partial(_say, cell_id=cid))
            job, sub = start_local_job(plan, plan.cell(cid), pid, machine_lock.cell_lock_path(), warm.started())
            machine_lock.record_start(turn, job.job_id)
            registry.append_entries(results_dir, [sub])
            print(f"{cid}: started local job {job.job_id}", flush=True)
            while not job.done():
                time.sleep(POLL_S)
            print(f"{cid}: ended ({job.state})", flush=True)


def job_modules(plan, cell_ids: list[str]) -> list[str]:
    """What every task of these cells imports before its first line: submitit's, and each kind's run."""
    runs = {kind_named(plan.cell(cid).kind).run.split(":")[0] for cid in cell_ids}
    return ["orchestrator.local.launch", "submitit.core.submission", *sorted(runs)]


def _say(text: str, cell_id: str = "") -> None:
    print(f"{cell_id}: {text}" if cell_id else text, flush=True)


def _detach_stdout(log: Path) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open_regular(log, "local queue log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW) as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)


if __name__ == "__main__":
    queue_cells(Path(sys.argv[1]), sys.argv[2:])
