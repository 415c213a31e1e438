"""What Part B's answers say of the sweep beyond the notebook, worded from its records (collect.ptq.checks):
whether clipping the activations' tail beats max |x| (B.Q3), and why the per-channel percentile rows of the
weights sweep are its max rows (B.Q2)."""
from __future__ import annotations

from typing import Optional

from collect.evidence import listing
from collect.ptq.checks import Clipping, PercentileIsMax
from collect.ptq.comparison import interval, pct
from collect.ptq.grids import LOOP_SEES, NOTEBOOK_ASKS


def clipping_text(c: Optional[Clipping]) -> str:
    """Whether clipping the tail would do better, from the paired table beneath (each method against max |x| of
    the same seed, collect.ptq.tables.clipping_table), its threshold named with its value; the figure it quotes
    is that table's paired mean, the two medians over seeds after it, said as medians."""
    if c is None:
        return " This study swept no other range at the notebook's calibration: whether clipping the tail helps is unmeasured."
    seen = f"; {LOOP_SEES}" if c.calibration == NOTEBOOK_ASKS else ""
    t = f"{c.threshold:g}"
    swept = (f"the paired table beneath (each range method against max |x| at the same bits and seed, {c.calibration:,} "
             f"calibration images{seen}; {t}-point threshold: a method is above or below max |x| when the mean of its "
             f"seeds' paired differences is beyond {t} point and their 95% interval excludes 0)")
    at = (f"{listing(c.beyond_at_notebook, 6)} differ from max |x| at {c.notebook_bits} bits" if c.beyond_at_notebook else
          f"at {c.notebook_bits} bits no range method is measurably above or below max |x|")
    if c.verdict is None or c.accuracy is None or c.max_accuracy is None:
        return f" Clipping the tail helps at no bits measured in {swept}: {at}."
    low, high = c.delta_range
    where = (f"clipping the tail helps at {c.helps_bits} bits" if c.helps_bits == c.notebook_bits else
             f"clipping the tail first helps at {c.helps_bits} bits")
    return (f" In {swept}, {at}; {where}, where {c.method} is {c.verdict.delta:.2f} points higher than max |x| (the "
            f"mean of the seeds' paired differences, {low:+.2f} to {high:+.2f} over the {c.verdict.n_b} seeds, 95% "
            f"interval {interval(c.verdict.low, c.verdict.high)}). The "
            f"medians over the seeds, not paired (the activation sweep of B.Q4): {pct(c.accuracy)} with {c.method} "
            f"against {pct(c.max_accuracy)} with max |x|.")


def percentile_text(p: Optional[PercentileIsMax]) -> str:
    """Why two rows of the weights sweep are the same, from the counts that make them so."""
    if p is None:
        return ""
    layer, n = p.largest
    rule = (f"the nearest-rank {p.percentile:g}th percentile of n values, the ceil({p.percentile / 100:g} n)-th smallest, "
            f"is the largest while n < {p.limit:,}" if p.limit else f"the {p.percentile:g}th percentile is the largest")
    return (f" In the weights sweep beneath, \"channel, percentile {p.percentile:g}\" gives the accuracies of \"channel, "
            f"max\" at every bits and seed: {rule}, and no output channel here holds more than {n:,} weights ({layer}'s).")
