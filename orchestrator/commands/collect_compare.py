"""collect --compare OTHER: the results dir against another (the baseline), configuration by
configuration (collect.compare); compare.csv beside the tables, --report adds compare.md and its plot."""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from rich.console import Console

from jobs.core.layout import unreadable_dir
from results_format.text import visible
from orchestrator.commands.common import check_study, print_errors, print_warnings, results_dir_for
from orchestrator.plan.plan import planned_study
from orchestrator.errors import PlanError

FAIL_WORDS = ("slower", "worse")  # slower: a time or rate; worse: any metric with a better way (accuracy too)


def add_arguments(p) -> None:
    p.add_argument("--compare", metavar="OTHER", help="compare the results with those in OTHER (the baseline, A): "
                   "every ratio is these / OTHER's")
    p.add_argument("--ignore", metavar="FIELDS", type=names, default=(),
                   help="with --compare: pair configurations whatever these fields are (comma-separated: pipeline,precision)")
    p.add_argument("--threshold", metavar="PCT", type=percent, default=0.05,
                   help="with --compare: the change that matters, in %% (default 5%%)")
    p.add_argument("--fail-on", metavar="WORD:PCT", type=fail_on, default=None,
                   help="with --compare: exit 1 when B regressed: a configuration slower (or worse) beyond PCT, "
                   "new failures, vanished runs or collapsed values; exit 2 when nothing could be compared: slower:5%%")


def names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


def percent(text: str) -> float:
    """"5%" or "5" -> 0.05: a percentage above 0 and below 1000 (argparse names the flag when it is not)."""
    try:
        value = float(text.strip().removesuffix("%")) / 100
    except ValueError:
        value = 0.0
    if not 0 < value < 10:
        raise argparse.ArgumentTypeError(f"must be a percentage above 0 and below 1000, like 5%, got {text!r}")
    return value


def fail_on(text: str) -> tuple[str, float]:
    """"slower:5%" -> ("slower", 0.05)."""
    word, _, amount = text.partition(":")
    try:
        if word in FAIL_WORDS:
            return word, percent(amount)
    except argparse.ArgumentTypeError:
        pass
    raise argparse.ArgumentTypeError(f"must be WORD:PCT with WORD one of {', '.join(FAIL_WORDS)} and PCT above 0 and "
                                     f"below 1000, like slower:5%, got {text!r}")


def refuse_without_compare(args) -> None:
    """--ignore, --threshold and --fail-on only mean something with --compare."""
    given = [flag for flag, value, default in (("--ignore", args.ignore, ()), ("--threshold", args.threshold, 0.05),
                                               ("--fail-on", args.fail_on, None)) if value != default]
    if given and not args.compare:
        raise PlanError(f"{given[0]} compares two result sets: add --compare OTHER (the results dir to compare with)")


def refuse_with_compare(args) -> None:
    """What shows collect's tables and answers means nothing to the comparison's grid: refused, not ignored."""
    from collect.options import OPTIONS

    flags = [("--question", args.question, ""), ("--tables", args.tables, False), ("--findings", args.findings, False)]
    flags += [(o.flag, getattr(args, o.dest), o.default) for options in OPTIONS.values() for o in options]
    given = [flag for flag, value, default in flags if value != default]
    if given:
        raise PlanError(f"{given[0]} shows collect's tables and answers, not a comparison: leave it out with --compare "
                        "(compare.csv has every row)")


def run_compare(args, console: Console) -> int:
    from collect.compare import compare_dirs  # pandas: only for this verb
    from collect.compare.pairing import UnknownField
    from collect.load import SkippedFile

    refuse_with_compare(args)
    a_dir, b_dir = Path(args.compare), results_dir_for(args)
    for where in (a_dir, b_dir):
        if not where.is_dir():
            raise PlanError(f"no results dir {where}; pass --compare and --results the dirs of two studies' results")
        if why := unreadable_dir(where):
            raise PlanError(why)
    if args.study is not None or not args.results:  # as collect: another study's plan is refused
        check_study(args, planned_study(b_dir), b_dir)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SkippedFile)
            comparison = compare_dirs(a_dir, b_dir, args.ignore, args.threshold)
    except UnknownField as exc:
        return print_errors([str(exc)]) or 2
    for w in caught:  # pass on the others as they came
        if not issubclass(w.category, SkippedFile):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    print_warnings([str(w.message) for w in caught if issubclass(w.category, SkippedFile)])
    written, error = _write(comparison, Path(args.out) if args.out else b_dir, args.report)
    if args.json:
        from collect.compare.render import to_json

        print(to_json(comparison, [str(p) for p in written]))
    else:
        _print(console, comparison, written)
    code = fail_on_code(comparison, args.fail_on) if args.fail_on else 0
    return print_errors([error] if error else []) or code


SAID = 5  # regressions listed on stderr; the rest counted


def fail_on_code(comparison, fail_on: tuple[str, float]) -> int:
    """--fail-on's exit code, said on stderr: 2 when no configuration is in both sets; 1 when B regressed
    (collect.compare.guard: slower or worse, new failures, vanished runs, collapsed values); 2 when no
    configuration has figures on both sides or one has one run a side (nothing can be called slower); else 0."""
    from collect.compare.guard import guard

    word, threshold = fail_on
    flag = f"fail-on {word}:{100 * threshold:g}%"
    found = guard(comparison, word, threshold)
    if found.paired == 0:
        return print_errors([f"{flag}: nothing was compared: no configuration is in both sets ({comparison.a_name}, "
                             f"{comparison.b_name}); a guard that compares nothing does not pass"]) or 2
    if found.regressions:
        configs = len({r.config for r in found.regressions})
        print(visible(f"{flag}: {len(found.regressions)} regression{'s' if len(found.regressions) > 1 else ''} in "
                      f"{configs} configuration{'s' if configs > 1 else ''}:"), file=sys.stderr)
        for r in found.regressions[:SAID]:
            print(visible(f"  {r.config}, {r.metric}: {r.why}"), file=sys.stderr)
        if len(found.regressions) > SAID:
            print(f"  (and {len(found.regressions) - SAID} more)", file=sys.stderr)
        return 1
    if found.compared == 0:
        return print_errors([f"{flag}: nothing was compared: no configuration has a figure in both sets "
                             "(OOM or failed on a side); a guard that compares nothing does not pass"]) or 2
    if found.one_run:
        n = len(found.one_run)
        return print_errors([f"{flag}: {n} configuration{'s have' if n > 1 else ' has'} one run a side, so no spread "
                             f"is measured and no change can be called {word} (the first: {found.one_run[0]}); "
                             "run 2 or more repeats of each in both sets"]) or 2
    return 0


def _print(console: Console, comparison, written) -> None:
    from collect.compare.render import grid, header_lines
    from collect.fit import print_grids
    from collect.render import console_text

    for line in header_lines(comparison):
        console.print(console_text(line))  # the other set's environment is whatever its files say
    print_grids(console, [grid(comparison)])
    if written:
        console.print(console_text("written: " + ", ".join(str(p) for p in written)))


def _write(comparison, out: Path, report: bool) -> tuple[list[Path], str]:
    """compare.csv in `out`; with --report, compare.md and plots/compare_ratios.png too."""
    from collect.compare.render import frame, markdown
    from collect.report import write_files

    files: dict[str, str | bytes] = {"compare.csv": frame(comparison).to_csv(index=False)}
    if report:
        from collect.compare.plot import ratio_plot

        png = ratio_plot(comparison)
        plot_file = "plots/compare_ratios.png" if png else None
        files["compare.md"] = markdown(comparison, plot_file)
        if png and plot_file:
            files[plot_file] = png
    written, error = write_files(out, files)
    return list(written), error
