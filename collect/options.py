"""The options each kind of study adds to `collect`, declared here without importing a kind (the CLI
builds its parser for every verb: no pandas, no torch). A kind's option names its check as
"module:function", imported only when `collect` runs, so a wrong value is said before any work."""
from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def count(text: str) -> int:
    """A number of rows: an int >= 1 (argparse names the flag when it is not)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


@dataclass(frozen=True)
class Option:
    flag: str
    metavar: str
    help: str
    default: Any = None
    type: Callable[[str], Any] = str
    check: str = ""  # "module:function" called with the value when collect runs ("": none)

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


# Adding a kind's option: one entry here; its check lives in the kind's package.
OPTIONS: dict[str, tuple[Option, ...]] = {
    "train": (
        Option("--sort", "METRIC", "order the sweep table by METRIC, the best first (default test_accuracy; a wrong "
               "name lists them)", "", str, "collect.train.sweep:metric_named"),
        Option("--top", "N", "the sweep table's N best configurations on the console (default 20; sweep.csv has "
               "every one)", None, count),
    ),
}


def add_options(parser: argparse.ArgumentParser) -> None:
    for options in OPTIONS.values():
        for o in options:
            parser.add_argument(o.flag, metavar=o.metavar, help=o.help, default=o.default, type=o.type)


def check_options(args: argparse.Namespace) -> None:
    """Each option's check on its value (a kind's error names the option's valid values)."""
    for options in OPTIONS.values():
        for o in options:
            if o.check:
                module, name = o.check.split(":")
                getattr(importlib.import_module(module), name)(getattr(args, o.dest))
