"""The local executor's jobs: a run of consecutive cells of one shape started through submitit's
local executor on the GPUs the queue placed it on (CUDA_VISIBLE_DEVICES) and its share of the CPU
cores (affinity), one after another in one process (CellsRun: set-up paid once), every rank
holding those GPUs' locks while it runs (machine_lock.py), each task forked from the warm start
server where there is one (warm_start.py)."""
from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from typing import Optional

import submitit

from jobs.core.beside import BESIDE_ENV
from jobs.core.cell import StudyCell
from jobs.core.phases import LAUNCHED_AT_ENV
from orchestrator.local.machine_lock import running_cell, slot_lock_path
from orchestrator.local.placement import WHOLE
from orchestrator.local.warm_start import python_for
from orchestrator.plan.plan import Plan
from orchestrator.slurm.submitit_adapter import CellRun, CellsRun
from results_format.registry import Submission, now_iso


@contextlib.contextmanager
def on_slots(locks: tuple[str, ...], cores: tuple[int, ...]) -> Iterator[None]:
    """Every rank holds its GPUs' locks while it runs, on its share of the cores (() for any)."""
    if cores:
        os.sched_setaffinity(0, cores)  # before torch sizes its threads; loader workers inherit it
    with running_cell(locks):
        yield


class LocalCellRun(CellRun):
    """A CellRun off-cluster, as pickled before issue 46 (a job started by an older queue runs on):
    `lock`, its one lock ("" for none, as in a SLURM array's call pickled before issue 39)."""

    def __call__(self, cell: StudyCell, out_dir: str, data_dir: str) -> str:
        lock = getattr(self, "lock", "")
        with on_slots((lock,) if lock else (), ()):
            return super().__call__(cell, out_dir, data_dir)


class LocalCellsRun(CellsRun):
    """A CellsRun off-cluster: the cells of one shape placed on the same GPUs, one after another in
    one process (their set-up paid once), holding those GPUs' `locks`, on their share of the `cores`."""

    def __init__(self, locks: tuple[str, ...], cores: tuple[int, ...] = ()) -> None:
        self.locks, self.cores = locks, cores

    def __call__(self, cells: list[StudyCell], out_dir: str, data_dir: str) -> list[str]:
        with on_slots(self.locks, self.cores):
            return super().__call__(cells, out_dir, data_dir)


@contextlib.contextmanager
def job_environment(**values: str) -> Iterator[None]:
    """The jobs started inside see `values` in their environment (submitit copies ours)."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def start_local_job(plan: Plan, cells: list[StudyCell], queue_pid: int, placed: tuple[int, ...],
                    slots: tuple[int, ...], cores: tuple[int, ...] = (), warm: Optional[str] = None):
    """Start cells of one shape, one after another, as one job through submitit's local executor on
    the `placed` slots of the machine's `slots` (GPU indices, or WHOLE), its ranks on `cores`; a
    multi-node cell runs all its ranks here. `warm`: the warm start server that forks each task
    (orchestrator.local.warm_start), else each starts its own interpreter. Its phases count from
    now (their launch_s); each rank learns its GPUs and the machine's locks, to record what ran
    beside each cell (jobs.core.beside). Returns the job and each cell's Submission."""
    executor = submitit.LocalExecutor(folder=plan.log_dir, python=python_for(warm))
    shape = cells[0]
    gpus = [s for s in placed if s != WHOLE][:max(1, shape.gpus)]  # a cell run alone holds more than it uses
    executor.update_parameters(
        tasks_per_node=shape.nodes * shape.tasks_per_node, gpus_per_node=len(gpus) or shape.gpus,
        timeout_min=plan.cluster.time_min * len(cells), **({"visible_gpus": gpus} if gpus else {}),
    )
    beside = json.dumps({"mine": placed, "gpus": gpus, "locks": {s: str(slot_lock_path(s)) for s in slots}})
    with job_environment(**{LAUNCHED_AT_ENV: repr(time.time()), BESIDE_ENV: beside}):
        job = executor.submit(LocalCellsRun(tuple(str(slot_lock_path(s)) for s in placed), cores),
                              cells, plan.results_dir, plan.data_dir)
    subs = [Submission(cell.cell_id, "local", job.job_id, plan.array_of(cell.cell_id).name, now_iso(),
                       plan.recorded(job.paths.stdout), plan.recorded(job.paths.stderr), queue_pid,
                       time_min=plan.cluster.time_min * len(cells)) for cell in cells]
    return job, subs
