"""The local executor's jobs: each cell started through submitit's local executor, every rank
holding this machine's cell lock while it runs (machine_lock.py), each task forked from the warm
start server where there is one (warm_start.py)."""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import submitit

from jobs.core.cell import StudyCell
from jobs.core.phases import LAUNCHED_AT_ENV
from orchestrator.local.machine_lock import running_cell
from orchestrator.local.warm_start import python_for
from orchestrator.plan.plan import Plan
from orchestrator.slurm.submitit_adapter import CellRun
from results_format.registry import Submission, now_iso


class LocalCellRun(CellRun):
    """A CellRun off-cluster: every rank holds this machine's cell lock while it runs (`lock`: its
    path; "" for none, as in a SLURM array's call pickled before issue 39)."""

    def __init__(self, lock: str = "") -> None:
        self.lock = lock

    def __call__(self, cell: StudyCell, out_dir: str, data_dir: str) -> str:
        with running_cell(self.lock) if self.lock else contextlib.nullcontext():
            return super().__call__(cell, out_dir, data_dir)


@contextlib.contextmanager
def launched_now() -> Iterator[None]:
    """The jobs started inside learn when: their phases then count from this moment (their launch_s)."""
    before = os.environ.get(LAUNCHED_AT_ENV)
    os.environ[LAUNCHED_AT_ENV] = repr(time.time())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(LAUNCHED_AT_ENV, None)
        else:
            os.environ[LAUNCHED_AT_ENV] = before


def start_local_job(plan: Plan, cell: StudyCell, queue_pid: int, lock: Path, warm: Optional[str] = None):
    """Start one cell through submitit's local executor; a multi-node cell runs all its ranks here,
    each holding the machine's cell `lock` while it runs. `warm`: the warm start server that forks
    each task (orchestrator.local.warm_start), else each starts its own interpreter."""
    executor = submitit.LocalExecutor(folder=plan.log_dir, python=python_for(warm))
    executor.update_parameters(
        tasks_per_node=cell.nodes * cell.tasks_per_node, gpus_per_node=cell.gpus,
        timeout_min=plan.cluster.time_min,
    )
    with launched_now():
        job = executor.submit(LocalCellRun(str(lock)), cell, plan.results_dir, plan.data_dir)
    sub = Submission(
        cell.cell_id, "local", job.job_id, plan.array_of(cell.cell_id).name, now_iso(),
        plan.recorded(job.paths.stdout), plan.recorded(job.paths.stderr), queue_pid, time_min=plan.cluster.time_min,
    )
    return job, sub
