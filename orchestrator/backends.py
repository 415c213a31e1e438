"""The only module that talks to submitit: SLURM job arrays, and local jobs off-cluster.

On SLURM, submitit pickles each call of jobs.train.run and sbatch runs it; the sbatch
text is ours (templates/sbatch.sh.j2), the very text `plan` showed. submitit 1.5's
private hooks are used for that: _make_submission_file_text and the array path.
"""
from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path
from typing import Callable

import submitit
from submitit.core import utils as submitit_utils
from submitit.slurm.slurm import SlurmJob

from jobs.cell import Cell
from jobs.train import run as run_cell
from orchestrator.errors import SchedulerError
from orchestrator.plan import ArrayPlan, Plan
from orchestrator.registry import Submission
from orchestrator.sbatch import render_sbatch


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


class PlannedSlurmExecutor(submitit.SlurmExecutor):
    """submitit's executor, with our sbatch text, always as an array (ids read ARRAY_TASK)."""

    def __init__(self, folder: Path, render: Callable[[int, str], str]) -> None:
        super().__init__(folder)
        self._render = render
        self._count = 0

    def _make_submission_file_text(self, command: str, uid: str) -> str:
        return self._render(self._count, command)

    def _internal_process_submissions(self, delayed):
        folder = submitit_utils.JobPaths.get_first_id_independent_folder(self.folder)
        folder.mkdir(parents=True, exist_ok=True)
        pickles = []
        for submission in delayed:
            path = folder / f"{uuid.uuid4().hex}.pkl"
            submission.set_timeout(self.parameters.get("time", 5), self.max_num_timeout)
            submission.dump(path)
            pickles.append(path)
        self._count = len(delayed)
        first = self._submit_command(self._submitit_command_str)
        tasks = list(range(first.num_tasks))
        jobs = [SlurmJob(folder=self.folder, job_id=f"{first.job_id}_{i}", tasks=tasks) for i in range(len(delayed))]
        for job, path in zip(jobs, pickles):
            job.paths.move_temporary_file(path, "submitted_pickle")
        return jobs


def submit_slurm_array(plan: Plan, array: ArrayPlan, cells: list[Cell]) -> list[Submission]:
    """One sbatch for these cells of one array; returns what to record."""
    executor = PlannedSlurmExecutor(plan.log_dir, lambda count, command: render_sbatch(plan, array, count, command))
    shape = array.shape
    executor.update_parameters(time=shape.time_min, nodes=shape.nodes, ntasks_per_node=shape.tasks_per_node)
    try:
        with executor.batch():
            jobs = [executor.submit(run_cell, cell, plan.results_dir, plan.data_dir) for cell in cells]
    except Exception as exc:  # sbatch's refusal: its own words say why
        message = (str(exc).strip().splitlines() or ["sbatch failed"])[-1]
        raise SchedulerError(f"SLURM refused array {array.name}: {message}") from exc
    return [
        Submission(cell.cell_id, "slurm", job.job_id, array.name, now(), str(job.paths.stdout), str(job.paths.stderr))
        for cell, job in zip(cells, jobs)
    ]


def start_local_job(plan: Plan, cell: Cell, queue_pid: int):
    """Start one cell through submitit's local executor; a multi-node cell runs all its ranks here."""
    executor = submitit.LocalExecutor(folder=plan.log_dir)
    executor.update_parameters(
        tasks_per_node=cell.nodes * cell.tasks_per_node, gpus_per_node=cell.gpus,
        timeout_min=plan.cluster.time_min,
    )
    job = executor.submit(run_cell, cell, plan.results_dir, plan.data_dir)
    sub = Submission(
        cell.cell_id, "local", job.job_id, plan.array_of(cell.cell_id).name, now(),
        str(job.paths.stdout), str(job.paths.stderr), queue_pid,
    )
    return job, sub
