"""Each cell's state, from the registry, the result files and one scheduler snapshot."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from jobs.result import Result, ResultError, read_result, result_path
from orchestrator import registry, scheduler
from orchestrator.plan import Plan
from orchestrator.registry import Submission
from orchestrator.scheduler import JobState, Snapshot

# SLURM's job states mapped once; a state not listed reads as "unknown".
SLURM_STATES = {
    "PENDING": "pending", "CONFIGURING": "pending", "REQUEUED": "pending", "REQUEUE_HOLD": "pending",
    "REQUEUE_FED": "pending", "RESV_DEL_HOLD": "pending", "SUSPENDED": "pending", "PREEMPTED": "pending",
    "RUNNING": "running", "COMPLETING": "running", "STAGE_OUT": "running", "SIGNALING": "running",
    "RESIZING": "running",
    "COMPLETED": "failed",  # ended without a good result file
    "FAILED": "failed", "NODE_FAIL": "failed", "BOOT_FAIL": "failed", "OUT_OF_MEMORY": "failed",
    "SPECIAL_EXIT": "failed", "REVOKED": "failed",
    "TIMEOUT": "timeout", "DEADLINE": "timeout", "CANCELLED": "cancelled",
}
LIVE = ("queued", "pending", "running")
FINAL = ("done", "oom")
QUEUE_MARKER = "orchestrator.local_queue"
LOCAL_JOB_MARKER = "submitit"


@dataclass(frozen=True)
class CellStatus:
    cell_id: str
    label: str
    state: str  # not submitted | queued | pending | running | done | oom | failed | timeout | cancelled | unknown
    job_id: str = ""
    elapsed_s: Optional[float] = None
    node: str = ""
    detail: str = ""  # why it ended, or why it waits


def read_results(plan: Plan) -> dict[str, Result | ResultError]:
    """Each planned cell's result file, or the error reading it; absent cells are left out."""
    out: dict[str, Result | ResultError] = {}
    for cell in plan.cells:
        path = result_path(Path(plan.results_dir), cell.cell_id)
        if path.exists():
            try:
                out[cell.cell_id] = read_result(path)
            except ResultError as exc:
                out[cell.cell_id] = exc
    return out


def local_snapshot(subs: list[Submission], now: dt.datetime) -> dict[str, JobState]:
    jobs = {}
    for sub in subs:
        key = sub.job_id or f"queue-{sub.queue_pid}"
        if sub.job_id is None:
            alive = sub.queue_pid is not None and scheduler.pid_alive(sub.queue_pid, QUEUE_MARKER)
            jobs[key] = JobState(key, "PENDING" if alive else "LOST", reason="waiting in the local queue")
        else:
            started = dt.datetime.fromisoformat(sub.submitted_at)
            alive = scheduler.pid_alive(int(sub.job_id), LOCAL_JOB_MARKER)
            jobs[key] = JobState(key, "RUNNING" if alive else "ENDED", (now - started).total_seconds(), "localhost")
    return jobs


def take_snapshot(subs: dict[str, Submission]) -> Snapshot:
    """One scheduler query for all SLURM jobs; pid checks for local ones."""
    slurm = [s.job_id for s in subs.values() if s.executor == "slurm" and s.job_id]
    snapshot = scheduler.query_slurm(slurm) if slurm else Snapshot({})
    local = [s for s in subs.values() if s.executor == "local"]
    jobs = dict(snapshot.jobs)
    jobs.update(local_snapshot(local, dt.datetime.now(dt.timezone.utc)))
    return Snapshot(jobs, snapshot.warning)


def cell_state(sub: Optional[Submission], result, job: Optional[JobState]) -> tuple[str, str]:
    """(state, detail) for one cell. A good result wins; then a live job; then how it ended."""
    if isinstance(result, Result) and result.status == "ok":
        return "done", ""
    if isinstance(result, Result) and result.status == "oom":
        return "oom", result.error or ""
    if sub is None:
        return "not submitted", ""
    if job is not None and job.state in ("PENDING", "LOST") and sub.executor == "local":
        return ("queued", job.reason) if job.state == "PENDING" else ("failed", "the local queue stopped before it ran")
    state = SLURM_STATES.get(job.state, "unknown") if job is not None else "unknown"
    if job is not None and job.state == "ENDED":
        state = "failed"
    if state in LIVE:
        return state, job.reason if job else ""
    if isinstance(result, Result):  # ended with a failed/timeout result: its error says why
        return ("timeout" if result.status == "timeout" else "failed"), _last_line(result.error)
    if isinstance(result, ResultError):
        return "failed", str(result)
    if job is None:
        return "unknown", "not in squeue; sacct has no record yet"
    return state, job.reason or f"SLURM state {job.state}, no result file"


def _run_seconds(result: Result) -> Optional[float]:
    try:
        start, end = (dt.datetime.fromisoformat(result.env[k]) for k in ("started_at", "ended_at"))
    except (KeyError, TypeError, ValueError):
        return None
    return (end - start).total_seconds()


def _last_line(text: Optional[str]) -> str:
    lines = [line for line in (text or "").splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def statuses(plan: Plan, subs: dict[str, Submission], results: dict, snapshot: Snapshot) -> list[CellStatus]:
    rows = []
    for cell in plan.cells:
        sub = subs.get(cell.cell_id)
        key = (sub.job_id or f"queue-{sub.queue_pid}") if sub else None
        job = snapshot.jobs.get(key) if key else None
        result = results.get(cell.cell_id)
        state, detail = cell_state(sub, result, job)
        elapsed = job.elapsed_s if job else None
        if isinstance(result, Result) and state in FINAL:
            elapsed = _run_seconds(result)
        rows.append(CellStatus(
            cell.cell_id, cell.label, state, (sub.job_id or "") if sub else "", elapsed,
            job.node if job else "", detail,
        ))
    return rows


def current(plan: Plan) -> tuple[list[CellStatus], str]:
    """Every cell's status now, and a warning to show once (or "")."""
    subs = registry.latest(Path(plan.results_dir))
    snapshot = take_snapshot(subs)
    return statuses(plan, subs, read_results(plan), snapshot), snapshot.warning
