"""What the verbs share: where the results are, the plan there, how often to poll, errors."""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Optional

from jobs.core.layout import unreadable_dir
from results_format.text import visible
from orchestrator.errors import PlanError
from orchestrator.plan.current_study import ROOT, CurrentStudy, read_current
from orchestrator.plan.plan import Plan, read_plan
from orchestrator.plan.study import DEFAULT_STUDY, study_name as name_of_study


def current(args) -> Optional[CurrentStudy]:
    """The study `plan` last planned in runs/, where neither --study nor --results says which."""
    return None if args.study or args.results else read_current()


def study_name(args) -> str:
    """The study's name, without expanding its grids: --study's, else the current one, else quick."""
    if args.study:
        return name_of_study(args.study)
    chosen = current(args)
    return chosen.study if chosen else DEFAULT_STUDY


def results_dir_for(args) -> Path:
    """--results, else runs/<--study>, else the current study's dir, else runs/quick."""
    if args.results:
        return Path(args.results)
    chosen = current(args)
    return chosen.results_dir() if chosen else ROOT / name_of_study(args.study or DEFAULT_STUDY)


def next_command(verb: str, args, study: str) -> str:
    """`python -m orchestrator VERB` for the study this verb acted on: --results where it was given,
    else --study with its name (what every verb but `plan` needs: they read the plan, not the file)."""
    where = f"--results {args.results}" if args.results else f"--study {study}"
    return visible(f"python -m orchestrator {verb} {where}")


def say_current(args) -> None:
    """The first line of a verb that acts on the current study: which, where, and when it was planned
    (on stderr: what the verb prints on stdout stays its own, JSON included)."""
    chosen = current(args)
    if chosen:
        when = chosen.planned_at.replace("T", " ").replace("+00:00", " UTC")
        print(visible(f"study {chosen.study} ({chosen.results_dir()}), planned {when}: the current study "
                      "(--study or --results picks another)"), file=sys.stderr)


def planned(args) -> Plan:
    """The plan `plan` wrote for this study, checked to be that study's; a results dir you cannot read
    is said as such (jobs.core.layout.unreadable_dir), not as a missing plan."""
    say_current(args)
    results_dir = results_dir_for(args)
    if Path(results_dir).is_dir() and (unreadable := unreadable_dir(results_dir, listing=False)):
        raise PlanError(unreadable)
    plan = read_plan(results_dir)
    check_study(args, plan.study, plan.results_dir)
    return plan


def check_study(args, study: Optional[str], results_dir: Path | str) -> None:
    """The plan found is the study asked for: --study's, or the default's where --results is not
    given (runs/quick holding another study's plan) or the current study's; --results alone takes the
    study planned there."""
    if study is None or (args.study is None and args.results):
        return
    expected = study_name(args)
    if study != expected:
        raise PlanError(f"{results_dir} holds a plan of study {study!r}, not {expected!r}; "
                        "pass the matching --study or --results")


def interval_for(args, plan: Plan) -> float:
    """--interval, else the profile's poll_interval_s."""
    return args.interval if args.interval is not None else plan.cluster.poll_interval_s


def positive(unit: str):
    """An argparse type: a positive, finite number of `unit` (argparse names the flag when it is not)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"must be a number of {unit} > 0, got {text!r}")
        return value
    return parse


seconds = positive("seconds")
gpu_hours = positive("GPU-hours")  # a budget


def add_interval(parser, what: str) -> None:
    parser.add_argument("--interval", type=seconds, default=None, metavar="S",
                        help=f"seconds between {what} (default: [cluster] poll_interval_s of the plan)")


def print_warnings(warnings: list[str]) -> None:
    """One `warning:` line for all of them (what was skipped, and why)."""
    if warnings:
        more = f" (and {len(warnings) - 1} more)" if len(warnings) > 1 else ""
        print(f"warning: {visible(warnings[0])}{more}", file=sys.stderr)


def print_errors(errors: list[str]) -> Optional[int]:
    """One `error:` line for all of them; returns 2 when there was any."""
    if not errors:
        return None
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    print(f"error: {visible(errors[0])}{more}", file=sys.stderr)
    return 2
