"""What collect does per kind of cell (the kinds of jobs.core.kinds): each kind turns its loaded cells
into its tables, their grids, the tables written as CSV, the report's plots, what its results
add to the report's environment, and its questions (collect.questions: each answered from the
tables, with its details).

collect.report builds the tables of the kinds present in the results dir and its plan, and
counts the status of every cell, of any kind. Each kind's package (collect.<kind>) defines its
KIND; the report knows none of them by name.
"""
from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Collection, Mapping
import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

import pandas as pd

from collect.comparable import Runs, no_runs
from collect.cells import Loaded
from collect.questions import Question
from collect.render import Grid
from collect.view import View
from jobs.core.cell import kind_of
from jobs.core.result import Result

Tables = dict[str, pd.DataFrame]


@dataclass(frozen=True)
class KindTables:
    name: str  # the kind's name in jobs.core.kinds.PACKAGES
    study: str  # the report's heading: "<study> <name>: <subject>"
    subject: str
    tables: Callable[[Loaded, View], Tables]  # every table from the loaded dir (its cells: loaded.of_kind(name)),
    # by key (unique over the kinds), in the order the view asks (View.sort)
    grids: Callable[[Tables, View], tuple[Grid, ...]]  # at most View.rows rows each (collect.view.shown)
    files: tuple[str, ...]  # tables written as <key>.csv (and given by `collect --json`)
    plots: Callable[[Tables], Mapping[str, Optional[bytes]]]  # PNG by the key of the grid it follows
    plot_files: Mapping[str, str]  # plot key -> its name in plots/ (no .png)
    sections: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)  # grid key -> its plots, when
    # not the plot of the same key
    environment: Callable[[Result], Mapping[str, Any]] = lambda result: {}  # a result's entries for the report's
    # environment beside its env (collect.report.ENV_ROWS: "backend")
    questions: tuple[Question, ...] = ()  # the questions its tables answer, in the hand-in's order (collect.questions)
    runs: Callable[[Loaded], Runs] = no_runs  # each cell as a Run for `collect --compare` (collect.comparable)
    label: Optional[Callable[[Mapping[str, Any], Collection[str]], str]] = None  # a configuration named by the
    # fields that vary, in the kind's words (collect --compare; None: name=value)
    keep: Callable[[Result], Any] = lambda result: result  # what its tables read of a result, made as each file is
    # read (collect.load: KindCell.kept): the whole Result, or less (a study may hold 100,000 results)
    # its answered questions show (Question.plots) and answers.md embeds them, not only the report


# Adding a kind: its package name here (collect.<kind> defines KIND), and nothing else on this side.
PACKAGES = {"train": "collect.train", "ptq": "collect.ptq", "allreduce": "collect.allreduce",
            "command": "collect.command"}


@functools.cache
def registry() -> dict[str, KindTables]:
    """Every kind collect has tables for, by name, each from its package's KIND."""
    return {name: importlib.import_module(package).KIND for name, package in PACKAGES.items()}


def present(loaded: Loaded) -> tuple[KindTables, ...]:
    """The kinds of the loaded cells that collect has tables for, in the registry's order; the
    kind of a cell that names none (jobs.core.cell.kind_of) when there are no cells: an empty
    results dir shows its tables' empty lines."""
    kinds, found = registry(), set(loaded.kinds())
    return tuple(kind for name, kind in kinds.items() if name in found) or (kinds[kind_of({})],)
