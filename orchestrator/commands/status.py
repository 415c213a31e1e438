"""status: every cell's state, why it waits or why it ended; --watch refreshes in place."""
from __future__ import annotations

import dataclasses
import json
import time

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from orchestrator import budget, display
from orchestrator.commands.common import add_interval, interval_for, planned, print_errors, print_warnings
from orchestrator.states import CellState
from orchestrator.status import Monitor


def register(verbs, common) -> None:
    p = verbs.add_parser("status", parents=[common], help="state of every cell, and why it ended")
    p.add_argument("--watch", action="store_true", help="refresh in place until every cell has ended")
    add_interval(p, "refreshes")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def run(args, console: Console) -> int:
    plan = planned(args)
    monitor = Monitor(plan)
    report = monitor.refresh()
    if args.json:
        print(json.dumps({"study": plan.study, "warning": report.warning, "errors": report.errors,
                          "skipped_files": report.skipped_files, "cells": [dataclasses.asdict(r) for r in report.rows],
                          "gpu_hours": budget.as_json(budget.ledger(plan, monitor, report.rows))}, indent=1))
        return print_errors(report.errors) or 0
    if report.warning:
        console.print(Text.assemble(("warning:", "yellow"), f" {report.warning}"), soft_wrap=True)
    print_warnings(report.skipped_files)
    if args.watch:
        with Live(view(plan, monitor, report, console.width), console=console, auto_refresh=False) as live:
            while any(not r.state.is_terminal and r.state != CellState.NOT_SUBMITTED for r in report.rows):
                time.sleep(interval_for(args, plan))
                report = monitor.refresh()
                live.update(view(plan, monitor, report, console.width), refresh=True)
    else:
        console.print(view(plan, monitor, report, console.width))
    return print_errors(report.errors) or 0


def view(plan, monitor: Monitor, report, width: int) -> Group:
    """The status view, then the study's GPU-hours: spent, still to come, the budget."""
    lines = budget.status_lines(budget.ledger(plan, monitor, report.rows))
    return Group(display.status_view(plan.study, report.rows, width), Text("\n".join(lines)))
