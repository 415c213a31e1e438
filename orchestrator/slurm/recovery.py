"""Finish what an interrupted `submit` started (pure).

An Intent without its Submission lines means the submit died around its sbatch. The jobs, if
sbatch queued them, carry the intent's token in their name: found in squeue/sacct, their cells
are recorded as submitted (array task i runs the intent's i-th cell; packed, its cells i*pack to
i*pack+pack-1). Found nowhere once the
grace period is over, the intent is abandoned and its cells may be queued again. Younger than
that, an orphaned sbatch may still be talking to slurmctld: the cells count as in flight.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from results_format.registry import Abandoned, Intent, Submission
from orchestrator.slurm.slurm_client import JobState

INTENT_GRACE_S = 15.0


@dataclass
class Recovery:
    submissions: list[Submission] = field(default_factory=list)  # found: record them
    abandoned: list[Abandoned] = field(default_factory=list)  # never queued: record that
    in_flight: list[Intent] = field(default_factory=list)  # too young to tell

    @property
    def to_record(self) -> list:
        return [*self.submissions, *self.abandoned]


def recover(intents: list[Intent], confirmed: set[tuple[str, str]], jobs: dict[str, JobState],
            now: dt.datetime) -> Recovery:
    """`confirmed`: (token, cell_id) pairs that Submission lines already record."""
    by_name: dict[str, list[str]] = {}
    for job in jobs.values():
        by_name.setdefault(job.name, []).append(job.job_id)
    out = Recovery()
    for intent in intents:
        found = by_name.get(intent.job_name)
        if found:
            array_id = found[0].split("_")[0]
            for index, cell_id in enumerate(intent.cell_ids):
                if (intent.token, cell_id) not in confirmed:
                    out.submissions.append(submission_of(intent, array_id, index // max(1, intent.pack or 1), cell_id))
        elif (now - dt.datetime.fromisoformat(intent.created_at)).total_seconds() < INTENT_GRACE_S:
            out.in_flight.append(intent)
        else:
            out.abandoned.append(Abandoned(intent.token, now.isoformat(timespec="seconds"),
                                           "no job in squeue or sacct carries its token"))
    return out


def submission_of(intent: Intent, array_id: str, task: int, cell_id: str) -> Submission:
    job_id = f"{array_id}_{task}"
    log = Path(intent.log_dir)
    return Submission(cell_id, "slurm", job_id, intent.array, intent.created_at,
                      str(log / f"{job_id}_0_log.out"), str(log / f"{job_id}_0_log.err"), token=intent.token)
