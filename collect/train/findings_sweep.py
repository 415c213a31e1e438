"""The sweep's findings (the lab's question: the best test accuracy a setup reaches): per setup of
the sweep table, its best configuration by the table's metric, with its spread over repeats, and
whether the next best is within that spread (collect.findings.compare: then the sweep does not
tell them apart). A setup may hold 100,000 configurations: rows are read by position, only those
a sentence names."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from collect.findings import DESCRIBED, LISTED, Evidence, Finding, Measured, compare, more, one_run, shown
from collect.train.labels import missing_reason
from collect.train.sweep import DEFAULT_METRIC, METRICS, SETUP, Metric, field_text, setup_text, varied_fields

SWEEP = "sweep"


def sweep_findings(sweep: pd.DataFrame) -> list[Finding]:
    """One finding per setup of the sweep (the first DESCRIBED; the rest counted)."""
    metric = METRICS[sweep.attrs.get("sort", DEFAULT_METRIC)]
    table = sweep.reset_index(drop=True)
    fields = varied_fields(table)
    setups = list(table.groupby(SETUP, sort=False, dropna=False).indices.values())  # positions, in table order
    found = [_setup_best(table, np.sort(group), metric, fields) for group in setups[:DESCRIBED]]
    return found + more(SWEEP, setups, "setups of the sweep", lambda group: _evidence(table, int(min(group)), fields))


def _row(table: pd.DataFrame, position: int) -> Any:
    return next(table.iloc[[position]].itertuples(index=False))


def _config(r: Any, fields: list[str]) -> str:
    return ", ".join(f"{f} = {field_text(getattr(r, f))}" for f in fields) or "its one configuration"


def _evidence(table: pd.DataFrame, position: int, fields: list[str]) -> Evidence:
    r = _row(table, position)
    return Evidence("sweep", position, f"{setup_text(r)}: {_config(r, fields)}")


def _setup_best(table: pd.DataFrame, group: np.ndarray, metric: Metric, fields: list[str]) -> Finding:
    """The best of one setup's configurations (the table is sorted: the first with the metric),
    against the next; what has no figure yet is said."""
    column = metric.column
    part = table.iloc[group]
    with_figure = ((part.status == "ok") & part[column].notna()).to_numpy()
    ranked, missing = group[with_figure], group[~with_figure]
    name = setup_text(_row(table, int(group[0])))
    without = _without(table, missing, fields)
    if not len(ranked):
        return Finding(SWEEP, f"{name}: no configuration of the sweep has a {metric.words} yet{without}.", {},
                       tuple(_evidence(table, int(i), fields) for i in group[:LISTED]))
    best = _row(table, int(ranked[0]))
    figure = Measured.of(best, column)
    text = f"{name}: the best {metric.words}, {_shown(figure, metric)}, with {_config(best, fields)}"
    numbers = {f"best_{column}": figure.value}
    cited = [_evidence(table, int(ranked[0]), fields)]
    if len(ranked) == 1:
        return Finding(SWEEP, text + f", the only one with a result{one_run(figure)}{without}.", numbers, tuple(cited))
    second = _row(table, int(ranked[1]))
    runner = Measured.of(second, column)
    the_next = f"the next, {_shown(runner, metric)} with {_config(second, fields)}"
    ties = _within(table.iloc[ranked[1:]], column, figure)
    if compare(figure, runner) == 0:
        verdict = (f"; {the_next}, is within the spread: the sweep does not tell them apart ({ties:,} of the other "
                   f"{len(ranked) - 1:,} are within it)")
    else:
        verdict = f"; {_difference(figure, runner, metric)} {the_next}"
    numbers.update({f"next_{column}": runner.value, "within_spread": float(ties)})
    cited.append(_evidence(table, int(ranked[1]), fields))
    return Finding(SWEEP, text + verdict + one_run(figure, runner) + without + ".", numbers, tuple(cited))


def _within(rows: pd.DataFrame, column: str, best: Measured) -> int:
    """How many rows `compare` finds not distinguishable from the best, over a column at once:
    |value - best| <= max(the row's spread, the best's), a spread being max - min (Measured.of:
    none without the min and max)."""
    value = rows[column]
    spread = rows[f"{column}_max"].fillna(value) - rows[f"{column}_min"].fillna(value)
    return int(((value - best.value).abs() <= np.maximum(spread, best.spread)).sum())


def _without(table: pd.DataFrame, missing: np.ndarray, fields: list[str]) -> str:
    """"; without a result: lr = 0.2 (OOM), ... and 197 more": the first LISTED named, the rest counted."""
    if not len(missing):
        return ""
    named = [f"{_config(r, fields)} ({missing_reason(r)})" for r in table.iloc[missing[:LISTED]].itertuples(index=False)]
    rest = f" and {len(missing) - LISTED:,} more" if len(missing) > LISTED else ""
    return "; without a result: " + (", ".join(named) + rest if rest or len(named) < 2 else
                                      ", ".join(named[:-1]) + " and " + named[-1])


def _shown(m: Measured, metric: Metric) -> str:
    return shown(m, metric.text, metric.unit)


def _difference(best: Measured, runner: Measured, metric: Metric) -> str:
    """"2.10 points above", "1.50 s below": how far the best is from the next, on its side."""
    gap = abs(best.value - runner.value)
    amount = f"{100 * gap:.2f} points" if metric.column == "test_accuracy" else metric.text(gap) + metric.unit
    return f"{amount} {'below' if metric.lower_is_better else 'above'}"
