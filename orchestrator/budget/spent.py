"""What a study has spent: the GPU-hours every job it ran held, failed ones and retries included.

Every Submission line in the registry that started a job is one attempt. An attempt is charged
allocated GPUs x elapsed seconds, from the first of these that knows:
  1. sacct: a row per run of the job (a requeued job ran more than once), with AllocTRES's
     gres/gpu, else the GPUs the job asked for (SLURM allocates GPUs exactly as asked);
  2. the scheduler's snapshot: squeue's elapsed of a job still listed (running: spent so far);
  3. the result file, when it is this attempt's and the job has ended: its own clock (its phases,
     else env's started_at to ended_at): SLURM without accounting once squeue has forgotten the
     job, and every ended local job (its logs' times change when the dir is copied);
  4. a local job without one: its process's life (orchestrator.local.processes), start to its logs'
     last write (never after now).
A time taken from a file (3, 4) is at most the attempt's time limit, which the job cannot outlive.
An ended attempt none of them knows ("limit": SLURM forgot it and there is no accounting, or its
result's clock is not this attempt's, as from a node whose clock is behind) is charged its whole
time limit, the most it could have held: never nothing. A live one nobody timed yet is "unrecorded".
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import re
from pathlib import Path
from dataclasses import dataclass
from typing import Optional
from collections.abc import Iterable, Mapping

from jobs.core.layout import PLAN_FILE, SPENT_FILE
from orchestrator.errors import PlanError, UserError
from orchestrator.local.processes import local_snapshot
from orchestrator.slurm import recovery
from orchestrator.watch.result_cache import ResultDigest, ResultCache, digest
from orchestrator.watch.seen import Accounts
from orchestrator.plan.plan import Plan, planned_study, read_plan
from results_format import registry
from results_format.registry import Submission
from orchestrator.slurm.slurm_client import JobState, SlurmClient
from results_format.states import ENDED_WORDS, LIVE_WORDS

SKEW_S = 120.0  # a result started this long before its submission was recorded is still that attempt's
SOURCES = ("sacct", "squeue", "process", "result", "limit", "unrecorded")
_SKEW = dt.timedelta(seconds=SKEW_S)


@dataclass(frozen=True)
class Charge:
    """One run of one attempt: the GPUs it held and for how long."""

    cell_id: str
    job_id: str
    gpus: int
    elapsed_s: Optional[float]  # None: a live job nothing has timed yet
    source: str  # one of SOURCES: where elapsed_s (and gpus) come from
    state: str = ""  # the job's word for how the run ended (COMPLETED, TIMEOUT, REQUEUED, ...) or RUNNING
    live: bool = False  # still waiting or running: elapsed_s is so far

    @property
    def gpu_hours(self) -> float:
        """gpus x elapsed_s / 3600; 0 while live and not timed yet."""
        return self.gpus * (self.elapsed_s or 0.0) / 3600

    def to_dict(self) -> dict:
        """Its fields and its GPU-hours (asdict's, without its deep copies: a study has 100,000)."""
        return {name: getattr(self, name) for name in _CHARGE_FIELDS} | {"gpu_hours": self.gpu_hours}


_CHARGE_FIELDS = tuple(f.name for f in dataclasses.fields(Charge))


def attempts(submissions: Iterable[Submission]) -> list[Submission]:
    """Every submission that started a job, once (a recovered one may be recorded twice), in order."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for sub in submissions:
        key = (sub.cell_id, sub.executor, sub.job_id or "")
        if sub.job_id and key not in seen:
            seen.add(key)
            out.append(sub)
    return out


_SHAPE_NAME = re.compile(r"n(\d+)-g(\d+)-")


def asked_gpus(plan: Plan, sub: Submission) -> int:
    """The GPUs the attempt's job asked for: its array's nodes x GPUs per node, or by the array's
    name (n1-g2-t2) for a cell no longer in the plan."""
    try:
        shape = plan.array_of(sub.cell_id).shape
        return shape.nodes * shape.gpus_per_node
    except KeyError:
        match = _SHAPE_NAME.match(sub.array)
        return int(match.group(1)) * int(match.group(2)) if match else 0


def limit_s(plan: Plan, sub: Submission) -> float:
    """The most one run of the attempt could last: the time limit its submit recorded, else its
    array's in the plan (`submit --time-min` was not recorded before), else the cluster's."""
    if sub.time_min:
        return sub.time_min * 60.0
    try:
        return plan.array_of(sub.cell_id).shape.time_min * 60.0
    except KeyError:  # a cell no longer planned
        return plan.cluster.time_min * 60.0


def run_seconds(result: ResultDigest) -> Optional[float]:
    """The run's own clock: its phases' sum, or before phases env's ended_at - started_at (at least 0);
    None where it has neither.
    `result`: a ResultDigest, or a Result."""
    seconds = digest(result).run_s
    return None if seconds is None else max(seconds, 0.0)


def result_attempt(result: ResultDigest, tried: list[Submission]) -> Optional[Submission]:
    """Which of a cell's attempts wrote its result (a ResultDigest, or a Result): the last one recorded
    before the run started (give or take SKEW_S of clocks apart); None for a result without a start."""
    try:
        latest = dt.datetime.fromisoformat(digest(result).started_at) + _SKEW
        chosen = None
        for sub in tried:
            if registry.timestamp(sub.submitted_at) <= latest:
                chosen = sub
        return chosen
    except (KeyError, TypeError, ValueError):
        return None


def charges(plan: Plan, submissions: Iterable[Submission], results: Mapping[str, object],
            runs: Mapping[str, tuple[JobState, ...]], jobs: Mapping[str, JobState]) -> list[Charge]:
    """Every attempt's charge (one per run where sacct lists several), in registry order.
    `results`: the cells' result files (a ResultDigest or a Result, else an error); `runs`: sacct's rows by job id;
    `jobs`: what the scheduler (squeue, sacct, local processes) says of each job id now."""
    tried = attempts(submissions)
    by_cell: dict[str, list[Submission]] = {}
    for sub in tried:
        by_cell.setdefault(sub.cell_id, []).append(sub)
    owners = {}
    for cell_id, result in results.items():
        result = digest(result)
        if isinstance(result, ResultDigest) and cell_id in by_cell:
            owner = result_attempt(result, by_cell[cell_id])
            if owner is not None:
                owners[(cell_id, owner.job_id)] = result
    out: list[Charge] = []
    for sub in tried:
        out += attempt_charges(plan, sub, owners.get((sub.cell_id, sub.job_id)), runs, jobs)
    clocks = {(cell_id, job_id or ""): run_seconds(result) for (cell_id, job_id), result in owners.items()}
    return split_packed(out, {key: s for key, s in clocks.items() if s is not None})


JOB_WIDE = ("sacct", "squeue", "limit", "unrecorded")  # sources that time a whole job, not one cell of it


def split_packed(charges: list[Charge], clocks: Mapping[tuple[str, str], float]) -> list[Charge]:
    """A packed task (submit --pack) is one job for several cells: each of its runs, timed for the
    whole job, is split among its cells so that they add up to it: a cell gets its own clock
    (`clocks`, by (cell, job): its result's phases) where known, and the cells without one share the
    rest equally; where the known clocks alone exceed the run (clocks apart), or every cell has
    one, each gets run x clock / sum of clocks. A job of one cell keeps its charge (pure)."""
    groups: dict[tuple[str, int], list[int]] = {}
    runs_of: dict[tuple[str, str], int] = {}
    for i, c in enumerate(charges):
        if c.source in JOB_WIDE and c.job_id:
            nth = runs_of.get((c.cell_id, c.job_id), 0)
            runs_of[(c.cell_id, c.job_id)] = nth + 1
            groups.setdefault((c.job_id, nth), []).append(i)  # the cells of one task list the same runs
    out = list(charges)
    for members in groups.values():
        total = charges[members[0]].elapsed_s
        if len(members) < 2 or total is None:
            continue
        own = [clocks.get((charges[i].cell_id, charges[i].job_id)) for i in members]
        shares = run_shares(total, own)
        for i, share in zip(members, shares, strict=True):
            out[i] = dataclasses.replace(charges[i], elapsed_s=share)
    return out


def run_shares(total_s: float, own_s: list[Optional[float]]) -> list[float]:
    """`total_s` split among cells with their own seconds where known (see split_packed)."""
    known = sum(s for s in own_s if s is not None)
    unknown = sum(s is None for s in own_s)
    if unknown and known <= total_s:
        rest = (total_s - known) / unknown
        return [rest if s is None else s for s in own_s]
    if known <= 0:
        return [total_s / len(own_s)] * len(own_s)
    return [total_s * (s or 0.0) / known for s in own_s]


def attempt_charges(plan: Plan, sub: Submission, result: Optional[ResultDigest],
                    runs: Mapping[str, tuple[JobState, ...]], jobs: Mapping[str, JobState]) -> list[Charge]:
    """One attempt's charges (see the module's docstring for the order of the sources)."""
    job_id, gpus, limit = sub.job_id or "", asked_gpus(plan, sub), limit_s(plan, sub)
    job = jobs.get(job_id)
    live = job is not None and job.state in LIVE_WORDS
    if sub.executor == "slurm":
        out = [Charge(sub.cell_id, job_id, run.gpus if run.gpus is not None else gpus, run.elapsed_s, "sacct",
                      run.state, not ran_out(run)) for run in runs.get(job_id, ()) if ran_out(run) or not live]
        if job is not None and job.elapsed_s is not None and (live or not out):
            out.append(Charge(sub.cell_id, job_id, gpus, job.elapsed_s, "squeue", job.state, live))
        if out:
            return out
    clock = run_seconds(result) if result is not None and not live else None
    if result is not None and clock is not None:
        return [Charge(sub.cell_id, job_id, gpus, min(clock, limit), "result", str(result.status))]
    if sub.executor == "local" and job is not None and job.elapsed_s is not None:
        return [Charge(sub.cell_id, job_id, gpus, min(job.elapsed_s, limit), "process", job.state, live)]
    state = job.state if job else ""
    return [Charge(sub.cell_id, job_id, gpus, None, "unrecorded", state, live) if live
            else Charge(sub.cell_id, job_id, gpus, limit, "limit", state)]


def ran_out(run: JobState) -> bool:
    """A sacct row of a run that is over: it ended, or was requeued (the job runs again as a new row)."""
    return run.state in ENDED_WORDS or run.state == "REQUEUED"


def spent_file(study: str, charges: Iterable[Charge], now: Optional[dt.datetime] = None) -> dict:
    """spent.json's content: what `collect` tables per configuration (collect.spent_json reads it)."""
    when = (now or dt.datetime.now(dt.UTC)).isoformat(timespec="seconds")
    return {"schema_version": 1, "study": study, "measured_at": when, "charges": [c.to_dict() for c in charges]}


def measured_charges(plan: Plan, registered: registry.RegistryState, client: Optional[SlurmClient] = None,
                     now: Optional[dt.datetime] = None) -> list[Charge]:
    """Every attempt's charge, from the registry (`registered`), the result files and one look at
    the jobs: one squeue, at most one sacct, the local processes. It records nothing (only the results'
    status cache is kept up to date): the jobs of an interrupted submit, found by their token, are
    charged here and recorded by the next `status` or `submit`."""
    now = now or dt.datetime.now(dt.UTC)
    tried = attempts(registered.submissions)
    slurm = {s.job_id: s.token or "" for s in tried if s.executor == "slurm" and s.job_id}
    intents = registered.unconfirmed
    since = min([s.submitted_at for s in tried if s.executor == "slurm"] + [i.created_at for i in intents], default=None)
    snapshot = (client or SlurmClient()).snapshot(slurm, [i.job_name for i in intents], since=since, charged=slurm)
    found = recovery.recover(intents, registered.confirmed, snapshot.jobs, now)
    runs = Accounts()
    runs.record(snapshot.runs)
    local = [dataclasses.replace(s, log_out=plan.resolve(s.log_out), log_err=plan.resolve(s.log_err))
             for s in tried if s.executor == "local"]
    jobs = {**snapshot.jobs, **local_snapshot(local, now)}
    results = ResultCache(Path(plan.results_dir)).read(plan.cell_ids)
    return charges(plan, [*registered.submissions, *found.submissions], results, runs.runs, jobs)


def measure_spent(results_dir: Path) -> tuple[Optional[dict], str]:
    """What the study's jobs held (measured_charges), as spent.json holds it, for `collect`'s tables;
    and why it could not be measured (None, and "" when the dir has no readable plan: results
    copied without one keep the spent.json they came with, and collect names an unreadable plan itself)."""
    if not (results_dir / PLAN_FILE).is_file():
        return None, ""
    try:
        registered = registry.load(results_dir)
        if not registered.submissions and not registered.intents:  # nothing spent: the plan's cells are not read
            study = planned_study(results_dir)
            return (None, "") if study is None else (spent_file(study, []), "")
        plan = read_plan(results_dir)
        return spent_file(plan.study, measured_charges(plan, registered)), ""
    except PlanError:
        return None, ""
    except UserError as exc:
        kept = (f"the tables use {SPENT_FILE} as it was measured before" if (results_dir / SPENT_FILE).is_file()
                else "no GPU-hours table")
        return None, f"GPU-hours spent not measured now ({exc}); {kept}"
