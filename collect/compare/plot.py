"""The comparison's plot as PNG bytes: each configuration's headline ratio B / A with its interval,
on a log axis, the threshold band shaded (collect.figures' style)."""
from __future__ import annotations

import math
from typing import Optional

from collect.compare.table import Comparison
from matplotlib.ticker import FormatStrFormatter

from collect.figures import COLORS, png, plt

MOST = 40  # configurations on the plot: the largest changes


def ratio_plot(c: Comparison) -> Optional[bytes]:
    """One line per headline row with a verdict: the ratio as a dot, its interval as a bar (none
    with one run); None when no configuration was compared."""
    rows = [r for r in c.headline_rows if r.verdict is not None]
    rows = sorted(rows, key=lambda r: abs(math.log(r.verdict.ratio)) if r.verdict else 0.0, reverse=True)[:MOST]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7.2, 1.6 + 0.3 * len(rows)))
    ax.axvspan(1 / (1 + c.threshold), 1 + c.threshold, color="0.9", label=f"within ±{100 * c.threshold:g}%")
    ax.axvline(1.0, color="0.5", linewidth=0.8)
    for y, r in enumerate(reversed(rows)):
        v = r.verdict
        assert v is not None
        color = COLORS[0] if v.outcome == "beyond" else COLORS[7 % len(COLORS)]
        if not v.one_run:
            ax.plot([v.low, v.high], [y, y], color=color, linewidth=2)
        ax.plot([v.ratio], [y], "o", color=color)
    ax.set_yticks(range(len(rows)), [f"{r.config} ({r.title})" for r in reversed(rows)], fontsize=7)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))  # 2, not 2 x 10^0
    ax.xaxis.set_minor_formatter(FormatStrFormatter("%g"))
    ax.tick_params(axis="x", which="minor", labelsize=7)
    ax.set_xlabel(f"B / A (ratio of medians, {100 * c.confidence:g}% interval)")
    ax.legend(loc="best", fontsize=7)
    return png(fig)
