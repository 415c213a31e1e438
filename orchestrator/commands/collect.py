"""collect: every table from the result files; --report adds the HTML and Markdown report."""
from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

from rich.console import Console

from jobs.core.text import visible
from orchestrator.budget import measure_spent
from orchestrator.commands.common import check_study, planned_study, print_errors, print_warnings, results_dir_for
from orchestrator.errors import PlanError


def register(verbs, common) -> None:
    p = verbs.add_parser("collect", parents=[common], help="tables from the result files")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--report", action="store_true", help="also write report.html (self-contained) and report.md with plots/")
    p.add_argument("--out", metavar="DIR", help="write the tables and the report here (default: the results dir)")
    p.add_argument("--sort", metavar="METRIC", default="",
                   help="order the sweep table by METRIC, the best first (default test_accuracy; a wrong name lists them)")
    p.add_argument("--top", metavar="N", type=count, default=None,
                   help="the sweep table's N best configurations on the console (default 20; sweep.csv has every one)")
    p.set_defaults(run=run)


def count(text: str) -> int:
    """A number of rows: an int >= 1 (argparse names the flag when it is not)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def run(args, console: Console) -> int:
    from collect.load import SkippedFile
    from collect.render import print_findings, print_grids
    from collect.report import collect, write_report  # pandas: only for this verb
    from collect.train.sweep import metric_named
    from collect.view import View

    metric_named(args.sort)  # a wrong name is said before any work
    view = View(sort=args.sort, **({"top": args.top} if args.top else {}))
    results_dir = results_dir_for(args)
    if not results_dir.is_dir():
        raise PlanError(f"no results dir {results_dir}; run `plan` and `submit` first, or pass --results")
    if args.study is not None or not args.results:  # as status: another study's plan is refused
        check_study(args, planned_study(results_dir), results_dir)
    spent, why = measure_spent(results_dir)  # GPU-hours per configuration, and spent.json
    print_warnings([why] if why else [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkippedFile)
        collected = collect(results_dir, Path(args.out) if args.out else None, spent, view)
    for w in caught:  # pass on the others as they came
        if not issubclass(w.category, SkippedFile):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    print_warnings([str(w.message) for w in caught if issubclass(w.category, SkippedFile)])
    report, report_error = write_report(collected) if args.report and not collected.unwritten else ((), "")
    errors = [e for e in (collected.unwritten, report_error) if e]  # the tables are shown all the same
    if args.json:
        tables = {key: json.loads(collected.tables[key].to_json(orient="records")) for key in collected.table_files}
        findings = [f.to_dict() for f in collected.findings]
        print(json.dumps(dict(tables, findings=findings, written=[str(p) for p in collected.written + report]), indent=1))
        return print_errors(errors) or 0
    print_grids(console, collected.grids)
    print_findings(console, collected.findings)
    if collected.written:
        console.print(visible("written: " + ", ".join(str(p) for p in collected.written)), highlight=False)
    if report and not report_error:
        console.print(visible(f"report: {report[0]} (self-contained), {report[1]} with its plots in "
                              f"{(collected.out_dir or collected.results_dir) / 'plots'}/"), highlight=False)
    return print_errors(errors) or 0
