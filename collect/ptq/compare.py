"""The PTQ kind's runs for `collect --compare` (collect.comparable): each variant's test accuracy."""
from __future__ import annotations

from collect.comparable import Metric, Run, Runs, configuration, figures
from collect.cells import Loaded
from collect.ptq.rows import ptq_rows

REPEAT_FIELDS = ("seed", "repeat")  # what a PTQ cell's repeats differ in

def runs(loaded: Loaded) -> Runs:
    """PTQ: each variant's test accuracy (in %); the headline is the last of the notebook's variants
    (the model the notebook builds up to)."""
    cells = loaded.of_kind("ptq")
    rows = ptq_rows(cells)
    status = dict(zip(rows.cells.cell_id, rows.cells.status, strict=True))
    metrics: dict[str, Metric] = {}
    found = []
    by_cell = dict(tuple(rows.variants.groupby("cell_id", sort=False)))
    for c in cells:
        variants = by_cell.get(c.cell_id, rows.variants.iloc[:0])
        values = {}
        for v in variants.itertuples(index=False):
            name = f"accuracy {v.name}"
            metrics.setdefault(name, Metric(name, f"accuracy, {v.name}", "%", 1, False))
            values[name] = 100 * v.accuracy
        notebook = variants[variants.role == "notebook"]
        headline = f"accuracy {notebook.name.iloc[-1]}" if len(notebook) else ""
        found.append(Run("ptq", configuration(c.cell, REPEAT_FIELDS), status.get(c.cell_id, c.status), figures(values), headline))
    return found, metrics
