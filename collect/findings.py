"""Findings: each question's answer as one sentence computed from the tables, with the numbers it
rests on and the rows they come from. Kind-agnostic: each kind builds its own from its tables
(collect.<kind>.findings) and registers them in its KindTables.

Honest by construction: every comparative word is chosen by `compare`, which calls two figures
"not distinguishable" when their difference is within the spread (max - min over repeats) of
either side; a figure with repeats is shown with its range (`shown`); what is missing is said
(`without_results`), never concluded over.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

LISTED = 5  # rows named in a list of what is missing; the rest counted
DESCRIBED = 12  # runs, setups or sweeps a question describes one by one; beyond, the rest are counted


@dataclass(frozen=True)
class Evidence:
    """Where a finding's numbers come from: a table (its key: <key>.csv, and its list in
    `collect --json`) and a row of it (its position, 0-based, in that CSV and that list)."""

    table: str
    row: int
    label: str  # the row for people: "2 GPUs, DDP, batch 128 per GPU"

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "row": self.row, "label": self.label}

    def text(self) -> str:
        return f"{self.table} row {self.row} ({self.label})"


@dataclass(frozen=True)
class Finding:
    """One question's answer (or part of it): one sentence, the numbers it rests on (name with its
    unit -> value), and the table rows they come from."""

    question: str  # "A.Q1", "B.Q2", "lab", "allreduce", "caveat"...
    text: str
    numbers: Mapping[str, float] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: a number that is not there (NaN) is null."""
        numbers = {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in self.numbers.items()}
        return {"question": self.question, "text": self.text, "numbers": numbers,
                "evidence": [e.to_dict() for e in self.evidence]}

    def evidence_text(self) -> str:
        return "; ".join(e.text() for e in self.evidence)


def no_findings(built: Mapping[str, Any]) -> tuple[Finding, ...]:
    """The findings of a kind that has none."""
    return ()


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


def compare(a: Measured, b: Measured) -> int:
    """-1 when a is below b, +1 above, 0 when not distinguishable: |a - b| within the spread
    (max - min) of either side. Example: 10 (9-12) vs 11 (10.5-11.5): |1| <= 3 -> 0;
    10 (9.9-10.1) vs 11 (10.9-11.1): 1 > 0.2 -> -1. With one run each there is no spread: any
    difference counts (`one_run` says so in the sentence)."""
    difference = a.value - b.value
    if abs(difference) <= max(a.spread, b.spread):
        return 0
    return -1 if difference < 0 else 1


def word(order: int, below: str, above: str, same: str = "not distinguishable from") -> str:
    """The comparative word `compare` chose: below (-1), same (0), above (+1)."""
    return {-1: below, 0: same, 1: above}[order]


def one_run(*figures: Measured) -> str:
    """What a comparison cannot judge for want of repeats: ", one run each: no spread measured"
    when no figure has repeats, ", some from one run: no spread measured there" when some have
    none; "" when every figure has repeats."""
    single = sum(f.repeats < 2 for f in figures)
    if not single:
        return ""
    if single == len(figures):
        return ", one run: no spread measured" if single == 1 else ", one run each: no spread measured"
    return ", some from one run: no spread measured there"


def shown(m: Measured, fmt: Callable[[float], str], unit: str = "") -> str:
    """"4.17 s" with one repeat; "4.17 s (4.16-4.88 s over 3 runs)" with repeats, "(all 3 runs)" where
    they agree to the digits shown; "over 2 of 3 runs" where a run of the configuration has no result."""
    text = fmt(m.value) + unit
    of = f" of {m.runs}" if m.runs > m.repeats else ""
    if m.repeats < 2:
        return text + (f" (1{of} runs)" if of else "")
    if fmt(m.low) == fmt(m.high):
        return f"{text} (all {m.repeats}{of} runs)"
    return f"{text} ({fmt(m.low)}-{fmt(m.high)}{unit} over {m.repeats}{of} runs)"


def more(question: str, items: Sequence[Any], what: str, evidence: Callable[[Any], Evidence]) -> list[Finding]:
    """What a question leaves undescribed past DESCRIBED items (a study of thousands of cells):
    one finding that counts them and points at the first of them (`evidence` of it) in its table."""
    if len(items) <= DESCRIBED:
        return []
    first = evidence(items[DESCRIBED])
    return [Finding(question, f"{len(items) - DESCRIBED:,} more {what} are not described one by one: they are in "
                              f"table {first.table} (from row {first.row}).", {"undescribed": float(len(items) - DESCRIBED)},
                    (first,))]


def listing(items: Iterable[str], limit: int = LISTED) -> str:
    """"a, b and c"; past `limit` items, "a, b, ... and 7 more"."""
    items = list(items)
    if len(items) > limit:
        return ", ".join(items[:limit]) + f" and {len(items) - limit} more"
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def without_results(named: Iterable[tuple[str, str]]) -> str:
    """What has no figure, and why: "batch 8192 (pending) and 4 GPUs, DDP (not submitted)"."""
    return listing(f"{name} ({why})" for name, why in named)


def ratio_text(x: float) -> str:
    """A ratio with two decimals and an x: "1.39x"."""
    return "-" if math.isnan(x) else f"{x:.2f}x"
