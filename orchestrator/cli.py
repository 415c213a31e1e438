"""python -m orchestrator {plan,submit,status,collect,logs,cancel}: thin verbs over the library.

Each verb but collect lives in orchestrator/commands/<verb>.py (register + run)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from jobs.cell import CellError
from jobs.result import ResultError
from orchestrator.commands import cancel, logs, plan, status, submit
from orchestrator.commands.common import print_errors, results_dir_for
from orchestrator.errors import PlanError, UserError


def cmd_collect(args, console: Console) -> int:
    from collect.report import TABLE_FILES, collect, write_report  # pandas: only for this verb

    results_dir = results_dir_for(args)
    if not results_dir.is_dir():
        raise PlanError(f"no results dir {results_dir}; run `plan` and `submit` first, or pass --results")
    collected = collect(results_dir, Path(args.out) if args.out else None)
    report, report_error = write_report(collected) if args.report and not collected.unwritten else ((), "")
    errors = [e for e in (collected.unwritten, report_error) if e]  # the tables are shown all the same
    if args.json:
        tables = {key: json.loads(collected.tables[key].to_json(orient="records")) for key in TABLE_FILES}
        print(json.dumps(dict(tables, written=[str(p) for p in collected.written + report]), indent=1))
        return print_errors(errors) or 0
    from collect.render import print_grids

    print_grids(console, collected.grids)
    if collected.written:
        console.print("written: " + ", ".join(str(p) for p in collected.written), markup=False, highlight=False)
    if report and not report_error:
        console.print(f"report: {report[0]} (self-contained), {report[1]} with its plots in "
                      f"{collected.out_dir / 'plots'}/", markup=False, highlight=False)
    return print_errors(errors) or 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m orchestrator", description=__doc__.splitlines()[0])
    verbs = top.add_subparsers(dest="verb", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--study", default="quick", help="a shipped study's name or a .toml path (default: quick)")
    common.add_argument("--results", help="results dir (default: runs/<study>)")
    for verb in (plan, submit, status):
        verb.register(verbs, common)
    p = verbs.add_parser("collect", parents=[common], help="tables from the result files")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--report", action="store_true", help="also write report.html (self-contained) and report.md with plots/")
    p.add_argument("--out", metavar="DIR", help="write the tables and the report here (default: the results dir)")
    p.set_defaults(run=cmd_collect)
    for verb in (logs, cancel):
        verb.register(verbs, common)
    return top


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    console = Console(markup=False)  # paths, names and error texts are printed as text: "[/]" is no markup
    try:
        return args.run(args, console)
    except (UserError, ResultError, CellError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
