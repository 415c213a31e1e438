"""submit --settle: queue the extra repeats that settle the answers' inconclusive comparisons
(orchestrator.settle), --dry-run to print the plan and its cost only. The plan.json grows by those
cells (written once the budget allows them, under submit's lock); nothing measured runs again."""
from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Optional

from rich.console import Console
from rich.text import Text

from jobs.core.layout import STUDY_FILE
from jobs.core.regular_file import PLAN_MAX, read_regular
from orchestrator.budget import budget
from results_format.text import visible
from orchestrator.commands.common import print_warnings
from orchestrator.errors import UserError
from orchestrator.plan.plan import Plan, install_plan
from orchestrator.slurm.sbatch import render_sbatch
from collect.settle_rule import DEFAULT_MAX_REPEATS  # pandas-free: submit's start-up stays light
from orchestrator.local.machine import this_machine
from orchestrator.submit import pick_executor, submit


def add_arguments(p) -> None:
    p.add_argument("--settle", action="store_true", help="queue the extra repeats that would settle the answers' "
                   "inconclusive comparisons (docs/answers.md: When an answer is inconclusive)")
    p.add_argument("--dry-run", action="store_true", help="with --settle: print the runs and their cost; queue nothing")
    p.add_argument("--max-repeats", type=_runs, default=DEFAULT_MAX_REPEATS, metavar="N",
                   help=f"with --settle: at most N runs of a configuration in all (default {DEFAULT_MAX_REPEATS})")


def _runs(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 2:  # "٣" is a digit to Python, no number to a user
        raise argparse.ArgumentTypeError(f"must be a whole number of runs >= 2, got {text!r}")
    return int(text)


def refuse_without_settle(args) -> None:
    if args.dry_run or args.max_repeats != DEFAULT_MAX_REPEATS:
        raise UserError("--dry-run and --max-repeats go with --settle (a plain submit's dry run: plan --sbatch)")


def run_settle(args, console: Console, plan: Plan) -> Optional[Plan]:
    """Print the settle plan; unless --dry-run, queue it. Returns the plan that holds the repeats queued
    (None: none queued), for --wait."""
    from collect.load import SkippedFile
    from collect.settle import answers_of  # pandas: only for --settle
    from orchestrator import settle

    for flag in ("retry_failed", "test_only", "within_budget"):
        if getattr(args, flag):
            raise UserError(f"--{flag.replace('_', '-')} does not go with --settle (past the budget it refuses: "
                            "lower --max-repeats or raise --budget-gpu-hours)")

    with warnings.catch_warnings(record=True) as caught:  # a file skipped (a FIFO): one `warning:` line, as collect's
        warnings.simplefilter("always", SkippedFile)
        answers = answers_of(Path(plan.results_dir))
    print_warnings([str(w.message) for w in caught if issubclass(w.category, SkippedFile)])
    found, bigger, estimates = settle.plan_for(plan, answers, args.max_repeats)
    for line in settle.lines(found, estimates):
        console.print(Text(visible(line)))
    if not args.dry_run and (why := settle.elsewhere(found, pick_executor(args.executor), this_machine().gpus)):
        raise UserError(why)
    if args.dry_run or not found.steps:
        console.print("nothing queued" + (" (--dry-run)" if args.dry_run else ""))
        return None
    new = {c.cell_id for c in found.cells}  # and the planned runs no job ever ran: due like them
    report = submit(bigger, args.executor, time_min=args.time_min, budget_gpu_hours=args.budget_gpu_hours,
                    only=new | settle.planned_runs(plan, found),
                    before_queue=(lambda: _install(plan, bigger)) if new else None, pack=args.pack,
                    exclusive=args.exclusive)
    if not report.submitted:
        console.print("nothing queued: every run the rule asks for has its job")
        return None
    fresh = sum(cell_id in new for cell_id in report.submitted)
    earlier = f" and {len(report.submitted) - fresh} planned earlier that no job had run" if len(report.submitted) > fresh else ""
    console.print(f"{report.executor}: submitted {fresh} new repeat(s){earlier} (--settle)")
    if report.ledger is not None:
        console.print(budget.submit_text(report.ledger, list(report.submitted)))
    return bigger if report.submitted else None


def _install(plan: Plan, bigger: Plan) -> None:
    """plan.json with the new repeats, its study.toml as it was, each array's script for its cells now."""
    source = read_regular(Path(plan.results_dir) / STUDY_FILE, "study file", PLAN_MAX).decode()
    install_plan(bigger, source, {a.name: render_sbatch(bigger, a, len(a.cell_ids)) for a in bigger.arrays})
