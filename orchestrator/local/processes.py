"""The local executor's jobs: processes on this machine, found by pid and by a marker in
their command line (pids are reused), and their states in the shape squeue gives SLURM's."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Optional

from results_format.registry import Submission
from orchestrator.slurm.slurm_client import JobState

# The local queue's module name, now and before issue 39 (a queue started by an older version runs on)
QUEUE_MARKERS = ("orchestrator.local.queue", "orchestrator.local_queue")
LOCAL_JOB_MARKERS = ("submitit",)


def pid_alive(pid: int, markers: tuple[str, ...]) -> bool:
    """The process exists, is not a zombie, and its command line holds one of `markers` (pids get reused)."""
    proc = Path(f"/proc/{pid}")
    try:
        state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (OSError, IndexError):
        return False
    return state != "Z" and any(marker in cmdline for marker in markers)


def local_snapshot(subs: list[Submission], now: dt.datetime) -> dict[str, JobState]:
    """Each local submission's job: PENDING while its queue lives and has not started it (LOST
    once the queue is gone), then RUNNING while its job process lives (ENDED after)."""
    jobs = {}
    for sub in subs:
        key = sub.job_id or f"queue-{sub.queue_pid}"
        if sub.job_id is None:
            alive = sub.queue_pid is not None and pid_alive(sub.queue_pid, QUEUE_MARKERS)
            jobs[key] = JobState(key, "PENDING" if alive else "LOST", reason="waiting in the local queue")
        else:
            started = dt.datetime.fromisoformat(sub.submitted_at)
            alive = pid_alive(int(sub.job_id), LOCAL_JOB_MARKERS)
            end = now if alive else last_write(sub)
            elapsed = max((min(end, now) - started).total_seconds(), 0.0) if end else None  # a future time: now
            jobs[key] = JobState(key, "RUNNING" if alive else "ENDED", elapsed, "localhost")
    return jobs


def last_write(sub: Submission) -> Optional[dt.datetime]:
    """When an ended local job last wrote its logs: its end, as near as this machine recorded it
    (measured to now, an ended job's time would grow on every refresh)."""
    times = []
    for log in filter(None, (sub.log_err, sub.log_out)):
        try:
            times.append(Path(log).stat().st_mtime)
        except OSError:
            continue
    return dt.datetime.fromtimestamp(max(times), dt.UTC) if times else None
