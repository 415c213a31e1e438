"""The homework's training tables (Part A Q1-Q4, the test accuracy and time to train), their
grids and plots: the training kind's side of collect."""
from __future__ import annotations

from typing import Optional

import pandas as pd

from collect.kinds import KindTables
from collect.render import Grid
from collect.train import grids, overhead, tables

TABLE_FILES = ("q1", "table1", "strong", "table2", "table3", "test", "q4", "overhead")
PLOT_OF = {"q1": "q1_epoch_time", "table1": "table1_speedup", "table2": "table2_compute_comm", "q4": "q4_loss_accuracy",
           "q4_test": "q4_test_accuracy"}  # plot key -> its file name
SECTION_PLOTS = {"q4": ("q4", "q4_test")}  # grid -> its plots, where not the plot of its own key


def build_tables(frame: pd.DataFrame, epochs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    scaling = tables.scaling_table(frame)  # shared by four tables
    return {
        "q1": tables.q1_table(frame), "table1": tables.table1(frame, scaling),
        "strong": tables.strong_scaling(frame, scaling), "table2": tables.table2(frame, scaling),
        "table3": tables.table3(frame, scaling), "test": tables.accuracy_table(frame, epochs),
        "q4": tables.q4_table(frame, epochs),
        "q4_curves": tables.q4_curves(frame, epochs),
        "overhead": overhead.overhead_table(frame),
    }


def build_grids(frame: pd.DataFrame, built: dict[str, pd.DataFrame]) -> tuple[Grid, ...]:
    protocol = tables.timing_protocol(frame)
    return (
        grids.q1_grid(built["q1"], protocol),
        grids.table1_grid(built["table1"], protocol),
        grids.strong_grid(built["strong"], protocol),
        grids.table2_grid(built["table2"], protocol),
        grids.table3_grid(built["table3"], protocol),
        grids.accuracy_grid(built["test"]),
        grids.q4_grid(built["q4"], tables.largest_fitting_batch(built["q1"])),
        overhead.overhead_grid(built["overhead"]),
    )


def make_plots(built: dict[str, pd.DataFrame]) -> dict[str, Optional[bytes]]:
    from collect.train import plots  # matplotlib: only for the report

    return {
        "q1": plots.epoch_time(built["q1"]), "table1": plots.speedup(built["table1"]),
        "table2": plots.compute_comm(built["table2"]), "q4": plots.q4_curves(built["q4_curves"]),
        "q4_test": plots.q4_test_accuracy(built["q4_curves"]),
    }



KIND = KindTables(
    "train", "Scaling study", "ResNet-18 data-parallel training",
    lambda loaded: build_tables(loaded.frame, loaded.epochs),
    lambda loaded, built: build_grids(loaded.frame, built),
    TABLE_FILES, make_plots, PLOT_OF, SECTION_PLOTS,
)
