"""Cancel cells' live jobs: one scancel for those on SLURM, a signal for local ones."""
from __future__ import annotations

import os
import signal
from pathlib import Path
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

from results_format import registry
from orchestrator.local.processes import LOCAL_JOB_MARKERS, QUEUE_MARKERS, pid_alive
from orchestrator.plan.plan import Plan
from results_format.registry import Cancelled, Submission
from orchestrator.slurm.slurm_client import JobState, SlurmClient
from results_format.states import LIVE_WORDS
from orchestrator.watch.status import Monitor


@dataclass(frozen=True)
class CancelReport:
    cancelled: list[str]  # the cells whose live jobs were cancelled
    untied: list[tuple[str, str]]  # (cell, job id) of live SLURM jobs nothing ties to this study: left alone


def cancel(plan: Plan, cell_ids: list[str], client: Optional[SlurmClient] = None) -> CancelReport:
    """Cancel the live jobs of these cells (one scancel for all), those tied to this study only (tied)."""
    results_dir = Path(plan.results_dir)
    client = client or SlurmClient()
    with registry.submit_lock(results_dir):
        monitor = Monitor(plan, client)
        report = monitor.refresh(locked=True)
        subs = monitor.subs
        live = cancellable(report.rows, subs, set(cell_ids))
        untied = [(c, subs[c].job_id or "") for c in live
                  if subs[c].executor == "slurm" and not tied(plan, subs[c], monitor.seen.jobs)]
        live = [c for c in live if c not in {cell for cell, _ in untied}]
        slurm = [job for c in live if subs[c].executor == "slurm" and (job := subs[c].job_id)]
        client.cancel(slurm)
        local = [c for c in live if subs[c].executor == "local"]
        queued_locally = {r.cell_id for r in report.rows if r.state.is_live and r.cell_id in subs
                          and subs[r.cell_id].executor == "local"}
        for cid in local:  # the queue itself only when all its cells go: it runs them one by one
            _stop_local(subs[cid], stop_queue=queued_locally <= set(local))
        job_ids = tuple(slurm + [subs[c].job_id or f"queue-{subs[c].queue_pid}" for c in local])
        if job_ids:
            registry.append_entries(results_dir, [Cancelled(job_ids, registry.now_iso())])
    return CancelReport(live, untied)


def tied(plan: Plan, sub: Submission, jobs: Mapping[str, JobState]) -> bool:
    """A SLURM job this study may cancel: the name SLURM holds for it is this study's, with the token
    of its registry line (study-array-token). A line without one (anyone who can append to a shared
    registry could point a cell at any job id) ties nothing."""
    job = jobs.get(sub.job_id or "")
    return bool(sub.token) and job is not None and job.name == f"{plan.study}-{sub.array}-{sub.token}"


def cancellable(rows, subs: dict[str, Submission], chosen: set[str]) -> list[str]:
    """Chosen cells with a live job. A done cell's job may still be queued (its result came
    from elsewhere); a COMPLETING one is ending anyway."""
    return [r.cell_id for r in rows if r.cell_id in chosen and r.cell_id in subs
            and (r.state.is_live or (r.job_state in LIVE_WORDS and r.job_state != "COMPLETING"))]


def _stop_local(sub: Submission, stop_queue: bool) -> None:
    """Stop the local queue first if asked (SIGTERM: it starts nothing more), then the cell's
    job: SIGINT, as submitit's own cancel does. Its controller then kills the ranks; a SIGTERM
    would only be passed on to them, and submitit's tasks ignore SIGTERM (on SLURM it comes
    before a preemption). Each pid is checked to be ours first."""
    queue = sub.queue_pid if stop_queue else None
    job = int(sub.job_id) if sub.job_id else None
    for pid, markers, sig in ((queue, QUEUE_MARKERS, signal.SIGTERM), (job, LOCAL_JOB_MARKERS, signal.SIGINT)):
        if pid and pid_alive(pid, markers):
            try:
                os.kill(pid, sig)
            except OSError:
                pass

