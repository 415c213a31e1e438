"""The all-reduce study's findings, per setup: the peak busbw and whether the sweep reached it,
the busbw at the gradient's size (what DDP all-reduces per step), the latency- and bandwidth-bound
sizes; the setups without a result; a caveat for CPU ranks."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from collect.allreduce.grids import gbps, share
from collect.allreduce.tables import BANDWIDTH_SHARE, LATENCY_FACTOR
from collect.findings import Evidence, Finding, Measured, compare, one_run, shown
from jobs.allreduce.cell import GRADIENT_BYTES, bytes_text

QUESTION = "allreduce"


def build(built: Mapping[str, pd.DataFrame]) -> tuple[Finding, ...]:
    sizes, cells = built["allreduce_sizes"].reset_index(drop=True), built["allreduce_cells"].reset_index(drop=True)
    found = [setup_finding(setup, group, cells) for setup, group in sizes.groupby("setup", sort=False)]
    return tuple(found + missing(cells, set(sizes.setup)))


def _busbw(row: Any) -> Measured:
    return Measured.of(row, "busbw_gbps")


def setup_finding(setup: str, group: pd.DataFrame, cells: pd.DataFrame) -> Finding:
    rows = sorted(((int(i), r) for i, r in zip(group.index, group.itertuples(index=False), strict=True)),
                  key=lambda x: x[1].bytes)
    peak_i, peak = max(rows, key=lambda x: x[1].busbw_gbps)
    bw = lambda m: shown(m, gbps, " GB/s")  # noqa: E731
    parts = [f"busbw peaks at {bw(_busbw(peak))} at {bytes_text(int(peak.bytes))}"]
    cited = [Evidence("allreduce_sizes", peak_i, f"{setup}, {bytes_text(int(peak.bytes))}")]
    if peak.bytes == rows[-1][1].bytes and len(rows) > 1 and compare(_busbw(peak), _busbw(rows[-2][1])) > 0:
        parts.append("still rising at the largest size swept: the link's peak may lie beyond the sweep")
    gradient = next(((i, r) for i, r in rows if r.bytes == GRADIENT_BYTES), None)
    numbers = {"peak_busbw_gbps": float(peak.busbw_gbps), "peak_bytes": float(peak.bytes)}
    if gradient:
        i, r = gradient
        parts.append(f"at ResNet-18's gradient ({bytes_text(GRADIENT_BYTES)}, what DDP all-reduces per step) "
                     f"{bw(_busbw(r))}, {share(r.share_of_peak)} of the peak")
        cited.append(Evidence("allreduce_sizes", i, f"{setup}, {bytes_text(GRADIENT_BYTES)}"))
        numbers["gradient_busbw_gbps"] = float(r.busbw_gbps)
    parts += _regimes(rows)
    mine = cells[cells.setup == setup]
    others = mine[mine.status != "ok"]
    if len(others):
        parts.append(f"from {len(mine) - len(others)} of its {len(mine)} cells ({_counts(others)})")
    caveat = _cpu(mine)
    text = f"{setup}{caveat}: " + "; ".join(parts) + one_run(_busbw(peak)) + "."
    return Finding(QUESTION, text, numbers, tuple(cited))


def _regimes(rows: list[tuple[int, Any]]) -> list[str]:
    """Up to which size the time is still the fixed cost, from which the link is nearly saturated."""
    parts = []
    latency = 0
    while latency < len(rows) and rows[latency][1].latency_bound:
        latency += 1
    if latency:
        parts.append(f"latency-bound (time within {LATENCY_FACTOR:g}x the least) up to "
                     f"{bytes_text(int(rows[latency - 1][1].bytes))}")
    saturated = [r for _, r in rows if r.bandwidth_bound]
    if saturated:
        parts.append(f"bandwidth-bound ({BANDWIDTH_SHARE:.0%} of the peak or more) from "
                     f"{bytes_text(int(saturated[0].bytes))}")
    return parts


def _cpu(cells: pd.DataFrame) -> str:
    """" (CPU ranks over gloo: ...)" where the setup's ranks ran on CPUs."""
    if not (cells.device == "cpu").any():
        return ""
    return " (CPU ranks: the copies go through this machine's memory, not a GPU link)"


def _counts(cells: pd.DataFrame) -> str:
    """"1 failed, 1 not submitted": the cells by status."""
    return ", ".join(f"{n} {status}" for status, n in cells.status.value_counts(sort=False).items())


def missing(cells: pd.DataFrame, with_sizes: set[str]) -> list[Finding]:
    """The setups none of whose cells has a readable ok result, and why."""
    found = []
    for setup, group in cells.groupby("setup", sort=False):
        if setup in with_sizes:
            continue
        found.append(Finding(QUESTION, f"{setup}: no result ({_counts(group)}).",
                             {"cells": float(len(group))},
                             tuple(Evidence("allreduce_cells", int(i), f"{setup}, cell {r.cell_id}")
                                   for i, r in zip(group.index, group.itertuples(index=False), strict=True))[:5]))
    return found
