"""Queue the cells that need it, and return.

`submit` queues cells never submitted; `submit --retry-failed` those that ended failed, timed
out or were cancelled (optionally with a longer time limit); with a GPU-hour budget, only what
fits it (orchestrator.budget.budget). On SLURM: one sbatch per array
chunk (arrays above MaxArraySize are split, each chunk indexed from 0), each preceded by an
Intent line in the registry (see registry.py). Off-cluster: one detached local queue process.
The whole decision and submission holds the results dir's submit lock.
"""
from __future__ import annotations

import dataclasses
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from results_format import registry
from jobs.core.regular_file import NotRegular, open_regular
from orchestrator.budget import budget
from orchestrator.local import machine_lock
from orchestrator.slurm import slurm_client
from orchestrator.budget.budget import Ledger
from orchestrator.errors import RegistryError, SchedulerError, UserError
from orchestrator.plan import private_dir
from orchestrator.plan.cluster import MAX_TIME_MIN, packing
from orchestrator.plan.plan import ArrayPlan, Plan, check_results_path
from orchestrator.local.queue import QUEUE_LOG
from orchestrator.slurm.recovery import INTENT_GRACE_S
from orchestrator.local.machine import not_here, this_machine
from results_format.registry import Abandoned, Intent, Skipped
from orchestrator.slurm.sbatch import job_name, render_sbatch
from orchestrator.slurm.slurm_client import SlurmClient
from results_format.states import CellState
from orchestrator.watch.status import Monitor, Report

EXECUTORS = ("auto", "slurm", "local")
SETTLE_POLL_S = 2.0


@dataclass(frozen=True)
class SubmitReport:
    executor: str
    submitted: tuple[str, ...]  # cell ids
    not_queued: int  # cells done, oom, still live, or not due
    sbatch_calls: int = 0  # one per array chunk
    retryable: int = 0  # ended badly and not requeued (plain submit): --retry-failed would
    errors: tuple[str, ...] = ()  # unreadable result files: their cells were left alone
    checks: tuple[str, ...] = ()  # --test-only: SLURM's verdict per array
    not_here: tuple[tuple[str, str], ...] = ()  # local executor: (cell id, why) of cells this machine cannot run
    ledger: Optional[Ledger] = None  # the study's GPU-hours before this submit: spent, committed, estimates
    over_budget: int = 0  # cells due that --within-budget left out
    pack: int = 1  # the most cells one SLURM array task runs, one after another


def pick_executor(choice: str) -> str:
    if choice not in EXECUTORS:
        raise UserError(f"--executor must be one of {list(EXECUTORS)}, got {choice!r}")
    if choice == "auto":
        return "slurm" if slurm_client.on_slurm() else "local"
    if choice == "slurm" and not slurm_client.on_slurm():
        raise UserError("--executor slurm: no sbatch on PATH; run on a SLURM login node or use --executor local")
    return choice


def check_writable(plan: Plan) -> None:
    results_dir = Path(plan.results_dir)
    try:
        private_dir.make_dirs(plan.log_dir)
        with tempfile.NamedTemporaryFile(dir=results_dir, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise RegistryError(f"cannot write in the results dir {results_dir} ({exc.strerror}); fix its permissions, "
                            "or plan again with --results DIR") from exc


def check_time(plan: Plan, time_min: Optional[int]) -> None:
    if time_min is not None and not plan.cluster.signal_delay_s < time_min * 60 <= MAX_TIME_MIN * 60:
        raise UserError(f"--time-min must be > {plan.cluster.signal_delay_s / 60:g} "
                        f"([cluster] signal_delay_s = {plan.cluster.signal_delay_s}) and at most {MAX_TIME_MIN} "
                        f"(a year: SLURM makes a longer limit UNLIMITED), got {time_min}")


def check_pack(plan: Plan, pack: Optional[int]) -> int:
    """The cells a task runs: --pack where given, else the plan's [cluster] pack."""
    if pack is None:
        return plan.cluster.pack
    if pack < 1:
        raise UserError(f"--pack must be >= 1 (cells one array task runs one after another), got {pack}")
    return pack


def settle(monitor: Monitor) -> Report:
    """Statuses with every interrupted submit resolved: its jobs found, or its intent abandoned."""
    deadline = time.monotonic() + INTENT_GRACE_S + 5
    report = monitor.refresh(locked=True)
    while report.in_flight and time.monotonic() < deadline:
        time.sleep(SETTLE_POLL_S)
        report = monitor.refresh(locked=True)
    return report


def submit(plan: Plan, executor: str = "auto", *, retry_failed: bool = False, time_min: Optional[int] = None,
           test_only: bool = False, client: Optional[SlurmClient] = None, budget_gpu_hours: Optional[float] = None,
           within_budget: bool = False, only: Optional[Collection[str]] = None,
           before_queue: Optional[Callable[[], None]] = None, pack: Optional[int] = None,
           exclusive: bool = False) -> SubmitReport:
    """`budget_gpu_hours`: the cap for this submit (None: the plan's [cluster] budget_gpu_hours, 0 none).
    `pack`: cells of one shape each SLURM array task runs one after another (None: the plan's [cluster] pack).
    `only`: queue none but these cells (`submit --settle`'s new repeats); `before_queue`: called once the
    budget allows them, before they are queued (`--settle` writes the plan that holds them). `exclusive`:
    the local executor runs one cell at a time, not side by side on the machine's GPUs."""
    executor = pick_executor(executor)
    if test_only and executor != "slurm":
        raise UserError("--test-only asks sbatch to check the request: it needs SLURM (sbatch on PATH)")
    check_time(plan, time_min)
    if pack is not None and pack > 1 and executor != "slurm":
        raise UserError("--pack packs the cells of SLURM array tasks; the local executor has no queue wait to save")
    pack = check_pack(plan, pack)
    if executor == "slurm":  # the dir may have been moved since `plan` checked its path
        check_results_path(Path(plan.results_dir))
    check_writable(plan)
    client = client or SlurmClient()
    with registry.submit_lock(Path(plan.results_dir)):
        monitor = Monitor(plan, client)
        report = settle(monitor)
        if report.registry_errors:  # what is queued cannot be known: queue nothing
            raise RegistryError(report.registry_errors[0])
        usable = [r for r in report.rows if r.cell_id not in report.unreadable]  # never overwrite those
        todo = [r.cell_id for r in usable if is_due(r.state, retry_failed) and (only is None or r.cell_id in only)]
        retryable = 0 if retry_failed else sum(r.state.is_retryable for r in usable)
        if test_only:
            checks = test_arrays(plan, todo, client, time_min, pack)
            return SubmitReport(executor, (), len(report.rows), checks=tuple(checks))
        calls, not_here = 0, list[tuple[str, str]]()
        if todo and executor == "local":
            todo, not_here = skip_what_cannot_run_here(plan, todo, report)
        ledger = budget.ledger_of(plan, monitor, report.rows, budget_gpu_hours, executor)
        due = len(todo)
        todo = budget.within(ledger, todo, within_budget, retry_failed)
        if todo and before_queue is not None:
            before_queue()
        if todo and executor == "slurm":
            calls = queue_on_slurm(plan, todo, client, time_min, pack)
        elif todo:
            start_local_queue(plan, todo, exclusive)
    return SubmitReport(executor, tuple(todo), len(report.rows) - len(todo), calls, retryable,
                        tuple(report.result_errors), not_here=tuple(not_here), ledger=ledger,
                        over_budget=due - len(todo), pack=pack if executor == "slurm" else 1)


def skip_what_cannot_run_here(plan: Plan, todo: list[str], report: Report) -> tuple[list[str], list[tuple[str, str]]]:
    """Split the cells due into those this machine can run and those it cannot (with why);
    the latter are recorded as skipped (once per reason), so status and collect say why."""
    skipped = {cell.cell_id: why for why, cells in not_here(map(plan.cell, todo), this_machine()).items()
               for cell in cells}
    shown = {r.cell_id: r.detail for r in report.rows if r.state == CellState.SKIPPED}
    new = [Skipped(cid, why, registry.now_iso()) for cid, why in skipped.items() if shown.get(cid) != why]
    registry.append_entries(Path(plan.results_dir), new)
    return [cid for cid in todo if cid not in skipped], list(skipped.items())


def is_due(state: CellState, retry_failed: bool) -> bool:
    """A plain submit queues the cells never submitted (and those skipped on a machine that could
    not run them); --retry-failed those that ended without an answer."""
    if retry_failed:
        return state.is_retryable
    return state in (CellState.NOT_SUBMITTED, CellState.SKIPPED)


def chunked(cell_ids: list[str], size: int) -> list[list[str]]:
    return [cell_ids[i:i + size] for i in range(0, len(cell_ids), size)]


def array_chunks(plan: Plan, todo: list[str], limit: int) -> list[tuple[ArrayPlan, list[str]]]:
    """Per array, in plan order, its due cells in chunks of at most `limit`."""
    due = set(todo)
    return [(array, chunk) for array in plan.arrays
            for chunk in chunked([c for c in array.cell_ids if c in due], limit)]


def array_limit(plan: Plan, client: SlurmClient) -> int:
    cluster = client.max_array_size()
    return min(plan.cluster.max_array_size, cluster) if plan.cluster.max_array_size else cluster


def queue_on_slurm(plan: Plan, todo: list[str], client: SlurmClient, time_min: Optional[int], pack: int = 1) -> int:
    """Intent line, one sbatch, Submission lines: per chunk (of at most MaxArraySize tasks, `pack`
    cells each). Returns the number of sbatch calls."""
    from orchestrator.slurm.submitit_adapter import submit_slurm_array  # submitit: only when needed

    results_dir = Path(plan.results_dir)
    calls = 0
    for array, chunk in array_chunks(plan, todo, array_limit(plan, client) * pack):
        token = secrets.token_hex(4)
        registry.append_entries(results_dir, [Intent(token, array.name, job_name(plan, array, token), tuple(chunk),
                                             registry.now_iso(), plan.recorded(plan.log_dir),
                                             pack=min(pack, len(chunk)) if pack > 1 else None)])
        try:
            calls += 1
            subs = submit_slurm_array(plan, array, [plan.cell(c) for c in chunk], token, time_min, chunk, pack)
        except SchedulerError as exc:
            if "timed out" not in str(exc):  # a timeout may still have queued it: recovery decides
                registry.append_entries(results_dir, [Abandoned(token, registry.now_iso(), str(exc))])
            raise SchedulerError(explain_refusal(str(exc), client, calls - 1)) from exc
        registry.append_entries(results_dir, subs)
    return calls


def explain_refusal(message: str, client: SlurmClient, queued_chunks: int) -> str:
    lower = message.lower()
    if "invalid partition" in lower:
        message += f"; partitions here: {', '.join(client.partitions()) or '?'} (set partition in the profile or study)"
    elif "time limit" in lower:
        message += "; lower time_min (or --time-min) or use a partition that allows it (`sinfo -s`)"
    elif "account" in lower or "qos" in lower:
        message += "; set account/qos in the profile or study (`sacctmgr show assoc user=$USER`)"
    if queued_chunks:
        message += f" ({queued_chunks} earlier array chunk(s) were queued; fix and submit again for the rest)"
    return message


def test_arrays(plan: Plan, todo: list[str], client: SlurmClient, time_min: Optional[int], pack: int = 1) -> list[str]:
    """sbatch --test-only for each array that would be sent (all arrays if none is due)."""
    checks = []
    pairs = (array_chunks(plan, todo, array_limit(plan, client) * pack) if todo
             else [(a, list(a.cell_ids)) for a in plan.arrays])
    for array, chunk in pairs:
        shape = array.shape_for(time_min)
        packed = packing(len(chunk), pack, shape.time_min, plan.cluster.max_time_min)
        text = render_sbatch(plan, array, packed.tasks, shape=dataclasses.replace(shape, time_min=packed.time_min))
        try:
            verdict = client.test_only(text, plan.log_dir)
        except SchedulerError as exc:
            raise SchedulerError(explain_refusal(f"SLURM refused array {array.name}: {exc}", client, 0)) from exc
        tasks = f" in {packed.tasks} tasks" if packed.cells_per_task > 1 else ""
        checks.append(f"{array.name} ({len(chunk)} cells{tasks}): {verdict}")
    return checks


def start_local_queue(plan: Plan, cell_ids: list[str], exclusive: bool = False) -> None:
    """Start the queue detached (its own session: it outlives this shell) and wait until it
    has recorded its cells, so that a `status` or `submit` right after sees them."""
    machine_lock.check_lock_dir()
    log_path = plan.log_dir / QUEUE_LOG
    try:
        log = open_regular(log_path, "local queue log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW)
    except NotRegular as exc:
        raise UserError(f"{exc}; move it aside") from exc
    with log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "orchestrator.local.queue", plan.results_dir, *(["--exclusive"] if exclusive else []),
             *cell_ids],
            stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True, start_new_session=True,
        )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("queued"):
        proc.wait()
        raise SchedulerError(f"the local queue did not start (exit {proc.returncode}); see {log_path}")
