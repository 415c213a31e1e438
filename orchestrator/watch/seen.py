"""What a status refresh saw of a study's jobs: Seen, one refresh's whole view (the ledger of
GPU-hours is built from it: orchestrator.budget), and Accounts, sacct's rows of the jobs' runs kept
across refreshes."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from orchestrator.slurm.slurm_client import JobState
from results_format.registry import Submission
from results_format.states import ENDED_WORDS


@dataclass(frozen=True)
class Seen:
    """What one status refresh saw (status.Monitor.seen): every submission in the registry (and
    those just recovered), the cells' results (a ResultDigest, or a Result, or the error reading it), each
    job's state (squeue, sacct, local processes) and sacct's rows of its runs, by job id."""

    submissions: tuple[Submission, ...] = ()
    results: Mapping[str, object] = field(default_factory=dict)
    jobs: Mapping[str, JobState] = field(default_factory=dict)
    runs: Mapping[str, tuple[JobState, ...]] = field(default_factory=dict)


class Accounts:
    """sacct's rows of a study's jobs, by job id, kept across refreshes: a job whose last run has
    ended is settled (its rows never change again) and is not asked about again."""

    def __init__(self) -> None:
        self.runs: dict[str, tuple[JobState, ...]] = {}

    def wanted(self, submissions: Iterable[Submission]) -> dict[str, str]:
        """The SLURM job ids (with their tokens) whose runs are not all known yet."""
        return {s.job_id: s.token or "" for s in submissions
                if s.executor == "slurm" and s.job_id and not self.settled(s.job_id)}

    def settled(self, job_id: str) -> bool:
        runs = self.runs.get(job_id, ())
        return bool(runs) and runs[-1].state in ENDED_WORDS

    def record(self, rows: Iterable[JobState]) -> None:
        """sacct's answer: the whole list of runs of each job it names."""
        fresh: dict[str, list[JobState]] = {}
        for row in rows:
            fresh.setdefault(row.job_id, []).append(row)
        self.runs.update({job_id: tuple(runs) for job_id, runs in fresh.items()})
