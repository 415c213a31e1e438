"""SLURM job arrays through submitit, and the call every job runs (CellRun); submitit is talked
to here and in orchestrator.local.launch (the local executor's jobs) only.

On SLURM, submitit pickles each cell's call and sbatch runs it; the sbatch text is ours
(templates/sbatch.sh.j2), the very text `plan` showed. submitit 1.5's private hooks are used
for that: _make_submission_file_text and the array path.

Each call is a CellRun, a submitit Checkpointable: when SLURM sends SIGUSR2 (the time limit is
near, or the job is being preempted) submitit calls its checkpoint(), which hands back the same
call, and requeues the job; jobs.train.run then resumes from <results>/checkpoints/<cell>.pt.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import secrets
from pathlib import Path
from typing import Any, Optional
from collections.abc import Callable

import submitit
from submitit.core import utils as submitit_utils
from submitit.helpers import Checkpointable, DelayedSubmission
from submitit.slurm.slurm import SlurmJob

from jobs.core.cell import StudyCell
from orchestrator.errors import SchedulerError
from results_format.text import last_line
from orchestrator.plan.cluster import packing
from orchestrator.plan.plan import ArrayPlan, Plan
from results_format.registry import Submission, now_iso
from orchestrator.slurm.sbatch import job_name, render_sbatch
from orchestrator.slurm.slurm_client import scheduler_answer

MAX_TIMEOUT_REQUEUES = 3  # submitit requeues a job that hits its time limit at most this often


class CellRun(Checkpointable):
    """The cell's kind's run(cell, out_dir, data_dir), requeued by submitit on timeout or preemption
    (off-cluster: orchestrator.local.launch.LocalCellRun)."""

    def __call__(self, cell: StudyCell, out_dir: str, data_dir: str) -> str:
        from jobs.core.kinds import run_cell  # imports the job's module, and torch, only in the job

        return run_cell(cell, Path(out_dir), Path(data_dir))

    def checkpoint(self, cell: StudyCell, out_dir: str, data_dir: str) -> DelayedSubmission:
        """The same call again: the run's own per-epoch checkpoint holds the state."""
        return DelayedSubmission(self, cell, out_dir, data_dir)


class CellsRun(Checkpointable):
    """Cells of one shape run one after another in one process (each rank's), the set-up that carries
    no state between them paid once (jobs.runtime.reuse): a packed array task. A cell with a good result
    is skipped, so a task requeued after its time limit or a preemption resumes at its first cell
    without one (and that cell at its last checkpoint). Each cell keeps its own result and failure;
    the task fails if any of its cells did."""

    def __call__(self, cells: list[StudyCell], out_dir: str, data_dir: str) -> list[str]:
        from jobs.runtime.reuse import run_cells  # imports torch, and the job's modules, only in the job

        return run_cells(cells, Path(out_dir), Path(data_dir))

    def checkpoint(self, cells: list[StudyCell], out_dir: str, data_dir: str) -> DelayedSubmission:
        """The same call again: the cells' results and checkpoints hold the state."""
        return DelayedSubmission(self, cells, out_dir, data_dir)


class PlannedSlurmExecutor(submitit.SlurmExecutor):
    """submitit's executor, with our sbatch text, always as an array (ids read ARRAY_TASK).

    submitit pickles each call under a random name and renames it to <job id>_<task>_submitted.pkl
    once sbatch has answered with the id. A submit killed after sbatch, or an sbatch that timed
    out after queuing the array, never renames it, and the job gives up after 60 s. So each call
    is pickled under the job's name (which carries the submission token) before sbatch runs, and
    the job links that file to the name submitit looks for (templates/sbatch.sh.j2): a queued job
    finds its call whatever became of the submit, and recovery needs to do nothing to the files.
    """

    def __init__(self, folder: Path, job_name: str, render: Callable[[int], str]) -> None:
        super().__init__(folder, max_num_timeout=MAX_TIMEOUT_REQUEUES)
        self._job_name = job_name
        self._render = render
        self._count = 0
        self.pickles: list[Path] = []  # written before sbatch; removed by the caller if it refuses

    def _make_submission_file_text(self, command: str, uid: str) -> str:
        return self._render(self._count)

    def _internal_process_submissions(self, delayed):
        folder = submitit_utils.JobPaths.get_first_id_independent_folder(self.folder)
        folder.mkdir(parents=True, exist_ok=True)
        for index, submission in enumerate(delayed):
            path = folder / call_pickle_name(self._job_name, index)
            submission.set_timeout(self.parameters.get("time", 5), self.max_num_timeout)
            submission.dump(path)
            self.pickles.append(path)
        self._count = len(delayed)
        first = self._sbatch(folder)
        tasks = list(range(self._num_tasks()))
        return [SlurmJob(folder=self.folder, job_id=f"{first}_{i}", tasks=tasks) for i in range(len(delayed))]

    def _sbatch(self, folder: Path) -> str:
        """sbatch our text (kept as <job name>_submission.sh); the array's job id. Not submitit's
        _submit_command: it fails on an answer that is not UTF-8 (a site's warning in Latin-1)
        after SLURM has queued the array. No timeout: sbatch's own says it timed out."""
        script = folder / f"{self._job_name}_submission.sh"
        script.write_text(self._render(self._count))
        answer = scheduler_answer(["sbatch", str(script)], None)
        if answer.returncode != 0:
            raise submitit_utils.FailedJobError(answer.stderr.strip() or f"sbatch exited {answer.returncode}")
        return self._get_job_id_from_submission_command(answer.stdout)


def call_pickle_name(job_name: str, index: int) -> str:
    """Where array task `index` of the job named `job_name` finds its pickled call (the sbatch
    text links <job id>_<index>_submitted.pkl to it)."""
    return f"{job_name}_{index}_submitted.pkl"


def timed_out(message: str) -> bool:
    """sbatch gave up waiting for slurmctld, which may still have queued the array."""
    return "timed out" in message.lower()


def submit_slurm_array(plan: Plan, array: ArrayPlan, cells: list[StudyCell], token: str = "",
                       time_min: Optional[int] = None, cell_ids: Optional[list[str]] = None,
                       pack: int = 1) -> list[Submission]:
    """One sbatch for these cells of one array; returns what to record, a Submission per cell.
    `time_min` overrides the array's time limit of a cell for this submission; `cell_ids` are the
    cells' ids. `pack` > 1: each task runs up to `pack` cells one after another (CellsRun), task i
    cells i*pack..., with `pack` times the time limit (at most [cluster] max_time_min)."""
    shape = array.shape_for(time_min)
    packed = packing(len(cells), pack, shape.time_min, plan.cluster.max_time_min)
    shape = dataclasses.replace(shape, time_min=packed.time_min)
    tasks = [cells[i:i + packed.cells_per_task] for i in range(0, len(cells), packed.cells_per_task)]
    token = token or secrets.token_hex(4)  # the pickles' names must be unique to this sbatch
    executor = PlannedSlurmExecutor(
        plan.log_dir, job_name(plan, array, token), lambda count: render_sbatch(plan, array, count, token=token,
                                                                                shape=shape))
    executor.update_parameters(time=shape.time_min, nodes=shape.nodes, ntasks_per_node=shape.tasks_per_node)
    calls: list[tuple[Callable[..., Any], Any]] = ([(CellsRun(), task) for task in tasks] if pack > 1
                                                   else [(CellRun(), cell) for cell in cells])
    try:  # submitit prints sbatch's stderr on failure; our one-line error says it instead
        with contextlib.redirect_stderr(io.StringIO()), executor.batch():
            jobs = [executor.submit(run, what, plan.results_dir, plan.data_dir) for run, what in calls]
    except Exception as exc:  # sbatch's refusal: its own words say why
        message = last_line(str(exc)) or "sbatch failed"
        if timed_out(message):  # it may have queued the array: its jobs need their pickles
            raise SchedulerError(f"sbatch of array {array.name} timed out ({message}); SLURM may have queued it "
                                 "anyway: `status` finds its jobs, and `submit` again queues only what is missing"
                                 ) from exc
        for path in executor.pickles:
            path.unlink(missing_ok=True)
        raise SchedulerError(f"SLURM refused array {array.name}: {message}") from exc
    at = now_iso()
    ids = cell_ids or [c.cell_id for c in cells]
    job_of = [jobs[i // packed.cells_per_task] if pack > 1 else jobs[i] for i in range(len(ids))]
    return [
        Submission(cell_id, "slurm", job.job_id, array.name, at, plan.recorded(job.paths.stdout),
                   plan.recorded(job.paths.stderr), token=token, time_min=shape.time_min)
        for cell_id, job in zip(ids, job_of, strict=True)
    ]
