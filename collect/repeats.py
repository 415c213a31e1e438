"""A configuration's repeats, for every kind: how many ran and how, how far they spread, and the
text that shows it."""
from __future__ import annotations

import math
from typing import Optional

import pandas as pd

from collect.render import seconds

SPREAD_LIMIT = 0.05  # a spread above this is marked: a difference smaller than it is noise


def spread(median: Optional[float], low: Optional[float], high: Optional[float]) -> float:
    """spread = (max - min) / median over a configuration's repeats.
    Example: 4.0, 4.1 and 4.4 s -> (4.4 - 4.0) / 4.1 = 0.0976. NaN when a value is missing or
    the median is zero or negative."""
    m, lo, hi = (math.nan if v is None else float(v) for v in (median, low, high))
    if any(math.isnan(v) for v in (m, lo, hi)) or m <= 0:
        return math.nan
    return (hi - lo) / m

def setup_runs(cells: pd.DataFrame) -> pd.DataFrame:
    """Per setup (a kind's configuration, its cells' "setup" column): runs = its cells, ok = those
    whose status is ok, others = the rest by status ("1 failed, 1 not submitted")."""
    if cells.empty:
        return pd.DataFrame(columns=["setup", "runs", "ok", "others"])
    counts = cells.groupby(["setup", "status"], sort=False).size().unstack(fill_value=0)
    table = pd.DataFrame({"runs": counts.sum(axis=1), "ok": counts.get("ok", 0)})
    table["others"] = [", ".join(f"{n} {s}" for s, n in counts.loc[setup].items() if s != "ok" and n)
                       for setup in counts.index]
    return table.reset_index()


def ranged(row, name: str, fmt=seconds) -> str:
    """The median; with repeats, "median (min-max)", and " *" when the spread is above 5%."""
    value = getattr(row, name)
    if row.repeats < 2:
        return fmt(value)
    low, high = getattr(row, f"{name}_min"), getattr(row, f"{name}_max")
    mark = " *" if spread(value, low, high) > SPREAD_LIMIT else ""
    return f"{fmt(value)} ({fmt(low)}-{fmt(high)}){mark}"
