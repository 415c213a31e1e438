"""python -m orchestrator {plan,submit,status,collect}: thin verbs over the library."""
from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from jobs.cell import CellError
from jobs.result import ResultError
from orchestrator import display, status
from orchestrator.errors import PlanError, UserError
from orchestrator.plan import build_plan, read_plan, write_plan
from orchestrator.sbatch import render_sbatch, submitit_command
from orchestrator.study import load_study
from orchestrator.submit import EXECUTORS, submit

TERMINAL = ("done", "oom", "failed", "timeout", "cancelled")


def results_dir_for(args) -> Path:
    if args.results:
        return Path(args.results)
    name = args.study if Path(args.study).suffix != ".toml" else load_study(args.study).name
    return Path("runs") / name


def planned(args):
    """The plan `plan` wrote for this study, checked to be that study's."""
    plan = read_plan(results_dir_for(args))
    expected = args.study if Path(args.study).suffix != ".toml" else load_study(args.study).name
    if plan.study != expected:
        raise PlanError(f"{plan.results_dir} holds a plan of study {plan.study!r}, not {expected!r}; "
                        "pass the matching --study or --results")
    return plan


def cmd_plan(args, console: Console) -> int:
    study = load_study(args.study)
    results_dir = Path(args.results) if args.results else Path("runs") / study.name
    plan = build_plan(study, results_dir, Path.cwd())
    results_dir.mkdir(parents=True, exist_ok=True)
    sbatch_dir = results_dir / "sbatch"
    shutil.rmtree(sbatch_dir, ignore_errors=True)
    sbatch_dir.mkdir()
    command = submitit_command(plan.log_dir)
    for array in plan.arrays:
        (sbatch_dir / f"{array.name}.sh").write_text(render_sbatch(plan, array, len(array.cell_ids), command))
    (results_dir / "study.toml").write_text(study.source)
    path = write_plan(plan)
    console.print(display.plan_table(plan))
    if args.cells:
        console.print(display.cells_table(plan))
    console.print(f"plan: {path}\nsbatch scripts: {sbatch_dir}/\nnext: python -m orchestrator submit"
                  + (f" --study {args.study}" if args.study != "quick" else ""))
    return 0


def cmd_submit(args, console: Console) -> int:
    plan = planned(args)
    report = submit(plan, args.executor)
    console.print(f"{report.executor}: submitted {len(report.submitted)} cell(s); "
                  f"{report.skipped} already done or queued")
    if args.wait:
        return wait_for(plan, console, args.interval)
    return 0


def wait_for(plan, console: Console, interval: float) -> int:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    warned = False
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("cells", total=len(plan.cells))
        while True:
            rows, warning = status.current(plan)
            if warning and not warned:
                progress.console.print(f"[yellow]warning:[/] {warning}")
                warned = True
            ended = [r for r in rows if r.state in TERMINAL]
            running = sum(r.state == "running" for r in rows)
            progress.update(task, completed=len(ended), description=f"cells ({running} running)")
            if len(ended) == len(rows):
                break
            time.sleep(interval)
    bad = [r for r in rows if r.state not in ("done", "oom")]
    for r in bad:
        console.print(f"[red]{r.state}[/] {r.cell_id} {r.label}: {r.detail}")
    return 1 if bad else 0


def cmd_status(args, console: Console) -> int:
    plan = planned(args)
    if args.json:
        rows, warning = status.current(plan)
        print(json.dumps({"study": plan.study, "warning": warning, "cells": [dataclasses.asdict(r) for r in rows]}, indent=1))
        return 0
    rows, warning = status.current(plan)
    if warning:
        console.print(f"[yellow]warning:[/] {warning}")
    if not args.watch:
        console.print(display.status_table(plan.study, rows))
        return 0
    with Live(display.status_table(plan.study, rows), console=console, auto_refresh=False) as live:
        while any(r.state not in TERMINAL for r in rows):
            time.sleep(args.interval)
            rows, _ = status.current(plan)
            live.update(display.status_table(plan.study, rows), refresh=True)
    return 0


def cmd_collect(args, console: Console) -> int:
    from collect.report import collect  # pandas: only for this verb

    results_dir = results_dir_for(args)
    if not results_dir.is_dir():
        raise PlanError(f"no results dir {results_dir}; run `plan` and `submit` first, or pass --results")
    collected = collect(results_dir)
    if args.json:
        print(json.dumps({
            "table1": json.loads(collected.table1.to_json(orient="records")),
            "q1": json.loads(collected.q1.to_json(orient="records")),
        }, indent=1))
        return 0
    from collect.render import to_rich

    for grid in collected.grids:
        console.print(to_rich(grid))
    console.print("written: " + ", ".join(str(p) for p in collected.written))
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m orchestrator", description=__doc__)
    verbs = top.add_subparsers(dest="verb", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--study", default="quick", help="a shipped study's name or a .toml path (default: quick)")
    common.add_argument("--results", help="results dir (default: runs/<study>)")
    p = verbs.add_parser("plan", parents=[common], help="expand the study into cells and arrays; write the plan")
    p.add_argument("--cells", action="store_true", help="list every cell too")
    p.set_defaults(run=cmd_plan)
    p = verbs.add_parser("submit", parents=[common], help="queue cells without a good result or live job")
    p.add_argument("--executor", default="auto", choices=EXECUTORS, help="auto: slurm where sbatch exists, else local")
    p.add_argument("--wait", action="store_true", help="show progress until every cell has ended")
    p.add_argument("--interval", type=float, default=5.0, help="seconds between polls (default 5)")
    p.set_defaults(run=cmd_submit)
    p = verbs.add_parser("status", parents=[common], help="state of every cell")
    p.add_argument("--watch", action="store_true", help="refresh in place until every cell has ended")
    p.add_argument("--interval", type=float, default=10.0, help="seconds between refreshes (default 10)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=cmd_status)
    p = verbs.add_parser("collect", parents=[common], help="tables from the result files")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=cmd_collect)
    return top


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    console = Console()
    try:
        return args.run(args, console)
    except (UserError, ResultError, CellError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
