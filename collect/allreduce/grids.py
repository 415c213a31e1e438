"""The all-reduce tables (collect.allreduce.tables) laid out for people as Grids: the cells, the
busbw at the two sizes training all-reduces (ResNet-18's gradient, DDP's bucket) per setup, and
per setup the whole sweep by message size with its regimes marked."""
from __future__ import annotations

import dataclasses
import math
from typing import Any

import pandas as pd

from collect.allreduce.rows import UNREADABLE
from collect.allreduce.tables import BANDWIDTH_SHARE, BETWEEN, LATENCY_SHARE, MARKED
from collect.render import Grid, status_text
from collect.repeats import ranged
from collect.view import DEFAULT_VIEW, View, shown
from jobs.allreduce.cell import bytes_text

FORMULAS = ["algbw = bytes / time (GB/s = 1e9 bytes/s); busbw = algbw x 2(N-1)/N, N ranks (nccl-tests: the "
            "bandwidth of the busiest link in a ring, comparable across N)",
            "time = one all-reduce (fp32, in place): warm-up calls, then iters calls back to back and one sync, "
            "divided by iters; the mean over ranks"]
SPREAD = ("median over repeats (the setup's ok cells), min-max beside it; * marks a spread (max - min) / median "
          "above 5%")
REGIMES = (f"latency-bound: busbw below {LATENCY_SHARE:.0%} of the setup's peak busbw (most of the time is the fixed "
           f"cost); bandwidth-bound: at least {BANDWIDTH_SHARE:.0%} of it (medians)")
NAMES = dict((nbytes, what) for nbytes, what in MARKED)


def gbps(value: Any) -> str:
    """GB/s, three significant digits at most ("0.00123", "1.23", "123"); "-" when missing."""
    if value is None or pd.isna(value):
        return "-"
    return f"{value:.3g}" if abs(value) < 100 else f"{value:,.0f}"


def micros(seconds: Any) -> str:
    """Seconds as microseconds: "12.3", "1,234"; "-" when missing."""
    if seconds is None or pd.isna(seconds):
        return "-"
    us = seconds * 1e6
    return f"{us:.3g}" if us < 100 else f"{us:,.0f}"


def share(value: float) -> str:
    """A share of the peak, rounded down: 79.8% reads 79%, below the 80% that marks bandwidth-bound."""
    return "-" if pd.isna(value) else f"{math.floor(100 * value)}%"


def regime(row) -> str:
    return "" if row.regime == BETWEEN else str(row.regime)


def size_name(nbytes: int) -> str:
    return bytes_text(int(nbytes)) + (f" ({NAMES[int(nbytes)]})" if int(nbytes) in NAMES else "")


def runs_text(runs: pd.DataFrame) -> str:
    """"3 of 3 cells ok [2 GPUs, nccl]; 2 of 3 cells ok (1 failed) [4 GPUs, nccl]"."""
    texts = [f"{int(r.ok)} of {int(r.runs)} cells ok" + (f" ({r.others})" if r.others else "") + f" [{r.setup}]"
             for r in runs.itertuples(index=False)]
    return "; ".join(texts) or "no cells"


def where_text(cells: pd.DataFrame) -> str:
    models = sorted({str(m) for m in cells.gpu_model.dropna()})
    return ", ".join(models) or "unknown (no result yet)"


def cells_grid(cells: pd.DataFrame) -> Grid:
    header = ["cell", "setup", "repeat", "status", "ranks", "device", "hosts"]
    rows = []
    for r in cells.itertuples(index=False):
        status = status_text(r.status) + (f": {r.error}" if isinstance(r.error, str) and r.error else "")
        rows.append([r.cell_id, r.setup, str(r.repeat), status, str(r.world_size), _text(r.gpu_model, r.device),
                     _text(r.hosts, "")])
    unreadable = int((cells.status == UNREADABLE).sum())
    caption = f"Cells: {len(cells)}." + (f" {unreadable} unreadable: their results are in no table." if unreadable else "")
    return Grid("allreduce_cells", "All-reduce runs: one sweep of message sizes per cell", caption, header, rows,
                ["unreadable: an ok result whose allreduce findings fail their checks (the message says which field)"],
                "" if rows else "No all-reduce cells.", text_columns=(0, 1, 3, 5, 6))


def _text(value: Any, otherwise: str) -> str:
    """The value, or `otherwise` where the cell has none (a cell pending or not submitted: NaN)."""
    return value if isinstance(value, str) and value else otherwise


def marked_grid(marked: pd.DataFrame, sizes: pd.DataFrame, runs: pd.DataFrame, cells: pd.DataFrame) -> Grid:
    header = ["setup", "size", "time (us)", "busbw (GB/s)", "share of peak", "peak busbw (GB/s) at", "repeats"]
    peaks = _peaks(sizes)
    rows = [[r.setup, size_name(r.bytes), ranged(r, "seconds", micros), ranged(r, "busbw_gbps", gbps),
             share(r.share_of_peak), peaks.get(r.setup, "-"), str(r.repeats)] for r in marked.itertuples(index=False)]
    caption = (f"Units: microseconds per all-reduce, GB/s. Where: {where_text(cells)}. Runs: {runs_text(runs)}. "
               "The two sizes DDP training of ResNet-18 all-reduces: the whole gradient (one flat buffer) and one "
               "25 MiB bucket.")
    return Grid("allreduce_marked", "All-reduce bandwidth at the sizes training uses, per setup", caption, header,
                rows, [SPREAD, *FORMULAS, "share of peak = busbw / the setup's largest busbw over its sizes"],
                "" if rows else f"No all-reduce result yet: {runs_text(runs)}.", text_columns=(0, 1, 5))


def _peaks(sizes: pd.DataFrame) -> dict[str, str]:
    """Per setup, "9.1 at 256 MiB": its largest median busbw and the size it was reached at."""
    best = sizes.loc[sizes.groupby("setup", sort=False).busbw_gbps.idxmax()] if len(sizes) else sizes
    return {r.setup: f"{gbps(r.busbw_gbps)} at {bytes_text(int(r.bytes))}" for r in best.itertuples(index=False)}


def sweep_grid(setup: str, sizes: pd.DataFrame, index: int) -> Grid:
    header = ["size", "bytes", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "share of peak", "regime"]
    rows = [[size_name(r.bytes), f"{int(r.bytes):,}", ranged(r, "seconds", micros), gbps(r.algbw_gbps),
             ranged(r, "busbw_gbps", gbps), share(r.share_of_peak), regime(r)] for r in sizes.itertuples(index=False)]
    repeats = int(sizes.repeats.max()) if len(sizes) else 0
    caption = f"Units: microseconds per all-reduce, GB/s. {setup}: {repeats} repeat(s); algbw: their median."
    return Grid(f"allreduce_sweep_{index}", f"All-reduce vs message size: {setup}", caption, header, rows,
                [SPREAD, *FORMULAS, REGIMES], "" if rows else "No ok result.", text_columns=(0, 6))


def build(built: dict[str, pd.DataFrame], view: View = DEFAULT_VIEW) -> tuple[Grid, ...]:
    """Every all-reduce grid, in the report's order: the cells, the summary, then each setup's
    sweep; the cells and the summary of at most view.rows lines (collect.view.shown), the sweeps
    of the first view.rows setups."""
    sizes = built["allreduce_sizes"]
    setups = list(sizes.groupby("setup", sort=False))
    sweeps = [sweep_grid(setup, part, i) for i, (setup, part) in enumerate(setups[:view.rows])]
    if len(setups) > view.rows:  # a grid per setup: the first ones, the rest in the CSV
        sweeps[-1] = dataclasses.replace(sweeps[-1], more=f"The sweeps of {len(setups) - view.rows:,} more setups "
                                                          "are in allreduce_sizes.csv.")
    cells = shown(built["allreduce_cells"], "allreduce_cells.csv", view.rows, "cells")
    marked = shown(built["allreduce_marked"], "allreduce_marked.csv", view.rows, "setups", ["setup"])
    return (cells.noted(cells_grid(cells.table)),
            marked.noted(marked_grid(marked.table, sizes, built["allreduce_runs"], built["allreduce_cells"])),
            *sweeps)
