"""The sweep table: where a study varies fields the homework's tables do not (the LR and its rule,
warmup, momentum, weight decay, SyncBN, the seed), one row per configuration of each setup that
varies them, with the varied fields as columns and the outcome (final test accuracy, time to
train, images/s), sorted by a metric the user picks (`collect --sort`); the console shows the
best (`--top`), sweep.csv holds every row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from collect.render import Grid, number, percent, seconds, status_text
from collect.render import accuracy as accuracy_text
from collect.repeats import ranged
import collect.train.formulas as f
from collect.train.grids import caption, ended_note, repeats_cell, setup_name
from collect.train.tables import CONFIG
from collect.view import DEFAULT_VIEW, View, shown
from results_format.errors import UserError

SWEPT = ("lr", "momentum", "weight_decay", "lr_scaling", "lr_ref_batch", "warmup_epochs", "sync_bn", "seed")
SETUP = [c for c in CONFIG if c not in SWEPT]  # a setup: what its sweep's configurations share
FILES = ("sweep",)


@dataclass(frozen=True)
class Metric:
    """A figure the sweep can be sorted by: its column (with _min and _max), whether lower is
    better, its words, and how it is shown."""

    column: str
    lower_is_better: bool
    words: str
    unit: str

    def text(self, value: float) -> str:
        if self.column == "test_accuracy":
            return percent(value, 2)
        return seconds(value) if self.column == "time_to_train_s" else number(value, 0)


METRICS = {m.column: m for m in (Metric("test_accuracy", False, "final test accuracy", ""),
                                 Metric("time_to_train_s", True, "time to train", " s"),
                                 Metric("images_per_s", False, "images per second over the training", " images/s"))}
DEFAULT_METRIC = "test_accuracy"
VALUES = ["test_accuracy", "time_to_train_s", "images_per_s"]
COLUMNS = (CONFIG + ["gpus", "global_batch", "status", "repeats", "runs", "seeding", "gpu_model", "error"]
           + [f"{v}{end}" for v in VALUES for end in ("", "_min", "_max")] + ["test_loss", "evaluated_images", "lr_after_warmup"]
           + ["test_accuracy_values"])  # each repeat's, for the verdict on the best against the next (not in the CSV)
FORMULA = ("images/s = epochs x training images / time to train (its min and max from the time's max and min); "
           "sorted by the metric, the best first; rows without it last")


def metric_named(name: str) -> Metric:
    """The metric `collect --sort` names ("" for the default); UserError listing them otherwise."""
    try:
        return METRICS[name or DEFAULT_METRIC]
    except KeyError:
        raise UserError(f"--sort {name}: no such metric; use one of {', '.join(METRICS)}") from None


def sweep_table(test: pd.DataFrame, metric: str = DEFAULT_METRIC) -> pd.DataFrame:
    """The configurations (rows of the test-accuracy table: repeats collapsed to their median,
    with min and max) of every setup whose configurations differ in a SWEPT field, sorted by
    `metric` (the best first, NaN last; ties keep the table's order).
    images_per_s = epochs x train_images / time_to_train_s; _min from time_to_train_s_max, _max from _min."""
    chosen = metric_named(metric)
    table = pd.DataFrame(columns=COLUMNS)
    if len(test):
        varied = test.groupby(SETUP, sort=False, dropna=False)[list(SWEPT)].transform("nunique") > 1
        table = test[varied.any(axis=1)].copy()
    images = table.epochs * table.train_images
    table["images_per_s"] = images / table.time_to_train_s
    table["images_per_s_min"] = images / table.time_to_train_s_max
    table["images_per_s_max"] = images / table.time_to_train_s_min
    table = table[COLUMNS].sort_values(chosen.column, ascending=chosen.lower_is_better, na_position="last",
                                       kind="stable").reset_index(drop=True)
    table.attrs["sort"] = chosen.column  # the answer names the best by it
    return table


def varied_fields(table: pd.DataFrame) -> list[str]:
    """The SWEPT fields that differ within a setup of the table, in SWEPT's order."""
    if table.empty:
        return []
    counts = table.groupby(SETUP, sort=False, dropna=False)[list(SWEPT)].nunique()
    return [f for f in SWEPT if (counts[f] > 1).any()]


def field_text(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def setup_text(r) -> str:
    """"2 nodes x 2 GPUs, DDP, batch 128 per GPU, 5 epochs": what a setup's configurations share."""
    return f"{setup_name(r)}, batch {r.batch_per_gpu} per GPU, {r.epochs} epochs"


def sweep_grid(table: pd.DataFrame, fields: list[str], setups: bool, metric: Metric) -> Grid:
    """A row per configuration: its setup (`setups`: when the table holds more than one), the varied
    fields, then the outcome; the table is sorted by `metric`."""
    header = (["setup"] if setups else []) + fields + ["test accuracy", "time to train (s)", "images/s", "repeats"]
    rows = []
    for r in table.itertuples(index=False):
        line = [setup_text(r)] if setups else []
        line += [field_text(getattr(r, f)) for f in fields]
        if r.status != "ok":
            rows.append(line + [status_text(r.status), "", "", str(r.runs)])
            continue
        accuracy = "not recorded" if math.isnan(r.test_accuracy) else ranged(
            r, "test_accuracy", lambda v, n=r.evaluated_images: accuracy_text(v, n))
        rows.append(line + [accuracy, ranged(r, "time_to_train_s"), ranged(r, "images_per_s", lambda v: number(v, 0)),
                            repeats_cell(r)])
    order = "lowest" if metric.lower_is_better else "highest"
    text = caption(table, "test accuracy (%), time to train (seconds), images per second", "every epoch, summed")
    text += (f" Sorted by {metric.words} ({metric.column}), {order} first: `collect --sort` picks another "
             f"({', '.join(METRICS)}), `--top N` shows N rows.")
    where = "" if setups or table.empty else f" on {setup_text(next(table.itertuples(index=False)))}"
    return Grid("sweep", f"Sweep{where}: {', '.join(fields)}, by {metric.words}", text, header, rows,
                [FORMULA, "test accuracy, time to train: as in the test-accuracy table", f.FORMULAS["spread"],
                 *ended_note(table)],
                "" if rows else "No configuration of the sweep has a result yet.",
                text_columns=tuple(range(1 + len(fields) if setups else len(fields))))


def sweep_grids(built: dict[str, pd.DataFrame], view: View = DEFAULT_VIEW) -> tuple[Grid, ...]:
    """The sweep's grid, of its `view.top` best configurations, where the study has a sweep."""
    table = built["sweep"]
    if table.empty:
        return ()
    fields = varied_fields(table)
    best = shown(table, "sweep.csv", view.top)
    multi = table.groupby(SETUP, sort=False, dropna=False).ngroups > 1
    return (best.noted(sweep_grid(best.table, fields, multi, metric_named(view.sort))),)
