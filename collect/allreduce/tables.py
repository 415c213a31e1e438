"""The all-reduce study's tables as pure functions over its rows (collect.allreduce.rows).

A setup's repeats are its cells that differ only in `repeat`; a figure over repeats is the median
over the ok cells, with min and max beside it. Regimes are read off the medians of one setup, by
how close a size's busbw is to the setup's peak (share_of_peak): latency-bound below LATENCY_SHARE,
bandwidth-bound from BANDWIDTH_SHARE, "between" in between. Under the usual model of one call,
time = a + n / B (a fixed cost a, then n bytes at the link's rate B), busbw / peak is about the
share of the time spent moving bytes: below half, most of the time is the fixed cost.
"""
from __future__ import annotations

import pandas as pd

from collect.allreduce.rows import AllreduceRows
from collect.repeats import setup_runs
from jobs.core.bandwidth import DDP_BUCKET_BYTES, RESNET18_GRADIENT_BYTES

LATENCY_SHARE = 0.5
BANDWIDTH_SHARE = 0.8
RANGED = ("seconds", "algbw_gbps", "busbw_gbps")
MARKED = ((RESNET18_GRADIENT_BYTES, "ResNet-18 gradient"), (DDP_BUCKET_BYTES, "DDP bucket"))
SIZE_COLUMNS = (["setup", "bytes", *RANGED, *(f"{v}_{s}" for v in RANGED for s in ("min", "max")), "repeats",
                 "busbw_gbps_values"]
                + ["peak_busbw_gbps", "share_of_peak", "latency_bound", "bandwidth_bound", "regime"])
LATENCY, BETWEEN, BANDWIDTH = "latency-bound", "between", "bandwidth-bound"
MARKED_COLUMNS = ["setup", "what", *SIZE_COLUMNS[1:]]


def by_size(sizes: pd.DataFrame) -> pd.DataFrame:
    """Per setup and size, over its ok repeats: seconds, algbw_gbps, busbw_gbps = the median,
    with <v>_min and <v>_max, and busbw_gbps_values (each repeat's, for collect.verdict; not in the
    CSV: collect.report.KEPT_OUT); repeats = how many. Example: busbw 10, 12, 11 -> 11 (10-12), 3.
    Setups keep the order they first appear in; sizes ascend within each."""
    if sizes.empty:
        return pd.DataFrame(columns=SIZE_COLUMNS[:SIZE_COLUMNS.index("busbw_gbps_values") + 1])
    groups = sizes.groupby(["setup", "bytes"], sort=False)
    table = pd.concat([groups[list(RANGED)].median(), groups[list(RANGED)].min().add_suffix("_min"),
                       groups[list(RANGED)].max().add_suffix("_max"), groups.size().rename("repeats"),
                       groups.busbw_gbps.agg(tuple).rename("busbw_gbps_values")],
                      axis=1).reset_index()
    order = {setup: i for i, setup in enumerate(dict.fromkeys(sizes.setup))}
    table = table.assign(_order=table.setup.map(order)).sort_values(["_order", "bytes"], kind="stable")
    return table.drop(columns="_order").reset_index(drop=True)


def regimes(table: pd.DataFrame) -> pd.DataFrame:
    """Per setup s and size b (medians over repeats):
        peak_busbw_gbps(s) = max over b of busbw;
        share_of_peak = busbw / peak_busbw_gbps(s);
        latency_bound = share_of_peak < 0.5: most of the time is the fixed cost;
        bandwidth_bound = share_of_peak >= 0.8: the link is nearly saturated;
        regime = "latency-bound", "bandwidth-bound" or "between" (0.5 <= share < 0.8).
    Example: busbw 0.1, 5, 9 GB/s -> peak 9, share 0.011, 0.56, 1: latency-bound the 0.1, between
    the 5 (56% of the peak is not latency-bound), bandwidth-bound the 9 (>= 7.2)."""
    if table.empty:
        return table.reindex(columns=SIZE_COLUMNS)
    groups = table.groupby("setup", sort=False)
    peak = groups.busbw_gbps.transform("max")
    share = table.busbw_gbps / peak
    latency, bandwidth = share < LATENCY_SHARE, share >= BANDWIDTH_SHARE
    regime = latency.map({True: LATENCY, False: BETWEEN}).where(~bandwidth, BANDWIDTH)
    return table.assign(peak_busbw_gbps=peak, share_of_peak=share, latency_bound=latency, bandwidth_bound=bandwidth,
                        regime=regime)


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
