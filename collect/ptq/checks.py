"""What Part B's quantization answers rest on beyond the notebook's accuracies, as records for
their details: the integer-only run against the float simulation (collect.ptq.tables.integer_table)
and, from the sweep, how low each choice's bits go before the accuracy drops beyond 1 point (the
paired difference verdict over the seeds' deltas, collect.verdict.paired)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import pandas as pd

from collect.evidence import Evidence, Measured
from collect.ptq.grids import named
from collect.ptq.tables import method_text
from collect.verdict import BEYOND, Difference, paired

POINTS = 100.0  # an accuracy difference in 0..1 units, in percentage points


@dataclass(frozen=True)
class IntegerRun:
    """One variant run integer-only (images set) or only its layers' inputs checked (images None)."""

    name: str
    seeds: int
    images: Optional[int]
    prediction_mismatches: Optional[int]  # images whose top-1 class differs from the float simulation
    logit_mismatches: Optional[int]  # images with any output integer different
    checked_values: int  # values entering a quantized layer
    bad_values: int  # of them not an integer in range


def integer_runs(table: pd.DataFrame) -> tuple[tuple[IntegerRun, ...], tuple[Evidence, ...]]:
    runs, cited = [], []
    for i, r in enumerate(table.reset_index(drop=True).itertuples(index=False)):
        ran = not pd.isna(r.images)
        runs.append(IntegerRun(named(str(r.name), str(r.setup)), int(r.repeats), int(r.images) if ran else None,
                               int(r.prediction_mismatches) if ran else None, int(r.logit_mismatches) if ran else None,
                               _count(r.checked_values), _count(r.non_integer) + _count(r.out_of_range)))
        cited.append(Evidence("ptq_integer", i, named(str(r.name), str(r.setup))))
    return tuple(runs), tuple(cited)


def _count(value: Any) -> int:
    return 0 if pd.isna(value) else int(value)


@dataclass(frozen=True)
class AtBits:
    bits: int
    delta_points: Measured  # accuracy against the float network, in points, over the seeds
    verdict: Difference  # the seeds' paired deltas (points) against no change, threshold 1 point


@dataclass(frozen=True)
class SweepChoice:
    """One choice of the sweep (a granularity and range method, or a calibration), bits descending."""

    choice: str
    at: tuple[AtBits, ...]
    lowest_kept: Optional[int]  # the lowest bits down to which no drop beyond 1 point is measured
    first_dropped: Optional[int]  # the highest bits whose drop beyond 1 point is measured (None: none)


def sweep_choices(table: pd.DataFrame, part: str) -> tuple[tuple[SweepChoice, ...], tuple[Evidence, ...]]:
    """The sweep's choices of one part ("weights" or "activations"), each with its verdicts by bits:
    lowest_kept = the lowest bits before the first drop beyond 1 point (the paired verdict beyond,
    below); first_dropped = that first drop's bits."""
    table = table.reset_index(drop=True)
    mine = table[table.part == part]
    choices, cited = [], []
    for choice, rows in mine.groupby("choice", sort=False):
        ordered = sorted(((int(i), r) for i, r in zip(rows.index, rows.itertuples(index=False), strict=True)
                          if not pd.isna(r.delta)), key=lambda x: -int(x[1].bits))
        at = tuple(AtBits(int(r.bits), Measured.of(r, "delta").scaled(POINTS),
                          paired([POINTS * d for d in (r.delta_values or (r.delta,))], 1.0)) for _, r in ordered)
        dropped = next((a.bits for a in at if a.verdict.outcome == BEYOND and a.verdict.direction < 0), None)
        kept = [a.bits for a in at if dropped is None or a.bits > dropped]
        choices.append(SweepChoice(str(choice), at, min(kept) if kept else None, dropped))
        cited += [Evidence("ptq_sweep", i, named(str(r.name), str(r.setup))) for i, r in ordered]
    return tuple(choices), tuple(cited)


@dataclass(frozen=True)
class Clipping:
    """Whether clipping the activations' tail beats max |x|, from the activation sweep at the notebook's
    calibration: each other range method against max at the same bits, by the seeds' paired differences
    (collect.verdict.paired, threshold 1 point). `helps_bits`: the highest bits where a method is beyond max
    (above); there, `method` is the one with the largest median paired difference."""

    calibration: int
    notebook_bits: int
    beyond_at_notebook: tuple[str, ...]  # methods beyond max (either way) at the notebook's bits
    helps_bits: Optional[int] = None
    method: str = ""
    accuracy: Optional[Measured] = None  # the method's, at helps_bits
    max_accuracy: Optional[Measured] = None
    verdict: Optional[Difference] = None  # method - max, in points, paired by seed
    delta_range: tuple[float, float] = (0.0, 0.0)  # the lowest and highest of those paired differences


def clipping(table: pd.DataFrame, calibration: int, notebook_bits: int) -> tuple[Optional[Clipping], tuple[Evidence, ...]]:
    """None where the sweep has no max row and another method at `calibration` with seeds to pair."""
    table = table.reset_index(drop=True)
    mine = table[(table.part == "activations") & (table.calibration_images == calibration) & table.delta.notna()]
    judged: dict[int, list[tuple[str, Difference, tuple[float, float], Any, Any]]] = {}
    cited: dict[int, list[Evidence]] = {}
    for bits, rows in mine.groupby("bits", sort=False):
        top = rows[rows.activation_method == "max"]
        if not len(top):
            continue
        m = next(top.itertuples())
        for r in rows[rows.activation_method != "max"].itertuples():
            pairs = [POINTS * (a - b) for a, b in zip(r.delta_values or (), m.delta_values or (), strict=False)]
            if len(pairs) < 2 or len(r.delta_values) != len(m.delta_values):
                continue
            method = method_text(str(r.activation_method), r.percentile)
            judged.setdefault(int(bits), []).append((method, paired(pairs, 1.0), (min(pairs), max(pairs)), r, m))
            cited.setdefault(int(bits), []).extend(
                [Evidence("ptq_sweep", int(m.Index), named(str(m.name), str(m.setup))),
                 Evidence("ptq_sweep", int(r.Index), named(str(r.name), str(r.setup)))])
    if notebook_bits not in judged:
        return None, ()
    beyond = tuple(c for c, v, *_ in judged[notebook_bits] if v.outcome == BEYOND)
    helped = [(b, j) for b in sorted(judged, reverse=True) for j in judged[b] if j[1].outcome == BEYOND and j[1].direction > 0]
    found = Clipping(calibration, notebook_bits, beyond)
    if helped:
        bits = helped[0][0]
        choice, verdict, spread, r, m = max((j for b, j in helped if b == bits), key=lambda j: j[1].delta)
        found = Clipping(calibration, notebook_bits, beyond, bits, choice, Measured.of(r, "accuracy"),
                         Measured.of(m, "accuracy"), verdict, spread)
    used = cited[notebook_bits] + (cited[found.helps_bits] if found.helps_bits is not None else [])
    return found, tuple(dict.fromkeys(used))
