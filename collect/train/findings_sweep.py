"""The sweep's findings (the lab's question: the best test accuracy a setup reaches): per setup of
the sweep table, its best configuration by the table's metric, with its spread over repeats, and
whether the next best is within that spread (collect.findings.compare: then the sweep does not
tell them apart)."""
from __future__ import annotations

from typing import Any

import pandas as pd

from collect.findings import DESCRIBED, Evidence, Finding, Measured, compare, more, one_run, shown, without_results
from collect.train.labels import missing_reason, present
from collect.train.sweep import DEFAULT_METRIC, METRICS, SETUP, Metric, field_text, setup_text, varied_fields

SWEEP = "sweep"


def sweep_findings(sweep: pd.DataFrame) -> list[Finding]:
    """One finding per setup of the sweep (the first DESCRIBED; the rest counted)."""
    metric = METRICS[sweep.attrs.get("sort", DEFAULT_METRIC)]
    fields = varied_fields(sweep)
    rows = list(enumerate(sweep.reset_index(drop=True).itertuples(index=False)))
    setups: dict[int, list[tuple[int, Any]]] = {}
    for (i, r), setup in zip(rows, sweep.groupby(SETUP, sort=False, dropna=False).ngroup(), strict=True):
        setups.setdefault(setup, []).append((i, r))
    groups = list(setups.values())
    found = [_setup_best(group, metric, fields) for group in groups[:DESCRIBED]]
    return found + more(SWEEP, groups, "setups of the sweep", lambda group: _evidence(group[0][0], group[0][1], fields))


def _config(r: Any, fields: list[str]) -> str:
    return ", ".join(f"{f} = {field_text(getattr(r, f))}" for f in fields) or "its one configuration"


def _evidence(i: int, r: Any, fields: list[str]) -> Evidence:
    return Evidence("sweep", i, f"{setup_text(r)}: {_config(r, fields)}")


def _setup_best(group: list[tuple[int, Any]], metric: Metric, fields: list[str]) -> Finding:
    """The best of one setup's configurations (the table is sorted: the first with the metric),
    against the next; what has no figure yet is said."""
    name, column = setup_text(group[0][1]), metric.column
    ranked = [(i, r) for i, r in group if r.status == "ok" and present(getattr(r, column))]
    kept = {i for i, _ in ranked}
    missing = [(i, r) for i, r in group if i not in kept]
    without = ("; without a result: " + without_results((_config(r, fields), missing_reason(r)) for _, r in missing)
               if missing else "")
    if not ranked:
        return Finding(SWEEP, f"{name}: no configuration of the sweep has a {metric.words} yet{without}.", {},
                       tuple(_evidence(i, r, fields) for i, r in group[:DESCRIBED]))
    (i1, best), figure = ranked[0], Measured.of(ranked[0][1], column)
    text = f"{name}: the best {metric.words}, {_shown(figure, metric)}, with {_config(best, fields)}"
    numbers = {f"best_{column}": figure.value}
    cited = [_evidence(i1, best, fields)]
    if len(ranked) == 1:
        return Finding(SWEEP, text + f", the only one with a result{one_run(figure)}{without}.", numbers, tuple(cited))
    (i2, second), runner = ranked[1], Measured.of(ranked[1][1], column)
    ties = sum(compare(Measured.of(r, column), figure) == 0 for _, r in ranked[1:])
    the_next = f"the next, {_shown(runner, metric)} with {_config(second, fields)}"
    if compare(figure, runner) == 0:
        verdict = (f"; {the_next}, is within the spread: the sweep does not tell them apart ({ties} of the other "
                   f"{len(ranked) - 1} are within it)")
    else:
        verdict = f"; {_difference(figure, runner, metric)} {the_next}"
    numbers.update({f"next_{column}": runner.value, "within_spread": float(ties)})
    cited.append(_evidence(i2, second, fields))
    return Finding(SWEEP, text + verdict + one_run(figure, runner) + without + ".", numbers, tuple(cited))


def _shown(m: Measured, metric: Metric) -> str:
    return shown(m, metric.text, metric.unit)


def _difference(best: Measured, runner: Measured, metric: Metric) -> str:
    """"2.10 points above", "1.50 s below": how far the best is from the next, on its side."""
    gap = abs(best.value - runner.value)
    amount = f"{100 * gap:.2f} points" if metric.column == "test_accuracy" else metric.text(gap) + metric.unit
    return f"{amount} {'below' if metric.lower_is_better else 'above'}"
