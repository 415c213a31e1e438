"""The command kind's runs for `collect --compare` (collect.comparable): every metric of the timed
line; a name ending in _s is a time (lower is better), one holding "acc" an accuracy (higher),
any other is compared without a better side. The headline is the cell's time_metric."""
from __future__ import annotations

from collect.cells import Loaded
from collect.command.rows import command_rows
from collect.comparable import Metric, Run, Runs, configuration, figures


def metric(name: str) -> Metric:
    if name.endswith("_s"):
        return Metric(name, name, "s", -1, True)
    return Metric(name, name, "", 1 if "acc" in name else 0, False)


def runs(loaded: Loaded) -> Runs:
    cells = loaded.of_kind("command")
    rows = command_rows(cells)
    status = dict(zip(rows.cells.cell_id, rows.cells.status, strict=True))
    by_cell = dict(tuple(rows.values.groupby("cell_id", sort=False)))
    found, metrics = [], {}
    for c in cells:
        values = by_cell.get(c.cell_id, rows.values.iloc[:0])
        numbers = dict(zip(values.metric, values.value, strict=True))
        metrics.update({name: metric(name) for name in numbers})
        headline = str(c.cell.get("time_metric", "epoch_s"))
        found.append(Run("command", configuration(c.cell), status.get(c.cell_id, c.status), figures(numbers),
                         headline if headline in numbers else ""))
    return found, metrics
