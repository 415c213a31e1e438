"""What collect does per kind of cell (the kinds of jobs.core.kinds): each kind turns its loaded cells
into its tables, their grids, the tables written as CSV, the report's plots, and its findings
(collect.findings: each question answered from the tables).

collect.report builds the tables of the kinds present in the results dir and its plan, and
counts the status of every cell, of any kind. Each kind's package (collect.<kind>) defines its
KIND; the report knows none of them by name.
"""
from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
import dataclasses
from dataclasses import dataclass
from typing import Optional

import pandas as pd

from collect.findings import Finding, no_findings
from collect.load import Loaded
from collect.render import Grid
from jobs.core.cell import TRAIN as DEFAULT_KIND

Tables = dict[str, pd.DataFrame]


@dataclass(frozen=True)
class KindTables:
    name: str  # the kind's name in jobs.core.kinds.PACKAGES
    study: str  # the report's heading: "<study> <name>: <subject>"
    subject: str
    tables: Callable[[Loaded], Tables]  # every table, by key (keys unique over the kinds)
    grids: Callable[[Loaded, Tables], tuple[Grid, ...]]
    files: tuple[str, ...]  # tables written as <key>.csv (and given by `collect --json`)
    plots: Callable[[Tables], Mapping[str, Optional[bytes]]]  # PNG by the key of the grid it follows
    plot_files: Mapping[str, str]  # plot key -> its name in plots/ (no .png)
    sections: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)  # grid key -> its plots, when
    # not the plot of the same key
    findings: Callable[[Tables], tuple[Finding, ...]] = no_findings  # the questions' answers, from the tables


# Adding a kind: its package name here (collect.<kind> defines KIND), and nothing else on this side.
PACKAGES = {"train": "collect.train", "ptq": "collect.ptq", "allreduce": "collect.allreduce"}


@functools.cache
def registry() -> dict[str, KindTables]:
    """Every kind collect has tables for, by name, each from its package's KIND."""
    return {name: importlib.import_module(package).KIND for name, package in PACKAGES.items()}


def present(loaded: Loaded) -> tuple[KindTables, ...]:
    """The kinds of the loaded cells that collect has tables for, in the order first seen; the
    default kind's (a cell without "kind") when there are none: an empty results dir shows its
    tables' empty lines."""
    kinds = registry()
    found = tuple(kinds[k] for k in loaded.kinds() if k in kinds)
    return found or (kinds[DEFAULT_KIND],)
