"""Ask SLURM about our jobs, politely: one squeue and at most one sacct per snapshot, whatever
the number of cells. Local jobs are processes on this machine: their pids answer.

`squeue -t all` also lists jobs that ended within the last MinJobAge (5 min by default), with
the state they ended in, so sacct is only needed for older ones. When sacct fails (accounting
is off), the client says so once and stops asking; status then judges ended jobs by their
result files and logs.

That sacct also reports what the study's ended jobs held (`charged`): every run of each job,
requeued runs included (-D), with its elapsed time and allocated GPUs (orchestrator.budget.spent).
"""
from __future__ import annotations

import datetime as dt
import functools
import getpass
import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from collections.abc import Iterable, Mapping

from orchestrator.errors import SchedulerError
from results_format.text import last_line
from results_format.states import LIVE_WORDS

QUERY_TIMEOUT_S = 60
DEFAULT_MAX_ARRAY_SIZE = 1001  # SLURM's own default
MAX_ARRAY_TASKS = 4_000_001  # the most MaxArraySize may be
SQUEUE_FORMAT = "%i|%T|%M|%N|%r|%j"  # the name last: it may hold "|"
SACCT_FIELDS = "JobID,State,ElapsedRaw,NodeList,ExitCode,AllocTRES,JobName"  # the name last: it may hold "|"


@dataclass(frozen=True)
class JobState:
    job_id: str
    state: str  # SLURM's word (PENDING, RUNNING, COMPLETED, ...), or RUNNING/ENDED for local jobs
    elapsed_s: Optional[float] = None
    node: str = ""
    reason: str = ""  # squeue's reason (Priority, BeginTime, TimeLimit, ...) or sacct's "exit N:S"
    name: str = ""  # the job name (carries the submission token)
    gpus: Optional[int] = None  # GPUs allocated (sacct's AllocTRES gres/gpu); None: not known


@dataclass(frozen=True)
class Snapshot:
    jobs: dict[str, JobState]
    warning: str = ""  # e.g. accounting is off: finished jobs are known only by their results
    runs: tuple[JobState, ...] = ()  # sacct's rows of the `charged` jobs: every run, in sacct's order


def on_slurm() -> bool:
    return shutil.which("sbatch") is not None


_ELAPSED = re.compile(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)")


@functools.lru_cache(maxsize=4096)  # squeue says "0:00" for every pending task of 100,000
def parse_elapsed(text: str) -> Optional[float]:
    """squeue's %M: [days-][hours:]minutes:seconds -> seconds; None for anything else
    ("INVALID", "UNLIMITED", a negative or garbled time): not known, never a wrong number."""
    match = _ELAPSED.fullmatch(text.strip())
    if match is None:
        return None
    days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return float((days * 24 + hours) * 3600 + minutes * 60 + seconds)


def parse_squeue(text: str) -> dict[str, JobState]:
    """Lines of SQUEUE_FORMAT (the name is optional)."""
    jobs = {}
    for line in text.splitlines():
        fields = line.split("|", 5)
        if len(fields) < 5:
            continue
        job_id, state, elapsed, node, reason = map(str.strip, fields[:5])
        name = fields[5].strip() if len(fields) > 5 else ""
        jobs[job_id] = JobState(job_id, state, parse_elapsed(elapsed), node, reason if reason != "None" else "", name)
    return jobs


def sacct_rows(text: str) -> list[JobState]:
    """Every row of SACCT_FIELDS (AllocTRES and the name optional), in sacct's order: a requeued
    job has a row per run (-D), and after a SLURM restart one id may name several jobs."""
    jobs = []
    for line in text.splitlines():
        fields = line.split("|", 6)
        if len(fields) < 5:
            continue
        job_id, state, elapsed, node, exit_code = map(str.strip, fields[:5])
        tres = fields[5].strip() if len(fields) > 5 else ""
        name = fields[6].strip() if len(fields) > 6 else ""
        word = state.split()[0] if state else "UNKNOWN"  # "CANCELLED by 0" -> CANCELLED
        reason = f"exit {exit_code}" if exit_code not in ("", "0:0") else ""
        for task in array_tasks(job_id):  # an array cancelled while pending has only its summary row
            jobs.append(JobState(task, word, float(elapsed) if elapsed.isdigit() else None, node, reason, name,
                                 allocated_gpus(tres)))
    return jobs


_SUMMARY = re.compile(r"(\d+)_\[([\d,-]+)(?:%\d+)?\]")


def array_tasks(job_id: str) -> list[str]:
    """The task ids a sacct JobID stands for: itself, or each task of a summary row of tasks that
    never started ("39_[0-1,4]" -> 39_0, 39_1, 39_4; a throttle "%2" is not a task); [] when a
    summary cannot be read or names more tasks than SLURM allows in an array."""
    if "[" not in job_id:
        return [job_id]
    match = _SUMMARY.fullmatch(job_id)
    if match is None:
        return []
    spans = [part.partition("-") for part in match.group(2).split(",")]
    if any(not a.isdigit() or (b and not b.isdigit()) for a, _, b in spans):
        return []
    ranges = [range(int(a), int(b or a) + 1) for a, _, b in spans]
    if sum(len(r) for r in ranges) > MAX_ARRAY_TASKS:
        return []
    return [f"{match.group(1)}_{i}" for r in ranges for i in r]


@functools.lru_cache(maxsize=1024)  # a study's jobs share a few AllocTRES strings: 100,000 rows parse them once
def allocated_gpus(tres: str) -> Optional[int]:
    """GPUs in sacct's AllocTRES ("billing=2,cpu=2,gres/gpu=2,node=1" -> 2; typed counts
    "gres/gpu:a100=2" add up where the plain one is missing); None when GPUs are not tracked
    there (AccountingStorageTRES without gres/gpu)."""
    counts = dict(item.partition("=")[::2] for item in tres.split(",") if "=" in item)
    if counts.get("gres/gpu", "").isdigit():
        return int(counts["gres/gpu"])
    typed = [int(v) for k, v in counts.items() if k.startswith("gres/gpu:") and v.isdigit()]
    return sum(typed) if typed else None


def was_requeued(job: JobState) -> bool:
    """squeue's sign that a waiting job ran before (scontrol requeue, a node failure): SLURM holds a
    requeued job back by a begin time. sacct then has its earlier runs, which count as spent."""
    return job.state.startswith("REQUEUE") or (job.state == "PENDING" and job.reason == "BeginTime")


def is_ours(job: JobState, token: str) -> bool:
    """Job ids start over when SLURM's state is reset: the job must also carry the submission's
    token in its name (where both are known)."""
    return not token or not job.name or job.name.endswith(f"-{token}")


def parse_max_array_size(config: str) -> Optional[int]:
    match = re.search(r"^MaxArraySize\s*=\s*(\d+)", config, re.MULTILINE)
    return int(match.group(1)) if match else None


def sacct_time(iso: str) -> str:
    """An ISO timestamp as sacct -S wants it: local time, no zone (a week ago if unreadable)."""
    try:
        when = dt.datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        when = dt.datetime.now(dt.UTC) - dt.timedelta(days=7)
    return when.astimezone().strftime("%Y-%m-%dT%H:%M:%S")


def scheduler_answer(command: list[str], timeout: Optional[float]) -> subprocess.CompletedProcess:
    """Run a SLURM command; its answer as text, where bytes that are not UTF-8 (another job's
    Latin-1 name, a site's message) read as U+FFFD instead of failing every verb."""
    return subprocess.run(command, capture_output=True, text=True, encoding="utf-8", errors="replace",
                          timeout=timeout)


class SlurmClient:
    """The SLURM commands this tool runs, counted (`calls`), each with a timeout."""

    def __init__(self, user: Optional[str] = None) -> None:
        self.user = user or os.environ.get("USER") or getpass.getuser()
        self.calls: Counter = Counter()
        self.accounting_off = ""  # sacct's complaint, once it has failed

    def _run(self, command: list[str]) -> subprocess.CompletedProcess:
        self.calls[command[0]] += 1
        try:
            return scheduler_answer(command, QUERY_TIMEOUT_S)
        except FileNotFoundError as exc:
            raise SchedulerError(f"{command[0]} is not on PATH; run on a SLURM login node or use --executor local") from exc
        except subprocess.TimeoutExpired as exc:
            raise SchedulerError(f"{command[0]} did not answer in {QUERY_TIMEOUT_S} s; SLURM is busy, try again") from exc

    @property
    def warning(self) -> str:
        if not self.accounting_off:
            return ""
        return (f"sacct unavailable ({self.accounting_off}): jobs that left squeue are judged by their "
                "result files and logs")

    def snapshot(self, job_ids: Iterable[str] | Mapping[str, str], names: Iterable[str] = (),
                 since: Optional[str] = None, squeue_only: Iterable[str] | Mapping[str, str] = (),
                 charged: Iterable[str] | Mapping[str, str] = ()) -> Snapshot:
        """States of these ARRAY_TASK ids and of every job with one of these names: one squeue,
        then one sacct for what squeue no longer lists (by id, or by user since `since` when a
        name is still missing). `squeue_only` ids are reported only if squeue still lists them.
        The runs of the `charged` ids that squeue does not list as waiting or running, or lists
        as requeued, come in `runs` (from that same sacct). Ids may come with their submission's token (a mapping):
        a job of that id whose name carries another token is someone else's."""
        wanted, names, extra = _tokens(job_ids), set(names), _tokens(squeue_only)
        if not wanted and not names and not extra and not charged:
            return Snapshot({}, self.warning)
        squeue = self._run(["squeue", "-h", "-r", "-u", self.user, "-t", "all", "-o", SQUEUE_FORMAT])
        if squeue.returncode != 0:
            raise SchedulerError(f"squeue failed: {last_line(squeue.stderr)}; is SLURM up? (try `sinfo`)")
        listed = parse_squeue(squeue.stdout)
        jobs = {k: v for k, v in listed.items() if (k in wanted and is_ours(v, wanted[k])) or v.name in names}
        extras = {k: v for k, v in listed.items() if k in extra and is_ours(v, extra[k])}
        missing_ids = set(wanted) - set(jobs)
        missing_names = names - {j.name for j in jobs.values()}
        ended = {k: t for k, t in _tokens(charged).items()
                 if k not in listed or listed[k].state not in LIVE_WORDS or was_requeued(listed[k])}
        if not (missing_ids or missing_names or ended) or self.accounting_off:
            return Snapshot({**extras, **jobs}, self.warning)
        command = ["sacct", "-X", "-D", "-P", "-n", "-o", SACCT_FIELDS]
        if missing_names and since:
            command += ["-u", self.user, "-S", sacct_time(since)]
        else:
            command += ["-j", ",".join(sorted({j.split("_")[0] for j in missing_ids | set(ended)}))]
        sacct = self._run(command)
        if sacct.returncode != 0:
            self.accounting_off = last_line(sacct.stderr) or "sacct failed"
            return Snapshot({**extras, **jobs}, self.warning)
        runs = []
        for job in sacct_rows(sacct.stdout):  # a requeued job's rows come oldest first: its last is its state
            if (job.job_id in missing_ids and is_ours(job, wanted[job.job_id])) or job.name in missing_names:
                jobs[job.job_id] = job
            if job.job_id in ended and is_ours(job, ended[job.job_id]):
                runs.append(job)
        return Snapshot({**extras, **jobs}, runs=tuple(runs))

    def max_array_size(self) -> int:
        """The cluster's MaxArraySize: an array holds indices 0..MaxArraySize-1."""
        config = self._run(["scontrol", "show", "config"])
        size = parse_max_array_size(config.stdout) if config.returncode == 0 else None
        return size or DEFAULT_MAX_ARRAY_SIZE

    def test_only(self, text: str, folder: Path) -> str:
        """sbatch --test-only: SLURM checks the request and queues nothing. Its verdict, one line."""
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, prefix=".test-only-", suffix=".sh") as script:
            script.write(text)
            script.flush()
            result = self._run(["sbatch", "--test-only", script.name])
        if result.returncode != 0:
            raise SchedulerError(last_line(result.stderr) or f"sbatch --test-only exited {result.returncode}")
        return last_line(result.stderr or result.stdout).removeprefix("sbatch: ")

    def cancel(self, job_ids: list[str]) -> None:
        if not job_ids:
            return
        result = self._run(["scancel", *job_ids])
        if result.returncode != 0:
            raise SchedulerError(f"scancel failed: {last_line(result.stderr)}")

    def partitions(self) -> list[str]:
        result = self._run(["sinfo", "-h", "-o", "%P"])
        return [p.rstrip("*") for p in result.stdout.split()] if result.returncode == 0 else []


def _tokens(job_ids: Iterable[str] | Mapping[str, str]) -> dict[str, str]:
    return dict(job_ids) if isinstance(job_ids, Mapping) else dict.fromkeys(job_ids, "")
