"""What collect does per kind of cell (the kinds of jobs.core.kinds): each kind turns its loaded cells
into its tables, their grids, the tables written as CSV, and the report's plots.

collect.report builds the tables of the kinds present in the results dir and its plan (a
training study: the homework's tables; a PTQ study: the quantization tables), and counts the
status of every cell, of any kind. A new kind adds one entry here.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Optional

import pandas as pd

from collect.ptq import grids as ptq_grids, rows as ptq_rows, tables as ptq_tables
from collect.allreduce import grids as allreduce_grids, rows as allreduce_rows, tables as allreduce_tables
from collect.load import Loaded
from jobs.core.cell import TRAIN
from collect.render import Grid

Tables = dict[str, pd.DataFrame]


@dataclass(frozen=True)
class KindTables:
    name: str  # the kind's name in jobs.core.kinds.KINDS
    study: str  # the report's heading: "<study> <name>: <subject>"
    subject: str
    tables: Callable[[Loaded], Tables]  # every table, by key (keys unique over the kinds)
    grids: Callable[[Loaded, Tables], tuple[Grid, ...]]
    files: tuple[str, ...]  # tables written as <key>.csv (and given by `collect --json`)
    plots: Callable[[Tables], Mapping[str, Optional[bytes]]]  # PNG by the key of the grid it follows
    plot_files: Mapping[str, str]  # plot key -> its name in plots/ (no .png)


def _ptq_tables(loaded: Loaded) -> Tables:
    return ptq_tables.build(ptq_rows.ptq_rows(loaded.of_kind("ptq")))


def _ptq_grids(loaded: Loaded, built: Tables) -> tuple[Grid, ...]:
    return ptq_grids.build(built)


def _ptq_plots(built: Tables) -> Mapping[str, Optional[bytes]]:
    from collect.ptq import plots as ptq_plots  # matplotlib: only for the report

    return ptq_plots.build(built)


PTQ = KindTables(
    "ptq", "Quantization study", "post-training quantization of the notebook's LeNet (Part B)",
    _ptq_tables, _ptq_grids,
    ("ptq_notebook", "ptq_integer", "ptq_scales", "ptq_weights", "ptq_activations", "ptq_sweep", "ptq_cells"),
    _ptq_plots,
    {"ptq_weights": "ptq_weight_histograms", "ptq_activations": "ptq_activation_histograms",
     "ptq_sweep_activations": "ptq_accuracy_vs_bits"},
)


def _allreduce_plots(built: Tables) -> Mapping[str, Optional[bytes]]:
    from collect.allreduce import plots  # matplotlib: only for the report

    return plots.build(built)


ALLREDUCE = KindTables(
    "allreduce", "All-reduce study", "the link's bandwidth as nccl-tests measures it (busbw vs message size)",
    lambda loaded: allreduce_tables.build(allreduce_rows.allreduce_rows(loaded.of_kind("allreduce"))),
    lambda loaded, built: allreduce_grids.build(built),
    ("allreduce_sizes", "allreduce_marked", "allreduce_cells"), _allreduce_plots,
    {"allreduce_marked": "allreduce_busbw_vs_size"},
)


@functools.cache
def registry() -> dict[str, KindTables]:
    """Every kind collect has tables for, by name. The training tables' builders live in
    collect.report, which imports this module: so they are looked up when first asked."""
    from collect import report

    train = KindTables(
        TRAIN, "Scaling study", "ResNet-18 data-parallel training",
        lambda loaded: report.build_tables(loaded.frame, loaded.epochs),
        lambda loaded, built: report.build_grids(loaded.frame, built),
        report.TABLE_FILES, report.make_plots, report.PLOT_OF,
    )
    return {TRAIN: train, PTQ.name: PTQ, ALLREDUCE.name: ALLREDUCE}


def present(loaded: Loaded) -> tuple[KindTables, ...]:
    """The kinds of the loaded cells that collect has tables for, in the order first seen;
    training when there are none (an empty results dir shows the training tables' empty lines)."""
    kinds = registry()
    found = tuple(kinds[k] for k in loaded.kinds() if k in kinds)
    return found or (kinds[TRAIN],)
