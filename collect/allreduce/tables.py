"""The all-reduce study's tables as pure functions over its rows (collect.allreduce.rows).

A setup's repeats are its cells that differ only in `repeat`; a figure over repeats is the median
over the ok cells, with min and max beside it. Regimes are read off the medians of one setup:
latency-bound sizes take at most LATENCY_FACTOR x its least time (its smallest sizes'); bandwidth-bound sizes
reach at least BANDWIDTH_SHARE of its peak busbw.
"""
from __future__ import annotations

import pandas as pd

from collect.allreduce.rows import AllreduceRows
from collect.repeats import setup_runs
from jobs.core.bandwidth import DDP_BUCKET_BYTES, RESNET18_GRADIENT_BYTES

LATENCY_FACTOR = 2.0
BANDWIDTH_SHARE = 0.8
RANGED = ("seconds", "algbw_gbps", "busbw_gbps")
MARKED = ((RESNET18_GRADIENT_BYTES, "ResNet-18 gradient"), (DDP_BUCKET_BYTES, "DDP bucket"))
SIZE_COLUMNS = (["setup", "bytes", *RANGED, *(f"{v}_{s}" for v in RANGED for s in ("min", "max")), "repeats"]
                + ["floor_seconds", "peak_busbw_gbps", "share_of_peak", "latency_bound", "bandwidth_bound"])
MARKED_COLUMNS = ["setup", "what", *SIZE_COLUMNS[1:]]


def by_size(sizes: pd.DataFrame) -> pd.DataFrame:
    """Per setup and size, over its ok repeats: seconds, algbw_gbps, busbw_gbps = the median,
    with <v>_min and <v>_max; repeats = how many. Example: busbw 10, 12, 11 -> 11 (10-12), 3.
    Setups keep the order they first appear in; sizes ascend within each."""
    if sizes.empty:
        return pd.DataFrame(columns=SIZE_COLUMNS[:SIZE_COLUMNS.index("repeats") + 1])
    groups = sizes.groupby(["setup", "bytes"], sort=False)
    table = pd.concat([groups[list(RANGED)].median(), groups[list(RANGED)].min().add_suffix("_min"),
                       groups[list(RANGED)].max().add_suffix("_max"), groups.size().rename("repeats")],
                      axis=1).reset_index()
    order = {setup: i for i, setup in enumerate(dict.fromkeys(sizes.setup))}
    table = table.assign(_order=table.setup.map(order)).sort_values(["_order", "bytes"], kind="stable")
    return table.drop(columns="_order").reset_index(drop=True)


def regimes(table: pd.DataFrame) -> pd.DataFrame:
    """Per setup s and size b (medians over repeats):
        floor_seconds(s) = min over b of seconds: the smallest size's time, were the sweep
            noiseless (time grows with size); the first size's own can carry start-up noise (2 H200s:
            8 B 24-60 us, every size from 16 B to 64 KiB 21-23 us), which would mark 16 MiB latency-bound;
        peak_busbw_gbps(s) = max over b of busbw;
        share_of_peak = busbw / peak_busbw_gbps(s);
        latency_bound = seconds <= 2 x floor_seconds(s): the time is still the fixed cost;
        bandwidth_bound = busbw >= 0.8 x peak_busbw_gbps(s): the link is nearly saturated.
    Example: times 10, 12, 30 us and busbw 0.1, 5, 9 GB/s -> latency-bound 10 and 12 us (<= 20);
    peak 9, bandwidth-bound the 9 (>= 7.2); share 0.011, 0.56, 1."""
    if table.empty:
        return table.reindex(columns=SIZE_COLUMNS)
    groups = table.groupby("setup", sort=False)
    floor = groups.seconds.transform("min")
    peak = groups.busbw_gbps.transform("max")
    return table.assign(floor_seconds=floor, peak_busbw_gbps=peak, share_of_peak=table.busbw_gbps / peak,
                        latency_bound=table.seconds <= LATENCY_FACTOR * floor,
                        bandwidth_bound=table.busbw_gbps >= BANDWIDTH_SHARE * peak)


def marked(table: pd.DataFrame) -> pd.DataFrame:
    """Per setup, its rows at ResNet-18's gradient (44,695,848 B: what DDP all-reduces per step)
    and at DDP's 25 MiB bucket (26,214,400 B: one all-reduce call of DDP), named in `what`."""
    parts = [table[table.bytes == nbytes].assign(what=what) for nbytes, what in MARKED]
    rows = pd.concat(parts, ignore_index=True) if len(table) else pd.DataFrame(columns=MARKED_COLUMNS)
    order = {setup: i for i, setup in enumerate(dict.fromkeys(table.setup))}
    rows = rows.assign(_order=rows.setup.map(order)).sort_values("_order", kind="stable").drop(columns="_order")
    return rows.reindex(columns=MARKED_COLUMNS).reset_index(drop=True)


def build(rows: AllreduceRows) -> dict[str, pd.DataFrame]:
    """Every all-reduce table by key (the keys of collect.kinds' allreduce entry)."""
    sizes = regimes(by_size(rows.sizes))
    return {"allreduce_cells": rows.cells, "allreduce_runs": setup_runs(rows.cells), "allreduce_sizes": sizes,
            "allreduce_marked": marked(sizes)}
