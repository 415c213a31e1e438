"""submit: queue what needs it (or --retry-failed what failed), then return, or --wait."""
from __future__ import annotations

import sys
import time
from pathlib import Path

from rich.console import Console
from rich.text import Text
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from results_format.text import visible
from orchestrator.budget import budget
from orchestrator.commands import display
from orchestrator.watch import overview
from orchestrator.commands import settle
from orchestrator.commands.common import (add_interval, interval_for, gpu_hours, next_command, planned, print_errors,
                                          print_warnings)
from orchestrator.plan import private_dir
from orchestrator.plan.plan import Plan
from results_format.states import CellState
from orchestrator.watch.status import Monitor
from orchestrator.submit import EXECUTORS, submit


# --wait on the local executor: a look at /proc and the results dir, no scheduler to spare; at the
# profile's pace (10 s by default) the wait went on for up to 10 s after the last cell ended
LOCAL_POLL_S = 1.0


def register(verbs, common) -> None:
    p = verbs.add_parser("submit", parents=[common], help="queue the cells never submitted; return at once")
    p.add_argument("--executor", default="auto", choices=EXECUTORS, help="auto: slurm where sbatch exists, else local")
    p.add_argument("--retry-failed", action="store_true",
                   help="requeue only the cells that failed, timed out or were cancelled")
    p.add_argument("--time-min", type=int, metavar="MIN", help="time limit of the jobs this submit queues "
                   "(e.g. longer for cells that timed out); default: the plan's")
    p.add_argument("--pack", type=int, metavar="N", help="SLURM: each array task runs up to N cells of one shape, "
                   "one after another (one queue wait for N cells; N x the time limit); default: the plan's pack")
    p.add_argument("--test-only", action="store_true",
                   help="have `sbatch --test-only` check each array's request; queue nothing")
    p.add_argument("--budget-gpu-hours", type=gpu_hours, metavar="N", help="the most GPU-hours the study may "
                   "spend, spent ones included (default: [cluster] budget_gpu_hours of the plan; 0 there: no cap)")
    p.add_argument("--within-budget", action="store_true",
                   help="queue only the first cells, in plan order, that fit the budget")
    p.add_argument("--wait", action="store_true", help="show progress until every cell has ended")
    p.add_argument("--exclusive", action="store_true", help="local executor: run one cell at a time, not side by "
                   "side on the machine's GPUs (for timings with the machine to themselves)")
    add_interval(p, "polls with --wait")
    settle.add_arguments(p)
    p.set_defaults(run=run)


def run(args, console: Console) -> int:
    plan = planned(args)
    print_warnings(private_dir.check(Path(plan.results_dir)))
    if args.settle:
        queued = settle.run_settle(args, console, plan)
        if not (args.wait and queued):
            return 0
        waited = wait_for(queued, console, interval_for(args, queued))
        console.print(f"next: {next_command('collect', args, plan.study)}", markup=False, highlight=False)
        return waited
    settle.refuse_without_settle(args)
    report = submit(plan, args.executor, retry_failed=args.retry_failed, time_min=args.time_min,
                    test_only=args.test_only, budget_gpu_hours=args.budget_gpu_hours,
                    within_budget=args.within_budget, pack=args.pack, exclusive=args.exclusive)
    if args.test_only:
        for line in report.checks:
            console.print(f"sbatch --test-only {line}", markup=False, highlight=False)
        console.print("nothing queued (--test-only)")
        return 0
    chunks = f" in {report.sbatch_calls} sbatch call(s)" if report.sbatch_calls else ""
    chunks += f", up to {report.pack} a task (--pack)" if report.pack > 1 and report.submitted else ""
    settled = report.not_queued - report.retryable - len(report.not_here) - report.over_budget  # each said below
    console.print(f"{report.executor}: submitted {len(report.submitted)} cell(s){chunks}"
                  f"{' (--retry-failed)' if args.retry_failed else ''}; {settled} done, queued or not due")
    if report.over_budget:
        console.print(f"{report.over_budget} cell(s) due were left out: they do not fit the budget (--within-budget)")
    if report.ledger is not None:
        console.print(budget.submit_text(report.ledger, list(report.submitted)))
    if report.not_here:
        by_why: dict[str, list] = {}
        for cell_id, why in report.not_here:
            by_why.setdefault(why, []).append(plan.cell(cell_id))
        console.print(display.skipped_lines(by_why))
    if report.retryable:
        console.print(f"{report.retryable} cell(s) ended failed, timeout or cancelled and were not requeued: "
                      "`status` says why, `submit --retry-failed` requeues them")
    code = print_errors(list(report.errors))
    if args.wait:
        local = report.executor == "local" and args.interval is None
        try:
            waited = wait_for(plan, console, LOCAL_POLL_S if local else interval_for(args, plan))
        except KeyboardInterrupt:
            print("stopped watching; the queued cells keep running: `status` shows them, `cancel` stops them",
                  file=sys.stderr)
            return 130
        console.print(f"next: {next_command('collect', args, plan.study)}", markup=False, highlight=False)
        return code or waited
    return code or 0


def wait_for(plan: Plan, console: Console, interval: float) -> int:
    """Poll (one squeue, at most one sacct each time) until no cell is live; 1 if any cell that was queued
    is not done/oom (cells skipped here, or left out by --within-budget, were not)."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    monitor = Monitor(plan)
    warned = False
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("cells", total=len(plan.cells))
        while True:
            report = monitor.refresh()
            if report.warning and not warned:
                progress.console.print(Text.assemble(("warning:", "yellow"), f" {visible(report.warning)}"))
                warned = True
            rows = report.rows
            running = sum(r.state == "running" for r in rows)
            waiting = [r for r in rows if r.state.is_live or r.state == CellState.UNKNOWN]
            progress.update(task, completed=len(rows) - len(waiting), description=f"cells ({running} running)")
            if not waiting:
                break
            time.sleep(interval)
    bad = [r for r in rows if not r.state.is_final and r.state not in (CellState.SKIPPED, CellState.NOT_SUBMITTED)]
    for r in bad[:overview.SMALL_STUDY]:  # error texts are shown as text: "[/pytorch/...]" is no markup
        console.print(Text.assemble((r.state, "red"), visible(f" {r.cell_id} {r.label}: {r.detail}")))
    if len(bad) > overview.SMALL_STUDY:  # the rest by reason, a line each: 100,000 failing alike take one
        console.print(f"... and {len(bad) - overview.SMALL_STUDY:,} more that did not end well:")
        notes = display.failure_notes(bad[overview.SMALL_STUDY:])
        if notes:
            console.print(notes)
    return 1 if bad else 0
