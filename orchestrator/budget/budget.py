"""A study's GPU-hours: what it spent, what is still to come, and the cap `submit` keeps.

A budget (GPU-hours) comes from `submit --budget-gpu-hours N`, else [cluster] budget_gpu_hours
(the study's, a site file's or the profile's, as every [cluster] key); 0 is no cap. `submit`
queues cells only while

    spent + committed + the estimate of the cells it queues <= budget

spent: every attempt's GPUs x elapsed, failed ones and retries included (orchestrator.budget.spent);
committed: what cells queued or running are still expected to take, max(estimate - spent so
far, 0) each; estimates: orchestrator.budget.estimate. Too much is refused with how many cells fit;
`--within-budget` queues those, the first ones in plan order that fit together.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import shutil
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from orchestrator.budget import estimate, spent
from orchestrator.errors import BudgetError, UserError
from orchestrator.budget.estimate import Estimate
from orchestrator.local.machine import this_machine
from orchestrator.local.processes import local_snapshot
from orchestrator.watch.result_cache import ResultDigest, ResultCache, digest
from orchestrator.plan.plan import Plan
from orchestrator.budget.spent import Charge
from orchestrator.watch.seen import Seen
from results_format.states import CellState
from orchestrator.watch.status import CellRow, Monitor


@dataclass(frozen=True)
class Ledger:
    budget_gpu_hours: float  # 0: no cap
    charges: tuple[Charge, ...]  # every run of every attempt
    estimates: Mapping[str, Estimate]  # every planned cell's, by id
    states: Mapping[str, CellState] = field(default_factory=dict)  # every planned cell's, by id
    committed: Mapping[str, float] = field(default_factory=dict)  # cells queued or running: GPU-h still to come
    unit: str = "GPU"  # "CPU" where the cells run here on CPUs (runs_on_cpus): their hours are no GPU's

    @property
    def spent(self) -> float:
        return sum((c.gpu_hours for c in self.charges), 0.0)

    @property
    def running(self) -> float:
        """The part of `spent` held by jobs running now."""
        return sum((c.gpu_hours for c in self.charges if c.live), 0.0)

    @property
    def committed_total(self) -> float:
        return sum(self.committed.values(), 0.0)

    @property
    def left(self) -> float:
        """What the budget leaves for new work: budget - spent - committed."""
        return self.budget_gpu_hours - self.spent - self.committed_total

    def need(self, cell_ids: Iterable[str]) -> float:
        return sum((self.estimates[c].gpu_hours for c in cell_ids), 0.0)


def hours(value: float) -> str:
    """GPU-hours as text: two decimals, two significant digits below 0.1 (tiny test runs)."""
    return f"{value:.2f}" if value == 0 or abs(value) >= 0.1 else f"{value:.2g}"


def held_seconds(charges: Sequence[Charge], results: Mapping[str, object], seen: Seen) -> dict[str, float]:
    """Per cell with a result: the seconds the attempt that wrote it held its GPUs (every run of
    it, from its charges, so far if it is still exiting), else the result's own clock."""
    tried: dict[str, list] = {}
    for sub in spent.attempts(seen.submissions):
        if sub.cell_id in results:  # only those with a result are asked about
            tried.setdefault(sub.cell_id, []).append(sub)
    by_job: dict[tuple[str, str], float] = {}
    for c in charges:
        if c.elapsed_s is not None and c.cell_id in tried:
            by_job[(c.cell_id, c.job_id)] = by_job.get((c.cell_id, c.job_id), 0.0) + c.elapsed_s
    held = {}
    for cell_id, result in results.items():
        result = digest(result)
        if not isinstance(result, ResultDigest):
            continue
        owner = spent.result_attempt(result, tried.get(cell_id, []))
        seconds = by_job.get((cell_id, owner.job_id or "")) if owner else None
        seconds = seconds if seconds is not None else spent.run_seconds(result)
        if seconds is not None:
            held[cell_id] = seconds
    return held


def cell_estimates(plan: Plan, charges: Sequence[Charge], seen: Seen) -> dict[str, Estimate]:
    """Each planned cell's estimate, learnt from the finished cells of its shape where there are some."""
    profile = estimate.profile_pace(plan.cluster)
    cells = dict(zip(plan.cell_ids, plan.cells, strict=True))  # ids are hashes: the plan's, computed once
    paces = estimate.learn(cells, seen.results, held_seconds(charges, seen.results, seen), profile)
    return estimate.estimates(cells, paces, profile)


def build_ledger(plan: Plan, seen: Seen, states: Mapping[str, CellState], budget_gpu_hours: float) -> Ledger:
    """The ledger from what a status refresh saw (pure)."""
    charges = spent.charges(plan, seen.submissions, seen.results, seen.runs, seen.jobs)
    estimates = cell_estimates(plan, charges, seen)
    so_far: dict[str, float] = {}
    for c in charges:
        if c.live:
            so_far[c.cell_id] = so_far.get(c.cell_id, 0.0) + c.gpu_hours
    committed = {cid: max(estimates[cid].gpu_hours - so_far.get(cid, 0.0), 0.0)
                 for cid, state in states.items() if state.is_live}
    return Ledger(budget_gpu_hours, tuple(charges), estimates, dict(states), committed)


def ledger_of(plan: Plan, monitor: Monitor, rows: Iterable[CellRow], budget_gpu_hours: Optional[float] = None,
              executor: Optional[str] = None) -> Ledger:
    """The ledger after a refresh of `monitor` (status.Monitor) that gave `rows`; reads the
    local jobs' logs' times for attempts the refresh did not look at (earlier local attempts).
    `executor`: where the work about to be queued goes (submit's)."""
    seen = monitor.seen
    older = [dataclasses.replace(s, log_out=plan.resolve(s.log_out), log_err=plan.resolve(s.log_err))
             for s in spent.attempts(seen.submissions) if s.executor == "local" and s.job_id not in seen.jobs]
    if older:
        seen = dataclasses.replace(seen, jobs={**seen.jobs, **local_snapshot(older, dt.datetime.now(dt.UTC))})
    budget = plan.cluster.budget_gpu_hours if budget_gpu_hours is None else budget_gpu_hours
    ledger = build_ledger(plan, seen, {r.cell_id: r.state for r in rows}, budget)
    return dataclasses.replace(ledger, unit="CPU") if runs_on_cpus(seen, executor) else ledger


def runs_on_cpus(seen: Seen, executor: Optional[str] = None) -> bool:
    """The study's cells run on this machine's CPUs: this machine has no GPU (each "GPU" of a cell is
    then a process), and the study went (or, `executor`, goes now) to the local executor only (or,
    before any submit, could go nowhere else: no sbatch here). Results made on GPUs elsewhere and copied here keep GPU-hours."""
    if any(getattr(r, "device", None) == "cuda" for r in seen.results.values()):
        return False
    executors = {s.executor for s in spent.attempts(seen.submissions)} | ({executor} if executor else set())
    if "slurm" in executors or (not executors and shutil.which("sbatch")):
        return False
    return gpus_here() == 0


@functools.lru_cache(maxsize=1)
def gpus_here() -> int:
    """This machine's GPUs, asked once a process (`status --watch` refreshes many times)."""
    return this_machine().gpus


def fitting(cell_ids: Sequence[str], estimates: Mapping[str, Estimate], room: float) -> list[str]:
    """The first cells, in the order given, whose estimates add up to at most `room`."""
    chosen, total = [], 0.0
    for cid in cell_ids:
        total += estimates[cid].gpu_hours
        if total > room + 1e-12:
            break
        chosen.append(cid)
    return chosen


def within(ledger: Ledger, todo: list[str], within_budget: bool, retry: bool = False) -> list[str]:
    """The cells due that this submit may queue: all of them when they fit the budget (or there
    is none); the first that fit with `within_budget`; else BudgetError saying how many fit."""
    if within_budget and ledger.budget_gpu_hours <= 0:
        raise UserError("--within-budget needs a budget: pass --budget-gpu-hours N, or set budget_gpu_hours "
                        "in [cluster] of the study or its profile (then plan again)")
    if not todo or ledger.budget_gpu_hours <= 0 or ledger.need(todo) <= ledger.left + 1e-12:
        return todo
    fit = fitting(todo, ledger.estimates, ledger.left)
    if within_budget:
        return fit
    what = "failed cell(s) to retry" if retry else "cell(s) due"
    raise BudgetError(
        f"over budget: the {len(todo)} {what} need about {hours(ledger.need(todo))} {ledger.unit}-h, but the study has "
        f"spent {hours(ledger.spent)} of its {ledger.budget_gpu_hours:g} {ledger.unit}-h budget"
        + (f" and {hours(ledger.committed_total)} more is committed to cells queued or running" if ledger.committed else "")
        + f", leaving {hours(max(ledger.left, 0.0))}: {len(fit)} of them fit, in plan order; "
        "`submit --within-budget` queues those, or raise the budget (--budget-gpu-hours N, or [cluster] "
        "budget_gpu_hours and plan again)")


def spent_text(ledger: Ledger) -> str:
    """"0.42 GPU-h spent over 12 job(s) in 13 run(s) (11 from sacct, 2 from result files), 0.05 of it
    running now": runs are counted where a requeued job ran more than once."""
    jobs = {(c.cell_id, c.job_id) for c in ledger.charges}
    sources = Counter(c.source for c in ledger.charges)
    where = ", ".join(f"{n} {SOURCE_WORDS[s]}" for s, n in sources.items())
    runs = f" in {len(ledger.charges)} run(s)" if len(ledger.charges) > len(jobs) else ""
    text = f"{hours(ledger.spent)} {ledger.unit}-h spent over {len(jobs)} job(s){runs}" + (f" ({where})" if where else "")
    return text + (f", {hours(ledger.running)} of it running now" if ledger.running else "")


SOURCE_WORDS = {"sacct": "from sacct", "squeue": "from squeue", "result": "from result files",
                "process": "from local processes", "limit": "charged their time limit (elapsed unrecorded)",
                "unrecorded": "running, not timed yet"}


def estimate_text(ledger: Ledger, cell_ids: Sequence[str]) -> str:
    """"1.30 GPU-h estimated for 20 cells (8 from measured pace, 12 from the repo's paces)": the sources used."""
    count = Counter(ledger.estimates[c].source for c in cell_ids)
    said = {estimate.MEASURED: "from measured pace", estimate.TABLE: "from the repo's paces",
            estimate.PROFILE: "from the profile"}
    return (f"{hours(ledger.need(cell_ids))} {ledger.unit}-h estimated for {len(cell_ids)} cell(s) ("
            + ", ".join(f"{count[source]} {words}" for source, words in said.items()
                        if count[source] or source != estimate.TABLE) + ")")


def status_lines(ledger: Ledger) -> list[str]:
    """What status says of GPU-hours: spent, still to come, the budget."""
    live = [c for c, s in ledger.states.items() if s.is_live]
    waiting = [c for c, s in ledger.states.items() if s in (CellState.NOT_SUBMITTED, CellState.SKIPPED)]
    lines = [f"{ledger.unit}-hours: {spent_text(ledger)}"]
    if live:
        lines.append(f"  queued or running: {hours(ledger.committed_total)} {ledger.unit}-h still to come of "
                     f"{estimate_text(ledger, live)}")
    if waiting:
        lines.append(f"  not submitted: {estimate_text(ledger, waiting)}")
    if ledger.budget_gpu_hours > 0:
        lines.append(f"  budget {ledger.budget_gpu_hours:g} {ledger.unit}-h: {hours(ledger.left)} left after what is spent "
                     "and committed")
    return lines


def plan_estimates(plan: Plan) -> dict[str, Estimate]:
    """At `plan`: each cell's estimate, learnt from the result files already in the results dir
    (planned again after some cells ran), each held for its run's own clock; an unreadable file
    teaches nothing (`status` names it)."""
    found = ResultCache(Path(plan.results_dir)).read(plan.cell_ids)
    results = {cell_id: result for cell_id, result in found.items() if isinstance(result, ResultDigest)}
    return cell_estimates(plan, [], Seen(results=results))


def plan_budget_text(plan: Plan, estimates: Mapping[str, Estimate]) -> str:
    """The budget beside the plan's estimate (nothing spent counted: `status` says what was)."""
    budget = plan.cluster.budget_gpu_hours
    if budget <= 0:
        return ""
    total = sum(e.gpu_hours for e in estimates.values())
    head = f"budget {budget:g} GPU-h ([cluster] budget_gpu_hours): the plan's estimate, {hours(total)} GPU-h,"
    if total <= budget:
        return f"{head} fits"
    fit = fitting(plan.cell_ids, estimates, budget)
    return (f"{head} is above it: {len(fit)} of {len(plan.cells)} cells fit, in plan order; `submit` refuses "
            "more, `submit --within-budget` queues those")


def submit_text(ledger: Ledger, queued: Sequence[str]) -> str:
    """What `submit` says of GPU-hours: spent before it, what it queued, and the budget left."""
    text = f"{ledger.unit}-hours: {spent_text(ledger)}"
    if queued:
        text += f"; this submit: {estimate_text(ledger, queued)}"
    if ledger.budget_gpu_hours > 0:
        text += f"; budget {ledger.budget_gpu_hours:g} {ledger.unit}-h, {hours(ledger.left - ledger.need(queued))} left"
    return text


def as_json(ledger: Ledger) -> dict:
    """`status --json`'s gpu_hours: the totals, every run charged, every cell's estimate."""
    return {
        "spent": ledger.spent, "running": ledger.running, "committed": ledger.committed_total,
        "budget": ledger.budget_gpu_hours or None, "left": ledger.left if ledger.budget_gpu_hours > 0 else None,
        "charges": [c.to_dict() for c in ledger.charges],
        "estimates": {cid: {"gpu_hours": e.gpu_hours, "from": e.source}
                      for cid, e in ledger.estimates.items()},
    }
