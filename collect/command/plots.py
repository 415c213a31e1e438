"""The command report's plot as PNG bytes, in collect.train.plots' style: the declared time metric
against the process count, one line per scaling series (median over repeats, min-max as error bars)."""
from __future__ import annotations

from typing import Optional

import pandas as pd

from collect.figures import COLORS, png, plt  # the report's one style


def time_vs_processes(scaling: pd.DataFrame) -> Optional[bytes]:
    """The time metric against N per series; None when no series has two process counts."""
    if scaling.empty:
        return None
    fig, ax = plt.subplots(figsize=(7.2, 4.4))
    for i, ((regime, series, metric), line) in enumerate(scaling.groupby(["regime", "series", "metric"], sort=False)):
        ax.errorbar(line.processes, line.time, yerr=[line.time - line.time_min, line.time_max - line.time],
                    fmt="o-", capsize=2, markersize=4, color=COLORS[i % len(COLORS)],
                    label=f"{metric}, {regime}: {series}"[:60])
    ax.set_xscale("log", base=2)
    counts = sorted(scaling.processes.unique())
    ax.set_xticks(counts, [str(n) for n in counts])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set(xlabel="processes (GPUs, or CPU processes)", ylabel="time metric (median)",
           title="Your script: time vs processes")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return png(fig)


def build(built: dict[str, pd.DataFrame]) -> dict[str, Optional[bytes]]:
    """Each plot by the key of the grid it follows in the report."""
    return {"command_scaling": time_vs_processes(built["command_scaling"])}
