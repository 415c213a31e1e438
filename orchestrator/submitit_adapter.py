"""Where a job queued before the orchestrator was grouped by role (issue 39) finds its call:
submitit pickled it as orchestrator.submitit_adapter.CellRun (a SLURM array task's without a
lock, a local job's with this machine's cell lock), and the job unpickles it by that path.
LocalCellRun runs both as that CellRun did. Nothing new is pickled under this path."""
from orchestrator.local.launch import LocalCellRun as CellRun

__all__ = ["CellRun"]
