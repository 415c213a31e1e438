"""collect: every table from the result files; --report adds the HTML and Markdown report."""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import NoReturn

from rich.console import Console
from rich.text import Text

from collect.options import add_options, check_options
from jobs.core.layout import PLAN_FILE, result_files, unreadable_dir
from results_format.text import visible
from orchestrator.budget.spent import measure_spent
from orchestrator.commands import collect_compare
from orchestrator.commands.common import (check_study, next_command, print_errors, print_warnings, results_dir_for,
                                          say_current, study_name)
from orchestrator.plan.plan import planned_study
from orchestrator.errors import PlanError


def register(verbs, common) -> None:
    p = verbs.add_parser("collect", parents=[common], help="tables from the result files")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--report", action="store_true", help="also write report.html (self-contained) and report.md with plots/")
    p.add_argument("--out", metavar="DIR", help="write the tables and the report here (default: the results dir)")
    add_options(p)  # each kind's own (collect.options)
    p.add_argument("--tables", action="store_true", help="print every table after the answers (they are in tables.md "
                   "and the CSV files either way)")
    p.add_argument("--unplanned", action="store_true", help="take in results of cells the plan does not hold "
                   "(copied in, another study's): left out and named otherwise")
    p.add_argument("--findings", action="store_true", help="print each answer's details (what its record holds)")
    p.add_argument("--question", metavar="ID", default="", help="print one question's answer, its tables and details "
                   "(e.g. A.Q2 or Q2; a wrong id lists them)")
    collect_compare.add_arguments(p)
    p.set_defaults(run=run)


def run(args, console: Console) -> int:
    if args.compare:
        return collect_compare.run_compare(args, console)
    collect_compare.refuse_without_compare(args)
    from collect.load import SkippedFile
    from collect.report import as_written, collect, write_report  # pandas: only for this verb
    from collect.view import View

    check_options(args)  # a wrong value is said before any work
    view = View(sort=args.sort, **({"top": args.top} if args.top else {}))
    say_current(args)
    results_dir = results_dir_for(args)
    if not results_dir.is_dir():
        raise PlanError(f"no results dir {results_dir}; run `plan` and `submit` first, or pass --results")
    if why := unreadable_dir(results_dir):
        raise PlanError(why)
    if not (results_dir / PLAN_FILE).exists() and not result_files(results_dir):  # no table of nothing
        raise PlanError(f"no plan and no results in {results_dir}; run `plan` and `submit` first, or pass --results")
    study = planned_study(results_dir)
    if args.study is not None or not args.results:  # as status: another study's plan is refused
        check_study(args, study, results_dir)
    if not result_files(results_dir):  # answers from documentation alone could be handed in by mistake
        nothing_yet(args, results_dir, study or study_name(args))
    spent, why = measure_spent(results_dir)  # GPU-hours per configuration, and spent.json
    print_warnings([why] if why else [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SkippedFile)
        collected = collect(results_dir, Path(args.out) if args.out else None, spent, view, args.unplanned)
    for w in caught:  # pass on the others as they came
        if not issubclass(w.category, SkippedFile):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    print_warnings([str(w.message) for w in caught if issubclass(w.category, SkippedFile)])
    report, report_error = write_report(collected) if args.report and not collected.unwritten else ((), "")
    errors = [e for e in (collected.unwritten, report_error) if e]  # the tables are shown all the same
    if args.json:
        tables = {key: json.loads(as_written(collected.tables[key]).to_json(orient="records"))
                  for key in collected.table_files}
        answers = [a.to_dict() for a in collected.answers]
        written = dict.fromkeys(collected.written + report)  # once each: the report writes answers.md again, with plots
        print(json.dumps(dict(tables, answers=answers, written=[str(p) for p in written]), indent=1))
        return print_errors(errors) or 0
    answers = chosen(collected.answers, args.question)
    shown = show(console, collected, answers, args)
    out = collected.out_dir or collected.results_dir
    if report and not report_error:
        console.print(visible(f"report: {report[0]} (self-contained), {report[1]} with its plots in {out / 'plots'}/; "
                              f"answers: {out / 'answers.md'}"), highlight=False)
    settle_lines(console, results_dir, answers, collected.cells, args.findings)  # --question: its own
    footer(console, collected, shown, args)
    return print_errors(errors) or 0


def nothing_yet(args, results_dir: Path, study: str) -> NoReturn:
    """No result yet: what to run, exit 2, nothing written. A plan or registry that is no file of
    ours is said first (`submit` would stop on it too)."""
    from results_format import registry
    from orchestrator.plan.plan import read_plan

    read_plan(results_dir)
    registry.load(results_dir)
    raise PlanError(f"no results yet in {results_dir}: no cell has finished; run "
                    f"`{next_command('submit', args, study)}` (`status` shows the cells submitted); nothing written")


def chosen(answers, question: str):
    """Every answer, or the one whose id is `question` ("A.Q2", or "Q2" where one id ends so)."""
    if not question:
        return answers
    wanted = question.strip().lower()
    found = [a for a in answers if a.id.lower() == wanted] or [a for a in answers if a.id.lower().endswith("." + wanted)]
    if len(found) != 1:
        ids = ", ".join(a.id for a in answers) or "none (this study answers no question)"
        raise PlanError(f"--question {question!r} names no question of this study; valid: {ids}")
    return tuple(found)


def show(console: Console, collected, answers, args) -> bool:
    """The answers first; the tables after them where asked (--tables, --question: its own) or where no kind
    of the study declares a question; the answers' details where asked. True when the tables were printed."""
    from collect.fit import print_grids
    from collect.render import print_answers, print_details

    print_answers(console, answers)
    keys = {key for a in answers for key in a.question.tables}
    grids = (collected.grids if args.tables or not collected.answers else
             tuple(g for g in collected.grids if g.key in keys) if args.question else ())
    print_grids(console, grids)
    if args.findings:
        print_details(console, answers)
    return bool(grids)


def footer(console: Console, collected, tables_shown: bool, args) -> None:
    """Where everything is: the tables' files, the answers' details, the flags that show them."""
    out = collected.out_dir or collected.results_dir
    if collected.written:
        console.print(visible(f"tables: tables.md, tables.tex and {len(collected.table_files)} CSV files in {out}/"
                              + ("" if tables_shown else "; print them with --tables")), highlight=False)
    details = sum(len(a.details) for a in collected.answers)
    if details and not args.findings:
        console.print(f"details: {details} lines beneath the answers: --findings (one question: "
                      "--question ID)" + ("" if args.report else "; report: --report"), highlight=False)


TOOL_NOTES = "collect's notes (not the hand-in):"


def counted_notes(provisional: int, undecided: int) -> str:
    """The notes in one line of plain words (TA4 24): "9 answers are provisional (some of their cells have no
    result) and 4 leave a comparison undecided (runs spread too wide to tell); --findings says which, and
    what would settle them"."""
    def answers(n: int, verb: str, plural: str) -> str:
        return f"{n} answer{'s ' + plural if n != 1 else ' ' + verb}"
    parts = [answers(provisional, "is", "are") + " provisional (some of their cells have no result)"] * bool(provisional)
    parts += [answers(undecided, "leaves", "leave") + " a comparison undecided (runs spread too wide to tell)"] * bool(undecided)
    return " and ".join(parts) + "; --findings says which, and what would settle them"




def settle_lines(console: Console, results_dir: Path, answers, cells, listed: bool = True) -> None:
    """Which answers are provisional (orchestrator.readiness), and what would settle their
    inconclusive comparisons (orchestrator.settle), where there is a plan: its cells' states are
    `cells`' status column (collect.load: a result's, else the registry's). Not `listed` (the one screen
    of answers, TA4 24): one line that counts them, the commands and comparisons left to --findings."""
    from results_format.states import CellState
    from orchestrator import settle
    from orchestrator.watch import readiness
    from orchestrator.plan.plan import read_plan
    from collect.render import console_text

    try:
        plan = read_plan(results_dir)
    except PlanError:  # results without a plan: nothing to repeat
        return
    states = {cid: CellState.DONE if status == "ok" else CellState(status)
              for cid, status in zip(cells.cell_id, cells.status, strict=True)}
    provisional = readiness.provisional_line(plan, states)
    found, _, estimates = settle.plan_for(plan, answers)
    lines = ([provisional] if provisional else []) + (settle.lines(found, estimates) if found.steps else [])
    if not listed and lines:
        partial = [r for r in readiness.readiness(plan, states) if r.word != readiness.READY]
        lines = [counted_notes(len(partial), len({s.undecided.question for s in found.steps}))]
    for n, line in enumerate(lines):  # the tool's own talk, marked apart from the answers handed in (TA3 28)
        console.print(Text.assemble((TOOL_NOTES + " ", "bold"), console_text(line)) if n == 0 else console_text(line))
