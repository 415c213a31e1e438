"""Queue every cell that has neither a good result nor a live job, and return.

On SLURM: one sbatch per array. Off-cluster: one detached local queue process.
The whole decision and submission holds the results dir's submit lock.
"""
from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from orchestrator import registry, scheduler, status
from orchestrator.errors import SchedulerError, UserError
from orchestrator.plan import Plan

RESUBMIT = ("not submitted", "failed", "timeout", "cancelled")
EXECUTORS = ("auto", "slurm", "local")


@dataclass(frozen=True)
class SubmitReport:
    executor: str
    submitted: tuple[str, ...]  # cell ids
    skipped: int  # cells done, oom or still live


def pick_executor(choice: str) -> str:
    if choice not in EXECUTORS:
        raise UserError(f"--executor must be one of {list(EXECUTORS)}, got {choice!r}")
    if choice == "auto":
        return "slurm" if scheduler.on_slurm() else "local"
    if choice == "slurm" and not scheduler.on_slurm():
        raise UserError("--executor slurm: no sbatch on PATH; run on a SLURM login node or use --executor local")
    return choice


def submit(plan: Plan, executor: str = "auto") -> SubmitReport:
    executor = pick_executor(executor)
    results_dir = Path(plan.results_dir)
    plan.log_dir.mkdir(parents=True, exist_ok=True)
    with registry.submit_lock(results_dir):
        rows, _ = status.current(plan)
        todo = [row.cell_id for row in rows if row.state in RESUBMIT]
        if todo and executor == "slurm":
            for array in plan.arrays:
                cells = [plan.cell(cid) for cid in todo if cid in array.cell_ids]
                if cells:
                    from orchestrator.backends import submit_slurm_array  # submitit, torch: only when needed

                    registry.append(results_dir, submit_slurm_array(plan, array, cells))
        elif todo:
            start_local_queue(plan, todo)
    return SubmitReport(executor, tuple(todo), len(rows) - len(todo))


def start_local_queue(plan: Plan, cell_ids: list[str]) -> None:
    """Start the queue detached (its own session: it outlives this shell) and wait until it
    has recorded its cells, so that a `status` or `submit` right after sees them."""
    log = open(plan.log_dir / "local-queue.log", "a")
    with log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "orchestrator.local_queue", plan.results_dir, *cell_ids],
            stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True, start_new_session=True,
        )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("queued"):
        proc.wait()
        raise SchedulerError(f"the local queue did not start (exit {proc.returncode}); see {log.name}")
