"""The all-reduce kind's runs for `collect --compare` (collect.comparable): busbw at each message size."""
from __future__ import annotations

from collect.allreduce.rows import allreduce_rows
from collect.comparable import Metric, Run, Runs, configuration, figures
from collect.cells import Loaded
from jobs.allreduce.cell import bytes_text

def runs(loaded: Loaded) -> Runs:
    """All-reduce: busbw at each message size; the headline is the largest size's (the link's plateau)."""
    cells = loaded.of_kind("allreduce")
    rows = allreduce_rows(cells)
    status = dict(zip(rows.cells.cell_id, rows.cells.status, strict=True))
    metrics: dict[str, Metric] = {}
    found = []
    by_cell = dict(tuple(rows.sizes.groupby("cell_id", sort=False)))
    for c in cells:
        sizes = by_cell.get(c.cell_id, rows.sizes.iloc[:0]).sort_values("bytes")
        values = {}
        for s in sizes.itertuples(index=False):
            name = f"busbw_gbps {bytes_text(int(s.bytes))}"
            metrics.setdefault(name, Metric(name, f"busbw at {bytes_text(int(s.bytes))}", "GB/s", 1, True))
            values[name] = s.busbw_gbps
        headline = f"busbw_gbps {bytes_text(int(sizes.bytes.iloc[-1]))}" if len(sizes) else ""
        found.append(Run("allreduce", configuration(c.cell), status.get(c.cell_id, c.status),
                        figures(values), headline))
    return found, metrics
