"""What an answer cites: a figure over a configuration's repeats (Measured), the table row it
comes from (Evidence), and their words (`shown`: a figure with its range; `listing`: a list that
stays short). Kind-agnostic; the kinds' answers (collect.<kind>.questions) build them from their
tables."""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

LISTED = 5  # items named in a list; the rest counted


@dataclass(frozen=True)
class Evidence:
    """Where an answer's numbers come from: a table (its key: <key>.csv, and its list in
    `collect --json`) and a row of it (its position, 0-based, in that CSV and that list)."""

    table: str
    row: int
    label: str  # the row for people: "2 GPUs, DDP, batch 128 per GPU"

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "row": self.row, "label": self.label}

    def text(self) -> str:
        return f"{self.table} row {self.row} ({self.label})"


@dataclass(frozen=True)
class Measured:
    """A figure over a configuration's repeats: the median, its min and max, and how many."""

    value: float
    low: float
    high: float
    repeats: int = 1
    runs: int = 0  # the configuration's runs of any status, where more than its ok repeats
    values: tuple[float, ...] = ()  # each ok repeat's value, where the table kept them (<name>_values)
    # the ok repeats' cell ids, where the table kept them (cell_id_values): not numbers (collect.questions.Record)
    cells: tuple[str, ...] = field(default=(), metadata={"cells": True})

    @classmethod
    def of(cls, row: Any, name: str) -> Measured:
        """From a table row's <name>, <name>_min, <name>_max and repeats; a row without the spread
        columns counts as one run (no spread known, and `one_run` says so)."""
        value = float(getattr(row, name))
        low, high = (float(getattr(row, f"{name}_{end}", value)) for end in ("min", "max"))
        ranged = hasattr(row, f"{name}_min") and hasattr(row, f"{name}_max")
        repeats = int(getattr(row, "repeats", 1) or 1) if ranged else 1
        runs = int(getattr(row, "runs", repeats) or repeats)
        kept = getattr(row, f"{name}_values", ())
        values = tuple(float(v) for v in kept) if isinstance(kept, (tuple, list)) else ()
        ids = getattr(row, "cell_id_values", ())
        cells = tuple(map(str, ids)) if isinstance(ids, (tuple, list)) else ()
        return cls(value, value if math.isnan(low) else low, value if math.isnan(high) else high, repeats, runs,
                   values, cells)

    @property
    def spread(self) -> float:
        """max - min over the repeats (0 with one)."""
        return self.high - self.low

    def scaled(self, factor: float) -> Measured:
        """factor x the figure (factor > 0): its spread scales with it."""
        return Measured(self.value * factor, self.low * factor, self.high * factor, self.repeats, self.runs,
                        tuple(v * factor for v in self.values), self.cells)

    def inverse(self, numerator: float) -> Measured:
        """numerator / the figure (a rate from a time): the min and max swap."""
        return Measured(numerator / self.value, numerator / self.high, numerator / self.low, self.repeats, self.runs,
                        tuple(numerator / v for v in self.values), self.cells)


def shown(m: Measured, fmt: Callable[[float], str], unit: str = "") -> str:
    """"4.17 s" with one repeat; "4.17 s (4.16-4.88 s over 3 runs)" with repeats, "(all 3 runs)" where
    they agree to the digits shown; "over 2 of 3 runs" where a run of the configuration has no result;
    "(1 run; 2 more planned, no result)" where only one did ("1 of 3" reads as a median of 3, and
    "single run of 3 planned" as a study that asked for 3)."""
    text = fmt(m.value) + unit
    of = f" of {m.runs}" if m.runs > m.repeats else ""
    if m.repeats < 2:
        missing = m.runs - m.repeats
        return text + (f" (1 run; {missing} more planned, no result)" if missing > 0 else "")
    if fmt(m.low) == fmt(m.high):
        return f"{text} (all {m.repeats}{of} runs)"
    return f"{text} ({fmt(m.low)}-{fmt(m.high)}{unit} over {m.repeats}{of} runs)"


def listing(items: Iterable[str], limit: int = LISTED) -> str:
    """"a, b and c"; past `limit` items, "a, b, ... and 7 more"."""
    items = list(items)
    if len(items) > limit:
        return ", ".join(items[:limit]) + f" and {len(items) - limit} more"
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
