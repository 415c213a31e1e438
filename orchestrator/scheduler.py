"""Ask the scheduler about our jobs: one squeue and at most one sacct per refresh, whatever
the number of cells. Local jobs are processes on this machine: their pids answer."""
from __future__ import annotations

import getpass
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

QUERY_TIMEOUT_S = 60


@dataclass(frozen=True)
class JobState:
    job_id: str
    state: str  # SLURM's word (PENDING, RUNNING, COMPLETED, ...), or RUNNING/ENDED for local jobs
    elapsed_s: Optional[float] = None
    node: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Snapshot:
    jobs: dict[str, JobState]
    warning: str = ""  # e.g. accounting is off: finished jobs are known only by their results


def on_slurm() -> bool:
    return shutil.which("sbatch") is not None


def parse_elapsed(text: str) -> Optional[float]:
    """squeue's %M: [days-][hours:]minutes:seconds -> seconds."""
    text = text.strip()
    if not text or text in ("INVALID", "N/A"):
        return None
    days, _, clock = text.rpartition("-")
    parts = [float(p) for p in clock.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0.0)
    hours, minutes, seconds = parts
    return (float(days or 0) * 24 + hours) * 3600 + minutes * 60 + seconds


def parse_squeue(text: str) -> dict[str, JobState]:
    jobs = {}
    for line in text.splitlines():
        fields = line.split("|")
        if len(fields) < 5:
            continue
        job_id, state, elapsed, node, reason = (f.strip() for f in fields[:5])
        jobs[job_id] = JobState(job_id, state, parse_elapsed(elapsed), node, reason if reason != "None" else "")
    return jobs


def parse_sacct(text: str) -> dict[str, JobState]:
    jobs = {}
    for line in text.splitlines():
        fields = line.split("|")
        if len(fields) < 5 or "[" in fields[0]:
            continue  # a pending array's summary row: squeue lists its tasks one by one
        job_id, state, elapsed, node, exit_code = (f.strip() for f in fields[:5])
        word = state.split()[0] if state else "UNKNOWN"  # "CANCELLED by 0" -> CANCELLED
        reason = f"exit {exit_code}" if exit_code not in ("", "0:0") else ""
        jobs[job_id] = JobState(job_id, word, float(elapsed) if elapsed.isdigit() else None, node, reason)
    return jobs


def _run(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=QUERY_TIMEOUT_S)


def query_slurm(job_ids: Iterable[str]) -> Snapshot:
    """States of the given ARRAY_TASK ids: live ones from squeue, ended ones from sacct."""
    wanted = set(job_ids)
    if not wanted:
        return Snapshot({})
    user = os.environ.get("USER") or getpass.getuser()
    squeue = _run(["squeue", "-h", "-r", "-u", user, "-o", "%i|%T|%M|%N|%r"])
    if squeue.returncode != 0:
        raise RuntimeError(f"squeue failed: {squeue.stderr.strip()}")
    jobs = {k: v for k, v in parse_squeue(squeue.stdout).items() if k in wanted}
    ended = wanted - set(jobs)
    if not ended:
        return Snapshot(jobs)
    arrays = sorted({j.split("_")[0] for j in ended})
    sacct = _run(["sacct", "-X", "-P", "-n", "-o", "JobID,State,ElapsedRaw,NodeList,ExitCode", "-j", ",".join(arrays)])
    if sacct.returncode != 0:
        reason = (sacct.stderr.strip().splitlines() or ["sacct failed"])[-1]
        return Snapshot(jobs, warning=f"sacct unavailable ({reason}): ended jobs are judged by their result files")
    finished = parse_sacct(sacct.stdout)
    jobs.update({k: v for k, v in finished.items() if k in ended})
    return Snapshot(jobs)


def pid_alive(pid: int, marker: str) -> bool:
    """The process exists, is not a zombie, and its command line holds `marker` (pids get reused)."""
    proc = Path(f"/proc/{pid}")
    try:
        state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except (OSError, IndexError):
        return False
    return state != "Z" and marker in cmdline
