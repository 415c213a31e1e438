"""submit --settle: queue the extra repeats that settle the answers' inconclusive comparisons
(orchestrator.settle), --dry-run to print the plan and its cost only. The plan.json grows by those
cells (written once the budget allows them, under submit's lock); nothing measured runs again."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional

from rich.console import Console
from rich.text import Text

from jobs.core.layout import STUDY_FILE
from jobs.core.regular_file import PLAN_MAX, read_regular
from orchestrator.budget import budget
from results_format.text import visible
from orchestrator.errors import UserError
from orchestrator.plan.plan import Plan, install_plan
from orchestrator.slurm.sbatch import render_sbatch
from collect.settle_rule import DEFAULT_MAX_REPEATS  # pandas-free: submit's start-up stays light
from orchestrator.submit import submit


def add_arguments(p) -> None:
    p.add_argument("--settle", action="store_true", help="queue the extra repeats that would settle the answers' "
                   "inconclusive comparisons (README: When an answer is inconclusive)")
    p.add_argument("--dry-run", action="store_true", help="with --settle: print the runs and their cost; queue nothing")
    p.add_argument("--max-repeats", type=_runs, default=DEFAULT_MAX_REPEATS, metavar="N",
                   help=f"with --settle: at most N runs of a configuration in all (default {DEFAULT_MAX_REPEATS})")


def _runs(text: str) -> int:
    if not text.isdigit() or int(text) < 2:
        raise argparse.ArgumentTypeError(f"must be a whole number of runs >= 2, got {text!r}")
    return int(text)


def refuse_without_settle(args) -> None:
    if args.dry_run or args.max_repeats != DEFAULT_MAX_REPEATS:
        raise UserError("--dry-run and --max-repeats go with --settle (a plain submit's dry run: plan --sbatch)")


def run_settle(args, console: Console, plan: Plan) -> Optional[Plan]:
    """Print the settle plan; unless --dry-run, queue it. Returns the plan that holds the repeats queued
    (None: none queued), for --wait."""
    from collect.settle import answers_of  # pandas: only for --settle
    from orchestrator import settle

    for flag in ("retry_failed", "test_only", "within_budget"):
        if getattr(args, flag):
            raise UserError(f"--{flag.replace('_', '-')} does not go with --settle (past the budget it refuses: "
                            "lower --max-repeats or raise --budget-gpu-hours)")

    found, bigger, estimates = settle.plan_for(plan, answers_of(Path(plan.results_dir)), args.max_repeats)
    for line in settle.lines(found, estimates):
        console.print(Text(visible(line)))
    if args.dry_run or not found.cells:
        console.print("nothing queued" + (" (--dry-run)" if args.dry_run else ""))
        return None
    report = submit(bigger, args.executor, time_min=args.time_min, budget_gpu_hours=args.budget_gpu_hours,
                    only={c.cell_id for c in found.cells}, before_queue=lambda: _install(plan, bigger),
                    pack=args.pack, exclusive=args.exclusive)
    console.print(f"{report.executor}: submitted {len(report.submitted)} new repeat(s) (--settle)")
    if report.ledger is not None:
        console.print(budget.submit_text(report.ledger, list(report.submitted)))
    return bigger if report.submitted else None


def _install(plan: Plan, bigger: Plan) -> None:
    """plan.json with the new repeats, its study.toml as it was, each array's script for its cells now."""
    source = read_regular(Path(plan.results_dir) / STUDY_FILE, "study file", PLAN_MAX).decode()
    install_plan(bigger, source, {a.name: render_sbatch(bigger, a, len(a.cell_ids)) for a in bigger.arrays})
