"""A cell's state, the closed set every verb shows and acts on, and SLURM's words mapped to it once.

A result file's own status (ok, oom, failed, timeout) is jobs.core.result.Status; a cell's state
adds what the queue says (queued, pending, running, cancelled, ...).
"""
from __future__ import annotations

from enum import StrEnum


class CellState(StrEnum):
    NOT_SUBMITTED = "not submitted"
    QUEUED = "queued"  # waiting in the local queue, or an interrupted submit's sbatch may still land
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    OOM = "oom"  # the batch did not fit: an answer, not a failure
    FAILED = "failed"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"  # the local executor did not start it: this machine cannot run it
    UNKNOWN = "unknown"

    @property
    def is_live(self) -> bool:
        """A job for it is waiting or running."""
        return self in (CellState.QUEUED, CellState.PENDING, CellState.RUNNING)

    @property
    def is_final(self) -> bool:
        """It has its answer; nothing runs it again."""
        return self in (CellState.DONE, CellState.OOM)

    @property
    def is_retryable(self) -> bool:
        """It ended without an answer: `submit --retry-failed` queues it again."""
        return self in (CellState.FAILED, CellState.TIMEOUT, CellState.CANCELLED)

    @property
    def is_terminal(self) -> bool:
        """Nothing more happens to it until someone submits it again."""
        return self.is_final or self.is_retryable or self is CellState.SKIPPED


# SLURM's job states (squeue %T, sacct State); a word not listed reads as unknown.
# An ended job's cell has no good result (a good result wins before SLURM is asked).
SLURM_STATES: dict[str, CellState] = {
    **dict.fromkeys(("PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD",
                     "SUSPENDED"), CellState.PENDING),
    **dict.fromkeys(("RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING", "RESIZING"), CellState.RUNNING),
    **dict.fromkeys(("COMPLETED", "FAILED", "NODE_FAIL", "BOOT_FAIL", "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED",
                     "PREEMPTED"), CellState.FAILED),
    "TIMEOUT": CellState.TIMEOUT, "DEADLINE": CellState.TIMEOUT, "CANCELLED": CellState.CANCELLED,
}
LIVE_WORDS = frozenset(word for word, state in SLURM_STATES.items() if state.is_live)
ENDED_WORDS = frozenset(word for word, state in SLURM_STATES.items() if not state.is_live)
