"""The report's one plotting style, for every kind: matplotlib on the Agg backend (no display),
the colour cycle, and a figure as PNG bytes."""
from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

DPI = 100


COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


def png(fig, tight: bool = True) -> bytes:
    buffer = io.BytesIO()
    if tight:
        fig.tight_layout()
    fig.savefig(buffer, format="png", dpi=DPI)
    plt.close(fig)
    return buffer.getvalue()


DECADES = 3  # a value axis spanning more decades than this is drawn on a log scale


def spans_decades(values) -> bool:
    """max / min of the positive finite `values` above 10^DECADES: a linear axis would flatten the
    small ones to zero (a diverged run's loss of 1e10 beside losses near 1)."""
    positive = [v for v in values if v > 0 and v != float("inf")]
    return bool(positive) and max(positive) > 10 ** DECADES * min(positive)
