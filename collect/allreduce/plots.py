"""The all-reduce report's plot as PNG bytes, in collect.train.plots' style: busbw against message size,
one line per setup (median over repeats, min-max as error bars), log-2 size axis labelled in
bytes, the gradient and bucket sizes marked."""
from __future__ import annotations

import math
from typing import Optional

import pandas as pd

from collect.allreduce.tables import MARKED
from collect.figures import COLORS, png, plt  # the report's one style
from jobs.core.bandwidth import bytes_text

MAX_TICKS = 12


def size_ticks(sizes: pd.Series) -> list[int]:
    """Powers of 2 over the sizes' span, every 2nd, 4th ... so at most MAX_TICKS: 8 B .. 1 GiB -> 8 B, 32 B, ..."""
    low, high = math.floor(math.log2(sizes.min())), math.ceil(math.log2(sizes.max()))
    step = max(1, math.ceil((high - low + 1) / MAX_TICKS))
    return [2**k for k in range(low, high + 1, step)]


def busbw_vs_size(sizes: pd.DataFrame) -> Optional[bytes]:
    """busbw (GB/s) against bytes per setup; None when no setup has a result."""
    if sizes.empty:
        return None
    fig, ax = plt.subplots(figsize=(7.2, 4.4))
    for i, (setup, line) in enumerate(sizes.groupby("setup", sort=False)):
        low, high = line.busbw_gbps - line.busbw_gbps_min, line.busbw_gbps_max - line.busbw_gbps
        ax.errorbar(line.bytes, line.busbw_gbps, yerr=[low, high], fmt="o-", capsize=2, markersize=3,
                    color=COLORS[i % len(COLORS)], label=setup)
    for (nbytes, what), style in zip(MARKED, ("--", ":"), strict=True):
        ax.axvline(nbytes, color="gray", linestyle=style, linewidth=1, label=f"{what}: {bytes_text(nbytes)}")
    ax.set_xscale("log", base=2)
    ticks = size_ticks(sizes.bytes)
    ax.set_xticks(ticks, [bytes_text(t) for t in ticks], rotation=45, ha="right")
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set(xlabel="message size (fp32 buffer, log 2)", ylabel="busbw (GB/s)",
           title="All-reduce bus bandwidth vs message size")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return png(fig)


def build(built: dict[str, pd.DataFrame]) -> dict[str, Optional[bytes]]:
    """Each plot by the key of the grid it follows in the report."""
    return {"allreduce_marked": busbw_vs_size(built["allreduce_sizes"])}
