"""Part B's one way to compare a quantized network with its float network: the seeds' paired
differences (each seed's variant against the float network trained with the same seed) decide the
word by collect.verdict.paired at THRESHOLD_POINTS, and the answer leads with their mean; the two
medians over seeds are said after it, as medians (their difference is not the paired one)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pandas as pd

from collect.evidence import Evidence, Measured, shown
from collect.questions import Record, Tables, Words, says
from collect.render import percent, signed
from collect.ptq.tables import POINTS, THRESHOLD_POINTS
from collect.verdict import Difference, paired

T = f"{THRESHOLD_POINTS:g}"
RULE_SENTENCE = (f" The words follow a {T}-point threshold on the seeds' paired differences: lower or higher when their "
                 f"mean is past {T} point and their 95% interval excludes 0, not distinguishable when that interval "
                 f"lies inside -{T}..+{T}, else not clearly different. The interval, in brackets beside each paired "
                 "difference in the tables, is the paired t interval of their mean (n - 1 degrees of freedom: 2 for "
                 "3 seeds).")


@dataclass(frozen=True)
class Accuracy(Record):
    setup: str
    variant: str
    base: str
    accuracy: Measured
    base_accuracy: Measured
    verdict: Difference  # the seeds' paired deltas (variant - float, in points) against no change, THRESHOLD_POINTS
    delta_range: tuple[float, float]  # the lowest and highest of those same paired deltas, in points


def interval(low: float, high: float, scale: float = 1.0) -> str:
    """A paired difference's 95% interval, "[-2.06, +30.90]" in points (`scale`: 100 for 0..1 units) (TA5 7)."""
    return f"[{signed(scale * low, 2)}, {signed(scale * high, 2)}]"


def pct(m: Measured) -> str:
    return shown(m, lambda v: percent(v, 2))


def accuracy(tables: Tables, variant: str, base: str) -> Optional[Accuracy]:
    """The notebook table's `variant` against `base` (its float network), of the first setup."""
    nb = tables["ptq_notebook"].reset_index(drop=True)
    if not len(nb):
        return None
    setup = nb.setup.iloc[0]
    rows = {r.name: r for r in nb[nb.setup == setup].itertuples()}
    v, b = rows.get(variant), rows.get(base)
    if v is None or b is None or pd.isna(v.accuracy) or pd.isna(b.accuracy):
        return None
    a, f = Measured.of(v, "accuracy"), Measured.of(b, "accuracy")
    deltas = [POINTS * d for d in ((v.delta_values or (v.delta,)) if not pd.isna(v.delta) else (v.accuracy - b.accuracy,))]
    return Accuracy((Evidence("ptq_notebook", int(v.Index), variant), Evidence("ptq_notebook", int(b.Index), base)), (),
                    str(setup), variant, base, a, f, paired(deltas, THRESHOLD_POINTS), (min(deltas), max(deltas)))


def compared(a: Accuracy, why: str = "") -> str:
    """The comparison led by its one number, the paired delta (the table's "accuracy - own float"), with the
    lowest and highest of those deltas and the word the paired verdict gives at THRESHOLD_POINTS (RULE_SENTENCE
    defines it, once per answer); `why` after the word; then the two medians over seeds, said as medians. One
    seed: the delta alone, no word (no spread is measured)."""
    d = a.verdict.delta
    medians = (f"The medians over the seeds, not paired: {pct(a.accuracy)} quantized against {pct(a.base_accuracy)} "
               "in float.")
    if a.verdict.n_b < 2:
        return f"{d:+.2f} points against float (one seed: no spread, so no verdict){why}. {medians}"
    low, high = a.delta_range
    seeds = (f"(the mean of the seeds' paired differences, {low:+.2f} to {high:+.2f} over the {a.verdict.n_b} seeds, "
             f"95% interval {interval(a.verdict.low, a.verdict.high, 1)}, each seed against its own float network)")
    word = says(a.verdict, Words("lower", "higher", "not distinguishable from", "not clearly different from"))
    if word in ("lower", "higher"):
        return f"{abs(d):.2f} points {word} than in float {seeds}, beyond the {T}-point threshold{why}. {medians}"
    return f"{d:+.2f} points against float {seeds}: {word} float at the {T}-point threshold{why}. {medians}"
