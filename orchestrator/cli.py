"""python -m orchestrator {plan,submit,status,collect,logs,cancel}: thin verbs over the library.

Each verb lives in orchestrator/commands/<verb>.py (register + run)."""
from __future__ import annotations

import argparse
import gc
import sys

from rich.console import Console

from jobs.core.cell import CellError
from jobs.core.result import ResultError
from results_format.text import visible
from orchestrator.commands import cancel, collect, logs, plan, status, submit
from orchestrator.errors import UserError

VERBS = (plan, submit, status, collect, logs, cancel)
# A verb holds a study's cells, submissions and results at once (100,000 of each) and makes few
# reference cycles: the collector's default pace (a pass every 700 new objects) would scan them
# over and over, a quarter of `status`'s time at 100,000 cells. Collected still, but rarely.
GC_THRESHOLDS = (100_000, 50, 1000)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m orchestrator", description=__doc__.splitlines()[0])
    verbs = top.add_subparsers(dest="verb", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--study", help="a shipped study's name or a .toml path (default: quick; with --results "
                                        "alone: the study planned there)")
    common.add_argument("--results", help="results dir (default: runs/<study>)")
    for verb in VERBS:
        verb.register(verbs, common)
    return top


def main(argv=None) -> int:
    gc.set_threshold(*GC_THRESHOLDS)
    args = parser().parse_args(argv)
    console = Console(markup=False)  # paths, names and error texts are printed as text: "[/]" is no markup
    try:
        return args.run(args, console)
    except (UserError, ResultError, CellError) as exc:
        print(f"error: {visible(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
