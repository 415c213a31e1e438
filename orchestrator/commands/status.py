"""status: how a study's cells are doing. A summary at any size (counts per state and per array,
the cells that need a look, why the failed ones ended); every cell of a small study, or those
asked for (--all, --state, --grep); --json for scripts; --watch refreshes in place."""
from __future__ import annotations

import argparse
import json
import time

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from results_format.text import visible
from orchestrator.budget import budget
from orchestrator.commands import display
from orchestrator.watch import overview, readiness
from orchestrator.commands.common import add_interval, interval_for, planned, print_errors, print_warnings
from results_format.states import CellState
from orchestrator.watch.status import Monitor, Report


def register(verbs, common) -> None:
    p = verbs.add_parser("status", parents=[common], help="how the cells are doing: counts, and the cells that "
                                                          "need a look (failed, running, waiting too long)")
    p.add_argument("--watch", action="store_true", help="refresh in place until every cell has ended")
    add_interval(p, "refreshes")
    p.add_argument("--all", action="store_true", help=f"list every cell (a study of up to {overview.SMALL_STUDY} "
                                                      "cells always does)")
    p.add_argument("--state", action="append", type=state_arg, default=[], metavar="STATE",
                   help="list the cells in this state (again for more states): "
                        + ", ".join(s.value.replace(" ", "-") for s in CellState))
    p.add_argument("--grep", metavar="TEXT", help="list the cells whose id, label, state, job, node or detail "
                                                  "holds TEXT (any case)")
    p.add_argument("--json", action="store_true", help="machine-readable: the counts, a record per cell (those "
                                                       "--state and --grep choose), the GPU-hours")
    p.set_defaults(run=run)


def state_arg(text: str) -> CellState:
    try:
        return overview.state_named(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args, console: Console) -> int:
    plan = planned(args)
    monitor = Monitor(plan)
    report = monitor.refresh()
    if args.json:
        print(json_text(plan, monitor, report, args))
        return print_errors(report.errors) or 0
    if report.warning:
        console.print(Text.assemble(("warning:", "yellow"), f" {visible(report.warning)}"), soft_wrap=True)
    print_warnings(report.skipped_files)
    if args.watch:
        with Live(live_view(plan, monitor, report, args, console.width), console=console, auto_refresh=False) as live:
            while any(not r.state.is_terminal and r.state != CellState.NOT_SUBMITTED for r in report.rows):
                time.sleep(interval_for(args, plan))
                report = monitor.refresh()
                live.update(live_view(plan, monitor, report, args, console.width), refresh=True)
    else:
        for part in parts(plan, monitor, report, args, console.width):
            if isinstance(part, str):
                console.out(part, highlight=False)  # plain text: fast at any length
            else:
                console.print(part)
    return print_errors(report.errors) or 0


def listed(args, report: Report) -> bool:
    return bool(args.all or args.state or args.grep) or len(report.rows) <= overview.SMALL_STUDY


def live_view(plan, monitor: Monitor, report: Report, args, width: int) -> Group:
    return Group(*(Text(p, no_wrap=True, overflow="crop") if isinstance(p, str) else p
                   for p in parts(plan, monitor, report, args, width)))


def parts(plan, monitor: Monitor, report: Report, args, width: int) -> list:
    """The summary, or the cells listed; then the study's GPU-hours: spent, still to come, the budget.
    A list longer than display.RICH_ROWS is a str of plain text (rich would lay it out for minutes)."""
    lines = Text("\n".join(budget.status_lines(budget.ledger_of(plan, monitor, report.rows))
                            + readiness.status_lines(plan, report.rows)))
    if not listed(args, report):
        return [display.summary_view(plan, report.rows, width), lines]
    chosen = overview.matching(report.rows, args.state, args.grep)
    title = None
    if args.state or args.grep:
        asked = [f"state {'/'.join(s.value for s in args.state)}"] * bool(args.state) + [f"with {args.grep!r}"] * bool(args.grep)
        title = f"Study {plan.study}: {len(chosen):,} of {len(report.rows):,} cells ({', '.join(asked)})"
    if len(chosen) <= display.RICH_ROWS:
        return [display.status_view(plan.study, chosen, width, title), lines]
    notes = display.failure_notes(chosen)
    text = display.status_lines(title or display.status_title(plan.study, chosen), chosen, width)
    return [text, *([notes] if notes else []), lines]


def json_text(plan, monitor: Monitor, report: Report, args) -> str:
    """The counts (per state, per array), a record per cell (those --state and --grep choose), the
    GPU-hours. Indented for a small study; one line at scale (the indenting encoder is 10x slower)."""
    chosen = overview.matching(report.rows, args.state, args.grep)
    data = {"study": plan.study, "warning": report.warning, "errors": report.errors,
            "skipped_files": report.skipped_files, "counts": overview.state_counts(report.rows),
            "arrays": overview.array_counts(report.rows, plan), "cells": [r.to_dict() for r in chosen],
            "gpu_hours": budget.as_json(budget.ledger_of(plan, monitor, report.rows))}
    return json.dumps(data, indent=1 if len(report.rows) <= overview.SMALL_STUDY else None)
