"""GPU-hours spent per configuration, beside the part its epochs used (collect.spent_json's runs)."""
from __future__ import annotations

import dataclasses
import math

import pandas as pd

from collect.render import Grid, number, percent, seconds
from collect.train.grids import SHOWN, row_name, varying
from collect.train.labels import cpu_only, hosts
from collect.train.tables import CONFIG, ENGINE_ORDER
from collect.view import DEFAULT_VIEW, View, shown

FILES = ("spent",)
COLUMNS = CONFIG + ["gpus", "runs", "jobs", "spent_gpu_h", "epochs_s", "epochs_gpu_h", "in_epochs", "sources",
                    "hosts_seen"]
FORMULAS = ["GPU-h spent = sum over every run of every job of the configuration's cells (failed ones and retries "
            "included) of GPUs x elapsed seconds / 3600",
            "GPU-h in epochs = sum over its ok runs of GPUs x (sum of epoch_s) / 3600; in epochs = that / GPU-h spent "
            "(the rest: starting, evaluating, checkpoints, failed attempts)",
            "epochs, all runs = sum of epoch_s over every epoch of every ok run (all repeats): not one run's time"]


def spent_table(frame: pd.DataFrame, epochs: pd.DataFrame, charges: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration whose cells ran a job (a configuration: a cell up to its repeat):
    runs = its cells that ran; jobs = the jobs they ran; spent_gpu_h = sum of the runs' gpu_hours;
    epochs_s = sum of epoch_s over every epoch of its ok cells; epochs_gpu_h = sum over those cells
    of GPUs x their epochs' seconds / 3600; in_epochs = epochs_gpu_h / spent_gpu_h (NaN at 0);
    sources = where the elapsed times come from (sacct, squeue, process, result; limit: a job whose
    time nothing recorded, charged its time limit; unrecorded: running, not timed yet)."""
    if charges.empty or frame.empty:
        return pd.DataFrame(columns=COLUMNS)
    per_cell = charges.groupby("cell_id").agg(spent_gpu_h=("gpu_hours", "sum"), jobs=("job_id", "nunique"),
                                              sources=("source", lambda s: ",".join(sorted(set(s)))))
    seconds_of = epochs.groupby("cell_id").epoch_s.sum().rename("epochs_s") if len(epochs) else None
    cells = frame.merge(per_cell.reset_index(), on="cell_id", how="inner")
    ok = cells.status == "ok"
    cells["epochs_s"] = cells.cell_id.map(seconds_of).where(ok) if seconds_of is not None else math.nan
    cells["epochs_gpu_h"] = cells.gpus * cells.epochs_s / 3600
    # the setup's name, as the other tables give it (grids.setup_name: a 2 x 2 launch on one host)
    cells["hosts_seen"] = [hosts(h) if good else 0 for h, good in
                           zip(cells.get("hosts", pd.Series(None, index=cells.index)), ok, strict=True)]
    table = cells.groupby(CONFIG, dropna=False).agg(
        gpus=("gpus", "first"), runs=("cell_id", "size"), jobs=("jobs", "sum"), spent_gpu_h=("spent_gpu_h", "sum"),
        epochs_s=("epochs_s", lambda s: s.sum(min_count=1)), epochs_gpu_h=("epochs_gpu_h", lambda s: s.sum(min_count=1)),
        sources=("sources", lambda s: ",".join(sorted(set(",".join(s).split(","))))), hosts_seen=("hosts_seen", "max"),
    ).reset_index()
    table["in_epochs"] = [e / s if s > 0 else math.nan for e, s in zip(table.epochs_gpu_h, table.spent_gpu_h,
                                                                       strict=True)]
    order = table.assign(_engine=table.engine.map(ENGINE_ORDER))  # as the other tables: by GPUs, engine, batch
    table = order.sort_values(["gpus", "_engine", "nodes", "batch_per_gpu"], kind="stable")[COLUMNS].reset_index(drop=True)
    table.attrs["measured_at"] = charges.attrs.get("measured_at", "")
    return table


def spent_grid(table: pd.DataFrame) -> Grid:
    header = ["setup", "batch per GPU", "epochs", "runs", "jobs", "GPU-h spent", "epochs, all runs (s)",
              "GPU-h in epochs",
              "in epochs"]
    fields = varying(table, SHOWN | {"epochs", "timed_epoch"})
    rows = [[row_name(r, fields), str(r.batch_per_gpu), str(r.epochs), str(r.runs), str(r.jobs),
             number(r.spent_gpu_h, 3), seconds(r.epochs_s), number(r.epochs_gpu_h, 3), percent(r.in_epochs)]
            for r in table.itertuples(index=False)]
    return Grid("spent", "GPU-hours spent per configuration", spent_caption(table), header, rows, FORMULAS,
                "" if rows else "No job of this study has run yet.")


def spent_caption(table: pd.DataFrame) -> str:
    """Units, the study's total over the table's configurations, where the times come from."""
    total = table.spent_gpu_h.sum() if len(table) else 0.0
    sources = sorted({s for text in table.sources for s in text.split(",")}) if len(table) else []
    return (f"Units: GPU-hours, seconds. {number(total, 3)} GPU-h spent by the study in all; elapsed times "
            f"from {', '.join(sources) or '-'}, measured {table.attrs.get('measured_at') or 'at an unknown time'}.")


def grids(built: dict[str, pd.DataFrame], view: View = DEFAULT_VIEW) -> tuple[Grid, ...]:
    """The grid where spent.json said anything (`python -m orchestrator collect` writes it), of at
    most view.rows configurations; the total is over every one. None for a study run on CPUs only
    (labels.cpu_only): its "GPUs" were processes sharing a few cores, so it says no GPU-hours."""
    if not len(built["spent"]) or cpu_only(built["test"].gpu_model):
        return ()
    cut = shown(built["spent"], "spent.csv", view.rows, named=CONFIG)
    grid = cut.noted(spent_grid(cut.table))
    return (dataclasses.replace(grid, caption=spent_caption(built["spent"])),)
