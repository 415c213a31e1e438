"""The command study's tables as pure functions over its rows (collect.command.rows).

A figure over repeats is the median over a setup's ok cells, with min and max beside it. Scaling
compares a group's setups that differ only in their process count N (GPUs, or CPU processes),
each against the group's smallest N0, on each cell's declared time metric (time_metric):

    speedup    S = T(N0) / T(N)            (medians over repeats)
    efficiency E = S / (N / N0)            (1.0: perfect scaling)

weak: the batch per GPU (the user's batch_per_gpu) is fixed, so each process does N0/N of the
epoch's steps; strong: the global batch batch_per_gpu x N is fixed; "fixed fields" where the study
has no batch_per_gpu (every other field the same). Every comparison of times is collect.verdict's
(threshold 5%): b = the N-process times against a = the N0-process times.
"""
from __future__ import annotations

import math
from typing import Any

import pandas as pd

from collect.command.rows import CommandRows
from collect.verdict import verdict

THRESHOLD = 0.05
METRIC_COLUMNS = ["metric", "setup", "processes", "value", "value_min", "value_max", "repeats", "repeat_values"]
SCALING_COLUMNS = ["regime", "series", "metric", "setup", "processes", "base_processes", "time", "time_min",
                   "time_max", "repeats", "speedup", "efficiency", "ratio", "ratio_low", "ratio_high", "outcome",
                   "direction", "one_run", "time_values", "cell_id_values"]
WEAK, STRONG, FIXED = "weak", "strong", "fixed fields"


def by_metric(values: pd.DataFrame) -> pd.DataFrame:
    """Per metric and setup, over its ok repeats: value = the median, value_min, value_max, repeats
    = how many, values = each repeat's (for collect.verdict; not in the CSV). Example: epoch_s 10,
    12, 11 -> 11 (10-12), 3. Metrics in the order they were first written, setups in row order."""
    if values.empty:
        return pd.DataFrame(columns=METRIC_COLUMNS)
    groups = values.groupby(["metric", "setup", "processes"], sort=False).value
    table = pd.concat([groups.median(), groups.min().rename("value_min"), groups.max().rename("value_max"),
                       groups.size().rename("repeats"), groups.agg(tuple).rename("repeat_values")], axis=1).reset_index()
    return table.reindex(columns=METRIC_COLUMNS)


def series(values: pd.DataFrame) -> pd.DataFrame:
    """The time-metric rows (each cell's own time_metric) with the series each belongs to, once per
    regime: weak (group and batch per GPU fixed), strong (group but batch_per_gpu and the global
    batch fixed), or fixed fields (the group fixed, no batch_per_gpu)."""
    timed = values[values.metric == values.time_metric]
    has_batch = timed.batch_per_gpu.notna()
    parts = []
    if has_batch.any():
        with_batch = timed[has_batch]
        weak = with_batch.assign(regime=WEAK, series=with_batch.group)
        strong_group = [_without_batch(g) for g in with_batch.group]
        global_batch = (with_batch.batch_per_gpu * with_batch.processes).astype(int)
        strong = with_batch.assign(regime=STRONG, series=[
            f"{g}{', ' if g else ''}global batch {b}" for g, b in zip(strong_group, global_batch, strict=True)])
        parts += [weak, strong]
    if (~has_batch).any():
        parts.append(timed[~has_batch].assign(regime=FIXED, series=timed[~has_batch].group))
    return pd.concat(parts, ignore_index=True) if parts else timed.assign(regime=[], series=[])


def _without_batch(group: str) -> str:
    """A group's name without its batch_per_gpu (a strong series holds several)."""
    return ", ".join(p for p in group.split(", ") if not p.startswith("batch_per_gpu=") and p != "all")


def scaling(values: pd.DataFrame) -> pd.DataFrame:
    """Each series that holds two or more process counts: per N, its time (median, range,
    repeats), speedup and efficiency against the series' smallest N0 (the module's docstring),
    and the verdict on its times against N0's (b against a: ratio = median T(N) / median T(N0), its
    interval, outcome and direction: -1 faster, +1 slower, beyond the threshold; none at N0); each
    repeat's time and cell (time_values, cell_id_values: for the answer's verdicts and `submit
    --settle`; in no CSV)."""
    rows: list[dict[str, Any]] = []
    found = series(values)
    for (regime, name, metric), part in found.groupby(["regime", "series", "metric"], sort=False):
        counts = sorted(part.processes.unique())
        if len(counts) < 2:
            continue
        by_n = {n: part[part.processes == n] for n in counts}
        if any(p.setup.nunique() > 1 for p in by_n.values()):
            continue  # two setups at one N (a field the name leaves out differs): no single base
        base = by_n[counts[0]].value
        for n in counts:
            times = by_n[n].value
            speedup = base.median() / times.median()
            rows.append(dict(regime=regime, series=name, metric=metric, setup=by_n[n].setup.iloc[0], processes=n,
                             base_processes=counts[0], time=times.median(), time_min=times.min(),
                             time_max=times.max(), repeats=len(times), speedup=speedup,
                             efficiency=speedup / (n / counts[0]), **_judged(base, times, n == counts[0]),
                             time_values=tuple(times), cell_id_values=tuple(by_n[n].cell_id)))
    return pd.DataFrame(rows, columns=SCALING_COLUMNS)


def _judged(base: pd.Series, times: pd.Series, is_base: bool) -> dict[str, Any]:
    """The verdict's figures on times against base (collect.verdict); none for the base itself."""
    if is_base:
        return dict(ratio=math.nan, ratio_low=math.nan, ratio_high=math.nan, outcome="", direction=0, one_run=False)
    v = verdict(list(base), list(times), THRESHOLD)
    return dict(ratio=v.ratio, ratio_low=v.low, ratio_high=v.high, outcome=v.outcome, direction=v.direction,
                one_run=v.one_run)


def build(rows: CommandRows) -> dict[str, pd.DataFrame]:
    """Every command table by key (the keys of collect.command's KIND)."""
    from collect.repeats import setup_runs

    return {"command_cells": rows.cells, "command_runs": setup_runs(rows.cells),
            "command_metrics": by_metric(rows.values), "command_scaling": scaling(rows.values)}
