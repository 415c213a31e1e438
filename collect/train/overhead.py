"""Where the jobs' time went: per configuration, the epochs against everything else (each run's
phases, jobs.core.phases), and the study's total, so a user sees what the GPU-hours bought.
The table is pure (overhead_table); overhead_grid lays it out."""
from __future__ import annotations

import dataclasses
import math

import pandas as pd

from collect.render import Grid, percent, seconds, status_text
from collect.train.grids import SHOWN, caption, ended_note, repeats_cell, row_name, varying
from collect.train.labels import cpu_only
from collect.train.tables import ENGINE_ORDER, median_repeats

# Per run, from its phases: what each column adds up
PARTS = ["start_s", "setup_s", "eval_s", "measure_s", "write_s", "other_s"]
VALUES = ["job_s", "epochs_s", "overhead_s", "epochs_share", *PARTS, "gpu_hours"]
CONFIGURATION, TOTAL = "configuration", "study total"
FORMULAS = [
    "job = launch + start + set-up + body + writes: the task's wall time, from the scheduler starting it "
    "(where it says when) to the result",
    "everything else = job - epochs; epochs share = epochs / job",
    "start = launch + start: the scheduler starting the task to the job's first line (interpreter, imports)",
    "other = body - epochs - test evaluation - measurements (checkpoint reads, the GPU monitor, ...)",
    "GPU-hours = job x GPUs / 3600",
    "per configuration: medians over its ok repeats (everything else and the share: of the medians); study "
    "total: every run with phases (failed and oom included: their time was spent too), summed",
]


def run_phases(frame: pd.DataFrame) -> pd.DataFrame:
    """Each run's job time and its parts (VALUES) from its phase_* columns; NaN where it has none."""
    phase = {c.removeprefix("phase_"): frame[c] for c in frame.columns if c.startswith("phase_")}
    job = sum(phase[k].fillna(0) for k in ("launch_s", "start_s", "setup_s", "body_s", "write_s"))
    job = job.where(phase["body_s"].notna())
    epochs = phase["epochs_s"].fillna(0).where(job.notna())
    eval_s, measure = phase["eval_s"].fillna(0), phase["measure_s"].fillna(0)
    return frame.assign(
        job_s=job, epochs_s=epochs, overhead_s=job - epochs, epochs_share=epochs / job,
        start_s=phase["launch_s"].fillna(0) + phase["start_s"].fillna(0), setup_s=phase["setup_s"],
        eval_s=eval_s.where(job.notna()), measure_s=measure.where(job.notna()), write_s=phase["write_s"],
        other_s=phase["body_s"] - epochs - eval_s - measure, gpu_hours=job * frame.gpus / 3600,
    )


def overhead_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration (scope CONFIGURATION): the median over its ok repeats of each
    value (everything else and the epochs' share: of the medians, so a row adds up); then one row
    for the whole study (scope TOTAL): every run with phases, summed. A configuration whose runs
    recorded no phases (results written before them) keeps its row, without numbers."""
    runs = run_phases(frame)
    table = median_repeats(runs, VALUES).assign(scope=CONFIGURATION)
    table = table.assign(overhead_s=table.job_s - table.epochs_s, epochs_share=table.epochs_s / table.job_s)
    order = table.assign(_engine=table.engine.map(ENGINE_ORDER))
    table = order.sort_values(["batch_per_gpu", "gpus", "nodes", "_engine"], kind="stable").drop(columns="_engine")
    timed = runs[runs.job_s.notna()]
    total = {v: timed[v].sum() for v in VALUES} | {"epochs_share": timed.epochs_s.sum() / timed.job_s.sum()
                                                    if len(timed) else math.nan}
    total |= {"scope": TOTAL, "runs": len(timed), "repeats": int((timed.status == "ok").sum()), "status": "ok"}
    whole = pd.concat([table, pd.DataFrame([total])], ignore_index=True)
    counts = [c for c in table.columns if pd.api.types.is_integer_dtype(table[c])]
    return whole.astype({c: "Int64" for c in counts})  # the total has no configuration: its fields are <NA>


def overhead_grid(table: pd.DataFrame) -> Grid:
    header = ["setup", "batch per GPU", "job (s)", "epochs (s)", "everything else (s)", "epochs share", "start (s)",
              "set-up (s)", "test evaluation (s)", "measurements (s)", "writes (s)", "other (s)", "GPU-hours",
              "repeats"]
    configs = table[table.scope == CONFIGURATION]
    fields = varying(configs, SHOWN)
    cpu = cpu_only(configs.gpu_model)  # no GPU-hours: the column is left out
    rows = []
    for r in configs.itertuples(index=False):
        line = [row_name(r, fields), str(r.batch_per_gpu)]
        if r.status != "ok" or math.isnan(r.job_s):
            why = status_text(r.status) if r.status != "ok" else "no phases recorded"
            rows.append(line + [why] + [""] * 10 + [repeats_cell(r)])
            continue
        rows.append(line + _values(r) + [repeats_cell(r)])
    total = table[table.scope == TOTAL].iloc[0]
    if total.runs:
        rows.append([f"study total ({int(total.runs)} runs, summed)", ""] + _values(total) + [str(int(total.repeats))])
    empty = "" if total.runs else "No run recorded its phases (results written before they were)."
    grid = Grid("overhead", "Where the jobs' time went: epochs and everything else",
                caption(configs, "seconds per run (the total row: summed)" + ("" if cpu else ", GPU-hours"),
                        "every phase of the job"), header, rows, FORMULAS + ended_note(configs), empty)
    return _without_gpu_hours(grid) if cpu else grid


def _without_gpu_hours(grid: Grid) -> Grid:
    at = grid.header.index("GPU-hours")
    return dataclasses.replace(grid, header=grid.header[:at] + grid.header[at + 1:],
                               rows=[row[:at] + row[at + 1:] for row in grid.rows],
                               formulas=[f for f in grid.formulas if "GPU-hours" not in f])


def _values(r) -> list[str]:
    return ([seconds(r.job_s), seconds(r.epochs_s), seconds(r.overhead_s), percent(r.epochs_share)]
            + [seconds(getattr(r, p)) for p in PARTS] + [f"{r.gpu_hours:.4f}"])
