"""Each cell's state, from the registry, the result files and one scheduler snapshot.

A Monitor refreshes it: per refresh one squeue and at most one sacct (slurm_client.SlurmClient),
result files read only when they are new or changed (result_cache.py: what status needs of each is
kept in the results dir's status cache), and the jobs of an interrupted submit recovered by
their token (recovery.py).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence
from typing import Optional

from jobs.core.result import ResultError, Status
from results_format import registry
from orchestrator.watch import why_ended
from orchestrator.watch.packed_start import started_cells
from orchestrator.slurm import recovery
from orchestrator.local.processes import local_snapshot
from orchestrator.watch.result_cache import ResultDigest, ResultCache, digest
from orchestrator.plan.cell_names import cell_names
from orchestrator.plan.plan import Plan
from results_format.registry import Submission
from orchestrator.slurm.slurm_client import JobState, SlurmClient, Snapshot
from orchestrator.watch.seen import Accounts, Seen
from results_format.states import ENDED_WORDS, LIVE_WORDS, SLURM_STATES, CellState
from results_format.text import last_line

SACCT_LAG_S = 120.0  # slurmdbd may learn of a job this long after squeue forgets it
WAITING = (CellState.QUEUED, CellState.PENDING)
REASONS = {"BeginTime": "requeued: restarts when its BeginTime comes (resumes from its checkpoint)"}


@dataclass(frozen=True)
class CellRow:
    """One cell's row in status: its state (a CellState) and what is known of its job."""

    cell_id: str
    label: str  # the cell's name (plan.cell_names): its label, "#k" where several cells share it
    state: CellState
    job_id: str = ""
    elapsed_s: Optional[float] = None
    node: str = ""
    detail: str = ""  # why it ended, or why it waits
    job_state: str = ""  # the scheduler's word for its job (PENDING, RUNNING, COMPLETED, ...), if known
    waited_s: Optional[float] = None  # queued or pending: seconds since it was submitted
    epochs_s: Optional[float] = None  # of elapsed_s, a finished job's epochs (its phases), where it says

    def __post_init__(self) -> None:
        if type(self.state) is not CellState:
            object.__setattr__(self, "state", CellState(self.state))  # "done" is CellState.DONE

    def to_dict(self) -> dict:
        """Its fields, the state as its word (dataclasses.asdict, without its deep copies)."""
        return {name: getattr(self, name) for name in _ROW_FIELDS} | {"state": self.state.value}


_ROW_FIELDS = tuple(f.name for f in dataclasses.fields(CellRow))


@dataclass
class Report:
    rows: list[CellRow]
    warning: str = ""  # say once: e.g. accounting is off
    registry_errors: list[str] = field(default_factory=list)  # corrupt registry lines
    result_errors: list[str] = field(default_factory=list)  # unreadable result files
    in_flight: int = 0  # cells of an interrupted submit whose sbatch may still land
    unreadable: frozenset = frozenset()  # cells whose result file cannot be read
    skipped_files: list[str] = field(default_factory=list)  # results that are no regular file (a FIFO): not read

    @property
    def errors(self) -> list[str]:
        return self.registry_errors + self.result_errors


def is_final(result) -> bool:
    """A result (its ResultDigest, or a Result) that is an answer: ok or oom."""
    result = digest(result)
    return isinstance(result, ResultDigest) and result.is_answer


def cell_state(sub: Optional[Submission], result, job: Optional[JobState], *, log_text: str = "",
               time_min: Optional[int] = None, accounting: bool = True, cancelled: bool = False,
               age_s: Optional[float] = None) -> tuple[CellState, str]:
    """(state, detail) for one cell. A good result wins; then a live job; then why it ended.
    `result`: its ResultDigest (or a Result), the error reading it, or None."""
    result = digest(result)
    if isinstance(result, ResultDigest) and result.status == Status.OK:
        return CellState.DONE, ""
    if isinstance(result, ResultDigest) and result.status == Status.OOM:
        return CellState.OOM, result.error or ""
    if sub is None:
        return (CellState.FAILED, str(result)) if isinstance(result, ResultError) else (CellState.NOT_SUBMITTED, "")
    if job is not None and job.state in ("PENDING", "LOST") and sub.executor == "local":
        if job.state == "PENDING":
            return CellState.QUEUED, job.reason
        return CellState.FAILED, "the local queue stopped before it ran"
    if job is not None and job.state in LIVE_WORDS:
        return SLURM_STATES[job.state], REASONS.get(job.reason, job.reason)
    if isinstance(result, ResultError):
        return CellState.FAILED, str(result)
    error_line = last_line(result.error) if isinstance(result, ResultDigest) else why_ended.python_error(log_text)
    if isinstance(result, ResultDigest) and result.status == Status.TIMEOUT:
        return CellState.TIMEOUT, error_line
    if job is not None and job.state == "ENDED":  # a local job
        if cancelled:
            return why_ended.explain("CANCELLED")
        return CellState.FAILED, error_line or "the local job ended without a result; see `logs CELL`"
    word = job.state if job is not None else why_ended.word_from_log(log_text) or ("CANCELLED" if cancelled else "")
    if not word:
        if isinstance(result, ResultDigest):
            return CellState.FAILED, error_line
        if sub.user and sub.user != registry.this_user():  # not ended: out of sight (retry-failed leaves it)
            return CellState.UNKNOWN, (f"job {sub.job_id} is {sub.user}'s: squeue and sacct show you your own jobs "
                                       f"only; `status` as {sub.user} says how it is")
        if accounting and (age_s is None or age_s < SACCT_LAG_S):
            return CellState.UNKNOWN, "not in squeue; sacct has no record yet"
        return CellState.FAILED, error_line or (
            "ended without a result" + ("" if accounting else " (no accounting here to say why)") + "; see `logs CELL`")
    if word not in ENDED_WORDS:
        return CellState.UNKNOWN, f"SLURM state {word}, no result file"
    return why_ended.explain(word, job.node if job else "", job.reason if job else "", error_line, time_min)


def _age_s(sub: Optional[Submission], now: dt.datetime) -> Optional[float]:
    try:
        return (now - registry.timestamp(sub.submitted_at)).total_seconds() if sub else None
    except (TypeError, ValueError):  # a hand-edited registry line
        return None


def _needs_log(sub: Optional[Submission], result, job: Optional[JobState], final: bool) -> bool:
    """Only cells that ended without a result that says why get their log read."""
    if sub is None or not sub.log_err or final or (job is not None and job.state in LIVE_WORDS):
        return False
    return not (isinstance(result, ResultDigest) and result.error)


def statuses(plan: Plan, subs: dict[str, Submission], results: dict, snapshot: Snapshot, *,
             cancelled: frozenset = frozenset(), in_flight: frozenset = frozenset(),
             skipped: Optional[dict[str, str]] = None, now: Optional[dt.datetime] = None,
             names: Optional[Sequence[str]] = None) -> list[CellRow]:
    """`skipped`: why each cell skipped since its last submission was not started; `names`: the cells'
    (cell_names, computed once per Monitor)."""
    skipped = skipped or {}
    now = now or dt.datetime.now(dt.UTC)
    accounting, jobs = not snapshot.warning, snapshot.jobs
    rows = []
    for name, cell_id in zip(names or cell_names(plan.cells), plan.cell_ids, strict=True):
        sub = subs.get(cell_id)
        job = jobs.get(sub.job_id or f"queue-{sub.queue_pid}") if sub is not None else None
        result = digest(results.get(cell_id))
        final = isinstance(result, ResultDigest) and result.is_answer
        log_text = why_ended.log_of(plan.resolve(sub.log_err)) if sub and _needs_log(sub, result, job, final) else ""
        age_s = _age_s(sub, now) if job is None and not final else None  # only a cell asked about needs it
        state, detail = cell_state(
            sub, result, job, log_text=log_text,
            time_min=(sub.time_min if sub is not None and sub.time_min else plan.array_of(cell_id).shape.time_min),
            accounting=accounting, cancelled=sub is not None and sub.job_id in cancelled, age_s=age_s,
        )
        if cell_id in skipped and not state.is_final:
            state, detail = CellState.SKIPPED, skipped[cell_id]
        if cell_id in in_flight and not (state.is_live or state.is_final):
            state, detail = CellState.QUEUED, "an interrupted submit's sbatch may still land; checking again shortly"
        elapsed = job.elapsed_s if job else None
        node, epochs_s = job.node if job else "", None
        if isinstance(result, ResultDigest) and not state.is_live:  # the run's own start and end: a stopped clock
            run_s = result.run_s
            elapsed = run_s if run_s is not None or state.is_final else elapsed
            node, epochs_s = node or ",".join(result.nodes), result.in_epochs_s
        waited = (age_s if job is None else _age_s(sub, now)) if state in WAITING else None
        rows.append(CellRow(cell_id, name, state, (sub.job_id or "") if sub else "", elapsed, node, detail,
                               job.state if job else "", waited, epochs_s))
    return waiting_in_jobs(rows, subs, plan)


def waiting_in_jobs(rows: list[CellRow], subs: dict[str, Submission], plan: Plan) -> list[CellRow]:
    """A running job's cell that has not started (packed_start) is queued, not running: each packed
    job's log is read once a refresh, only while the job runs."""
    cells_of: dict[str, int] = {}
    for sub in subs.values():
        if sub.job_id:
            cells_of[sub.job_id] = cells_of.get(sub.job_id, 0) + 1
    started: dict[str, Optional[frozenset[str]]] = {}
    out = []
    for row in rows:
        mine = subs.get(row.cell_id)
        if row.state == CellState.RUNNING and mine is not None and cells_of.get(row.job_id, 0) > 1:
            if row.job_id not in started:
                started[row.job_id] = started_cells(plan.resolve(mine.log_out))
            heads = started[row.job_id]
            if heads is not None and row.cell_id not in heads:
                row = dataclasses.replace(row, state=CellState.QUEUED, elapsed_s=None,
                                          detail=f"waits in job {row.job_id} for the cells before it to end")
        out.append(row)
    return out


class Monitor:
    """Refreshes a plan's statuses; keep one for a whole watch or wait loop."""

    def __init__(self, plan: Plan, client: Optional[SlurmClient] = None) -> None:
        self.plan = plan
        self.results_dir = Path(plan.results_dir)
        self.client = client or SlurmClient()
        self.result_cache = ResultCache(self.results_dir)
        self.subs: dict[str, Submission] = {}  # each cell's current submission as recorded, as of the last refresh
        self.skipped_files: list[str] = []  # why each result file that is no regular file was not read
        self.accounts = Accounts()  # sacct's rows of the study's jobs, for what they spent (orchestrator.budget.spent)
        self.seen = Seen()  # what the last refresh saw: every submission, the results, the jobs' states
        self.names = cell_names(plan.cells)  # what status shows of each cell: its label, "#k" among those alike

    def read_results(self) -> dict[str, ResultDigest | ResultError]:
        """Each planned cell's result (its ResultDigest), or the error reading it (absent cells and files
        that are no regular file are left out); a file is read only when it is new or changed."""
        out = self.result_cache.read(self.plan.cell_ids)
        self.skipped_files = self.result_cache.skipped_files
        return out

    def submission(self, cell_id: str) -> Optional[Submission]:
        """The cell's current submission, its log files where the results dir is now."""
        sub = self.subs.get(cell_id)
        return self._resolved(sub) if sub else None

    def _resolved(self, sub: Submission) -> Submission:
        return dataclasses.replace(sub, log_out=self.plan.resolve(sub.log_out), log_err=self.plan.resolve(sub.log_err))

    def refresh(self, locked: bool = False) -> Report:
        """`locked`: the caller holds the submit lock, so recovered jobs are recorded at once;
        otherwise they are recorded only if the lock is free (status never waits for a submit)."""
        state = registry.load(self.results_dir)
        results = self.read_results()
        subs = state.latest
        unconfirmed = state.unconfirmed
        final = {cid for cid, r in results.items() if is_final(r)}
        slurm = [(cid, s) for cid, s in subs.items() if s.executor == "slurm" and s.job_id]
        asked = [s for cid, s in slurm if cid not in final]
        charged = self.accounts.wanted(state.submissions)
        since = None
        if unconfirmed:
            times = [s.submitted_at for s in asked] + [i.created_at for i in unconfirmed]
            since = min(times + [s.submitted_at for s in state.submissions if s.job_id in charged])
        snapshot = self.client.snapshot({s.job_id: s.token or "" for s in asked if s.job_id}, [i.job_name for i in unconfirmed],
                                        since=since, squeue_only={s.job_id: s.token or "" for cid, s in slurm
                                                                  if s.job_id and cid in final}, charged=charged)
        self.accounts.record(snapshot.runs)
        now = dt.datetime.now(dt.UTC)
        found = recovery.recover(unconfirmed, state.confirmed, snapshot.jobs, now)
        if found.to_record:
            self._record(found.to_record, locked)
        for sub in found.submissions:
            current = subs.get(sub.cell_id)
            if current is None or current.submitted_at <= sub.submitted_at:
                subs[sub.cell_id] = sub
        self.subs = subs
        jobs = dict(snapshot.jobs)
        jobs.update(local_snapshot([self._resolved(s) for s in subs.values() if s.executor == "local"], now))
        self.seen = Seen((*state.submissions, *found.submissions), results, jobs, self.accounts.runs)
        in_flight = frozenset(c for i in found.in_flight for c in i.cell_ids)
        rows = statuses(self.plan, subs, results, Snapshot(jobs, snapshot.warning),
                        cancelled=frozenset(state.cancelled), in_flight=in_flight,
                        skipped={c: r.why for c, r in state.skipped.items()}, now=now, names=self.names)
        unreadable = {cid: str(r) for cid, r in results.items() if isinstance(r, ResultError)}
        return Report(rows, snapshot.warning, state.errors, list(unreadable.values()), len(in_flight),
                      frozenset(unreadable), self.skipped_files)

    def _record(self, records: list, locked: bool) -> None:
        if locked:
            registry.append_entries(self.results_dir, records)
            return
        with registry.try_lock(self.results_dir) as got:
            if got:
                try:
                    registry.append_entries(self.results_dir, records)
                except registry.RegistryError:
                    pass  # a read-only results dir: status still answers; submit records them
