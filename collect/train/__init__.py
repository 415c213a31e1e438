"""The homework's training tables (Part A Q1-Q4, the test accuracy and time to train), their
grids and plots: the training kind's side of collect."""
from __future__ import annotations

from typing import Optional

import pandas as pd

from collect.kinds import KindTables
from collect.cells import Loaded
from collect.render import Grid
from collect.view import DEFAULT_VIEW, View, shown
from collect.train import answers_bandwidth, answers_lab, compare, grids, lab_epoch, overhead, gpu_hours, sweep, tables
from collect.train.answers_speedup import plot_marks, q2_answer
from collect.train.frame import backend, frames, keep
from collect.train.labels import config_label
from collect.train.questions import QUESTIONS
from collect.train.tables import CONFIG
from jobs.core.cell import TRAIN

TABLE_FILES = ("q1", "table1", "strong", "table2", "table3", "test", "q4", "overhead")
PLOT_OF = {"q1": "q1_epoch_time", "table1": "table1_speedup", "table2": "table2_compute_comm", "q4": "q4_loss_accuracy",
           "q4_test": "q4_test_accuracy"}  # plot key -> its file name
SECTION_PLOTS = {"q4": ("q4", "q4_test")}  # grid -> its plots, where not the plot of its own key


def build_tables(loaded: Loaded, view: View = DEFAULT_VIEW) -> dict[str, pd.DataFrame]:
    """Every table of the training cells, and "train_cells": the frame they are computed from
    (collect.train.frame; not written as a file)."""
    built = frames(loaded.of_kind(TRAIN))
    frame, epochs = built.frame, built.epochs
    scaling = tables.scaling_table(frame)  # shared by four tables
    test = tables.accuracy_table(frame, epochs)  # and the sweep's
    out = {
        "train_cells": frame,
        "q1": tables.q1_table(frame), "table1": tables.table1(frame, scaling),
        "strong": tables.strong_scaling(frame, scaling), "table2": tables.table2(frame, scaling),
        "table3": tables.table3(frame, scaling), "test": test,
        "q4": tables.q4_table(frame, epochs),
        "q4_curves": tables.q4_curves(frame, epochs),
        "spent": gpu_hours.spent_table(frame, epochs, loaded.spent),
        "overhead": overhead.overhead_table(frame),
        "sweep": sweep.sweep_table(test, view.sort),
        "lab_epoch": lab_epoch.lab_epoch_table(test, frame),
    }
    # which rates Q3.2's range keeps, from its own record (TA8 11): Table 3's column and its CSV's
    out["table3"] = out["table3"].assign(q32_range=answers_bandwidth.range_codes(out))
    return out


def build_grids(built: dict[str, pd.DataFrame], view: View = DEFAULT_VIEW) -> tuple[Grid, ...]:
    """Each table's grid, of at most view.rows lines (collect.view.shown: the CSVs have every row)."""
    protocol = tables.timing_protocol(built["train_cells"])
    q1, strong, t2, t3, test, q4 = (shown(built[key], f"{key}.csv", view.rows, named=CONFIG) for key in
                                    ("q1", "strong", "table2", "table3", "test", "q4"))
    t1 = shown(built["table1"], "table1.csv", view.rows, "setups", grids.table1_lines(built["table1"]), CONFIG)
    return (
        q1.noted(grids.q1_grid(q1.table, protocol)),
        t1.noted(grids.table1_grid(t1.table, protocol)),
        strong.noted(grids.strong_grid(strong.table, protocol)),
        t2.noted(grids.table2_grid(t2.table, protocol)),
        t3.noted(grids.table3_grid(t3.table, protocol)),
        test.noted(grids.accuracy_grid(test.table)),
        q4.noted(grids.q4_grid(q4.table, tables.largest_fitting_batch(built["q1"]))),
        _overhead_grid(built["overhead"], view),
    ) + sweep.sweep_grids(built, view) + gpu_hours.grids(built, view) + (
        (lab_epoch.lab_epoch_grid(built["lab_epoch"]),) if answers_lab.lab(built) else ())  # the shares the lab cites


def _overhead_grid(table: pd.DataFrame, view: View) -> Grid:
    """Its configurations cut as the other tables' are; the study's total row always shown."""
    total = table.scope == overhead.TOTAL
    rows = shown(table[~total], "overhead.csv", view.rows)
    return rows.noted(overhead.overhead_grid(pd.concat([rows.table, table[total]])))


def make_plots(built: dict[str, pd.DataFrame]) -> dict[str, Optional[bytes]]:
    from collect.train import plots  # matplotlib: only for the report

    return {
        "q1": plots.epoch_time(built["q1"]), "table1": plots.speedup(built["table1"], plot_marks(q2_answer(built))),
        "table2": plots.compute_comm(built["table2"]), "q4": plots.q4_curves(built["q4_curves"]),
        "q4_test": plots.q4_test_accuracy(built["q4_curves"]),
    }


KIND = KindTables(
    "train", "Scaling study", "ResNet-18 data-parallel training",
    build_tables, build_grids, TABLE_FILES + sweep.FILES + gpu_hours.FILES, make_plots, PLOT_OF, SECTION_PLOTS,
    environment=backend, questions=QUESTIONS, runs=compare.runs, label=config_label, keep=keep,
)
