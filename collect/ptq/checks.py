"""What Part B's quantization answers rest on beyond the notebook's accuracies, as records for
their details: the integer-only run against the float simulation (collect.ptq.tables.integer_table)
and, from the sweep, how low each choice's bits go before the accuracy drops beyond 1 point (the
paired difference verdict over the seeds' deltas, collect.verdict.paired)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import pandas as pd

from collect.evidence import Evidence, Measured
from collect.ptq.grids import named
from collect.ptq.tables import POINTS, THRESHOLD_POINTS, method_text
from collect.verdict import BEYOND, Difference, paired


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
                          paired([POINTS * d for d in (r.delta_values or (r.delta,))], THRESHOLD_POINTS)) for _, r in ordered)
        dropped = next((a.bits for a in at if a.verdict.outcome == BEYOND and a.verdict.direction < 0), None)
        kept = [a.bits for a in at if dropped is None or a.bits > dropped]
        choices.append(SweepChoice(str(choice), at, min(kept) if kept else None, dropped))
        cited += [Evidence("ptq_sweep", i, named(str(r.name), str(r.setup))) for i, r in ordered]
    return tuple(choices), tuple(cited)


@dataclass(frozen=True)
class Clipping:
    """Whether clipping the activations' tail beats max |x|, from the paired table (collect.ptq.tables.
    clipping_table) at the notebook's calibration: each other range method against max at the same bits and
    seed (collect.verdict.paired, THRESHOLD_POINTS). `helps_bits`: the highest bits where a method is beyond
    max (above); there, `method` is the one with the largest mean paired difference."""

    calibration: int
    notebook_bits: int
    beyond_at_notebook: tuple[str, ...]  # methods beyond max (either way) at the notebook's bits
    helps_bits: Optional[int] = None
    method: str = ""
    accuracy: Optional[Measured] = None  # the method's, at helps_bits (the sweep's median over seeds)
    max_accuracy: Optional[Measured] = None
    verdict: Optional[Difference] = None  # method - max, in points, paired by seed: the paired table's row
    delta_range: tuple[float, float] = (0.0, 0.0)  # the lowest and highest of those paired differences, in points
    threshold: float = THRESHOLD_POINTS  # the verdicts' threshold, in points, as the answer names it


def clipping(pairs: pd.DataFrame, sweep: pd.DataFrame, calibration: int,
             notebook_bits: int) -> tuple[Optional[Clipping], tuple[Evidence, ...]]:
    """None where the paired table has no method against max at `calibration` and the notebook's bits with
    seeds to pair (its first setup)."""
    pairs = pairs.reset_index(drop=True)
    mine = pairs[(pairs.calibration_images == calibration) & (pairs.repeats >= 2)]
    mine = mine[mine.setup == mine.setup.iloc[0]] if len(mine) else mine
    at_notebook = mine[mine.bits == notebook_bits]
    if at_notebook.empty:
        return None, ()
    cited = [Evidence("ptq_clipping", int(i), str(r.choice)) for i, r in at_notebook.iterrows()]
    beyond = tuple(method_text(str(r.activation_method), r.percentile) for r in at_notebook.itertuples()
                   if r.outcome == BEYOND)
    helped = mine[(mine.outcome == BEYOND) & (mine.direction > 0)]
    if helped.empty:
        return Clipping(calibration, notebook_bits, beyond), tuple(cited)
    at = helped[helped.bits == helped.bits.max()]
    i, r = max(at.iterrows(), key=lambda ir: ir[1].delta)
    method, bits = method_text(str(r.activation_method), r.percentile), int(r.bits)
    sweep = sweep.reset_index(drop=True)
    side = sweep[(sweep.part == "activations") & (sweep.setup == r.setup) & (sweep.calibration_images == calibration)
                 & (sweep.bits == bits)]
    mine_row, max_row = (side[side.activation_method == m] for m in (r.activation_method, "max"))
    if mine_row.empty or max_row.empty:
        return Clipping(calibration, notebook_bits, beyond), tuple(cited)
    rows = [(int(x.index[0]), next(x.itertuples(index=False))) for x in (mine_row, max_row)]
    cited += [Evidence("ptq_clipping", int(i), str(r.choice))]
    cited += [Evidence("ptq_sweep", j, named(str(row.name), str(row.setup))) for j, row in rows]
    found = Clipping(calibration, notebook_bits, beyond, bits, method, Measured.of(rows[0][1], "accuracy"),
                     Measured.of(rows[1][1], "accuracy"),
                     paired([POINTS * d for d in r.delta_values], THRESHOLD_POINTS),
                     (POINTS * float(r.delta_min), POINTS * float(r.delta_max)))
    return found, tuple(dict.fromkeys(cited))


@dataclass(frozen=True)
class PercentileIsMax:
    """Why the weights sweep's "channel, percentile p" rows equal its "channel, max" rows: the nearest-rank p-th
    percentile of n values is the ceil(p/100 n)-th smallest (jobs.ptq.quantize), the largest while n < limit,
    and every output channel holds fewer weights than that."""

    percentile: float
    limit: int  # the fewest values whose nearest-rank percentile is below their max
    per_channel: tuple[tuple[str, int, int], ...]  # each layer: its weights, its output channels
    largest: tuple[str, int]  # the layer with the most weights per channel, and that count


def percentile_is_max(sweep: pd.DataFrame, weights: pd.DataFrame,
                      scales: pd.DataFrame) -> tuple[Optional[PercentileIsMax], tuple[Evidence, ...]]:
    """The record where the per-channel percentile and max rows of the weights sweep hold the same accuracies
    (every seed, every bits) and every channel's weight count (the weights table's values over the scales
    table's channels) is below the limit; None otherwise (no sentence then: the rows differ, or why is unknown)."""
    sweep = sweep.reset_index(drop=True)
    mine = sweep[(sweep.part == "weights") & (sweep.granularity == "channel")]
    rows = {m: mine[mine.weight_method == m] for m in ("percentile", "max")}
    if any(r.empty for r in rows.values()) or not len(weights) or not len(scales):
        return None, ()
    by_bits = {m: {int(r.bits): tuple(r.accuracy_values) for r in g.itertuples()} for m, g in rows.items()}
    if by_bits["percentile"] != by_bits["max"]:
        return None, ()
    p = float(rows["percentile"].percentile.iloc[0])
    channels = {r.layer: int(r.channels) for r in scales.itertuples() if not pd.isna(r.channels)}
    weights = weights.reset_index(drop=True)
    counts = [(str(r.layer), int(r.values), channels[r.layer]) for r in weights.itertuples() if r.layer in channels]
    if not counts or any(math.ceil(p / 100 * (n // c)) != n // c for _, n, c in counts):
        return None, ()
    limit = next(n for n in range(max(int(1 / (1 - p / 100)) - 2, 1), 10 ** 9) if math.ceil(p / 100 * n) < n) \
        if p < 100 else 0
    layer, n, c = max(counts, key=lambda x: x[1] // x[2])
    cited = [Evidence("ptq_sweep", int(i), f"{r.choice}, {r.bits} bits") for m in ("max", "percentile")
             for i, r in rows[m].iterrows()] + [Evidence("ptq_weights", int(i), str(r.layer)) for i, r in weights.iterrows()]
    return PercentileIsMax(p, limit, tuple(counts), (layer, n // c)), tuple(cited)
