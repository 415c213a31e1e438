"""Part B's findings, from the PTQ tables: which layers' 3-sigma range is narrower or wider than
their largest magnitude (Q1 weights, Q3 activations), each notebook variant's accuracy against its
own float network (Q2 W8, Q4 W8A8, Q5 the bias), the integer-only run against the float
simulation, and from the sweep the lowest bits within 1 point of float per choice."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from collect.findings import DESCRIBED, Evidence, Finding, Measured, compare, listing, shown, word, without_results
from collect.ptq.grids import named, one_seed, points
from collect.render import percent

WITHIN = 0.01  # "within 1 point of float": a median delta of at least -1 percentage point
EPSILON = 1e-9  # 0.51 - 0.52 is -0.0100000000000000009 in floats: still within 1 point
ZERO = Measured(0.0, 0.0, 0.0, repeats=2)  # the float network against itself: no spread of its own


def build(built: Mapping[str, pd.DataFrame]) -> tuple[Finding, ...]:
    found = coverage(built["ptq_cells"])
    found += ranges(built["ptq_weights"], "B.Q1", "weights", "ptq_weights")
    found += notebook(built["ptq_notebook"])
    found += ranges(built["ptq_activations"], "B.Q3", "activations", "ptq_activations")
    found += integer(built["ptq_integer"])
    found += sweep(built["ptq_sweep"])
    return tuple(found)


def _rows(table: pd.DataFrame) -> list[tuple[int, Any]]:
    return list(enumerate(table.reset_index(drop=True).itertuples(index=False)))


def coverage(cells: pd.DataFrame) -> list[Finding]:
    """What Part B's figures rest on when some cells have no result."""
    rows = _rows(cells)
    missing = [(i, r) for i, r in rows if r.status != "ok"]
    if not missing:
        return []
    why = lambda r: f"{r.status}: {r.error}" if isinstance(r.error, str) and r.error else r.status  # noqa: E731
    text = (f"Part B's figures rest on {len(rows) - len(missing)} of {len(rows)} cells (training seeds); without a "
            f"result: {without_results((named(f'cell {r.cell_id}', r.setup), why(r)) for _, r in missing)}.")
    return [Finding("B", text, {"cells_ok": float(len(rows) - len(missing)), "cells": float(len(rows))},
                    tuple(Evidence("ptq_cells", i, r.cell_id) for i, r in missing[:DESCRIBED]))]


def ranges(stats: pd.DataFrame, question: str, what: str, key: str) -> list[Finding]:
    """Per setup (one seed), the layers whose 3-sigma range |mean| + 3 std is narrower than max|x|
    (it would clip their largest values) and those where it is wider (it would waste range)."""
    found = []
    for setup, group in stats.reset_index(drop=True).groupby("setup", sort=False):
        rows = [(int(i), r) for i, r in zip(group.index, group.itertuples(index=False), strict=True)]
        narrower = [r.layer for _, r in rows if not r.wider]
        wider = [r.layer for _, r in rows if r.wider]
        parts = []
        if narrower:
            parts.append(f"narrower than max|x| in {listing(narrower, 10)} (a 3-sigma clip would cut their largest "
                         "values)")
        if wider:
            parts.append(f"wider in {listing(wider, 10)} (a 3-sigma clip would waste range there)")
        methods = listing(sorted({str(r.method) for _, r in rows}))
        text = (f"Net's {what}, {one_seed(group)}: the 3-sigma range |mean| + 3 std is " + "; ".join(parts)
                + f"; the notebook's clip range here: {methods}.")
        numbers = {f"{r.layer}_sigma3": max(abs(r.sigma3_low), abs(r.sigma3_high)) for _, r in rows}
        numbers.update({f"{r.layer}_max_abs": max(abs(r.min), abs(r.max)) for _, r in rows})
        found.append(Finding(question, text, numbers, tuple(Evidence(key, i, named(r.layer, setup)) for i, r in rows)))
    return found


def _question(r: Any) -> str:
    if r.model == "NetWithBias":
        return "B.Q5"
    return "B.Q2" if pd.isna(r.activation_bits) else "B.Q4"


def _delta(r: Any) -> Measured:
    return Measured.of(r, "delta")


def notebook(table: pd.DataFrame) -> list[Finding]:
    """Each quantized notebook variant's delta against the float network of its own model and
    seed; then, for the bias, int32 against leaving it float."""
    rows = _rows(table)
    found = []
    floats = {(r.setup, r.model): (i, r) for i, r in rows if not r.quantized}
    for i, r in rows:
        if not r.quantized or pd.isna(r.delta):
            continue
        d = _delta(r)
        size = f"{100 * abs(d.value):.2f} points"
        how = word(compare(d, ZERO), f"{size} below", f"{size} above", "not distinguishable from")
        spread = f"; delta {points(d.value)} points ({points(d.low)} to {points(d.high)} over {d.repeats} seeds)" \
            if d.repeats >= 2 else ", one seed: no spread measured"
        base = floats.get((r.setup, r.model))
        base_text = f"'s {shown(Measured.of(base[1], 'accuracy'), lambda v: percent(v, 2))}" if base else ""
        text = (f"{named(r.name, r.setup)}: test accuracy {shown(Measured.of(r, 'accuracy'), lambda v: percent(v, 2))}, "
                f"{how} its own float network{base_text}{spread}.")
        cited = (Evidence("ptq_notebook", i, named(r.name, r.setup)),) + (
            (Evidence("ptq_notebook", base[0], named(base[1].name, r.setup)),) if base else ())
        found.append(Finding(_question(r), text, {"delta_points": 100 * d.value, "accuracy": float(r.accuracy)}, cited))
    return found + _bias(rows)


def _bias(rows: list[tuple[int, Any]]) -> list[Finding]:
    """The int32 bias (scale n_w C_{k-1}) against the bias left float, both against their float network."""
    found = []
    by_setup: dict[str, dict[str, tuple[int, Any]]] = {}
    for i, r in rows:
        if r.model == "NetWithBias" and r.quantized and not pd.isna(r.delta):
            by_setup.setdefault(r.setup, {})["float" if r.bias == "float" else "int"] = (i, r)
    for setup, pair in by_setup.items():
        if set(pair) != {"float", "int"}:
            continue
        (fi, fr), (ii, ir) = pair["float"], pair["int"]
        a, b = _delta(ir), _delta(fr)
        change = a.value - b.value
        how = word(compare(a, b), f"loses {100 * -change:.2f} points against", f"recovers {100 * change:.2f} points over",
                   "is not distinguishable from")
        text = (f"Quantizing the bias to int32 at the sum's scale ({named(ir.name, setup)}) {how} leaving it float "
                f"({fr.name}): deltas {points(a.value)} and {points(b.value)} points against their float network"
                f"{'' if min(a.repeats, b.repeats) >= 2 else ', one seed: no spread measured'}.")
        found.append(Finding("B.Q5", text, {"int32_bias_delta_points": 100 * a.value, "float_bias_delta_points":
                                            100 * b.value}, (Evidence("ptq_notebook", ii, named(ir.name, setup)),
                                                             Evidence("ptq_notebook", fi, named(fr.name, setup)))))
    return found


def integer(table: pd.DataFrame) -> list[Finding]:
    """The integer-only run against the float simulation (predictions and logits), and the checks
    on every value entering a quantized layer."""
    found = []
    for i, r in _rows(table):
        name = named(r.name, r.setup)
        if pd.isna(r.images):
            bad = int(r.non_integer + r.out_of_range)
            text = (f"{r.variants} {name}: " + ("every one of" if not bad else f"{bad:,} of") +
                    f" {int(r.checked_values):,} values entering a quantized layer " +
                    ("was an integer in range." if not bad else "were not an integer in range."))
            found.append(Finding("B.integer", text, {"checked_values": float(r.checked_values), "bad_values": float(bad)},
                                 (Evidence("ptq_integer", i, name),)))
            continue
        images, differ = int(r.images), int(r.prediction_mismatches)
        verdict = "agrees with the float simulation on every one of" if not differ else \
            f"predicts another class than the float simulation on {differ:,} of"
        text = (f"{name} run integer-only ({r.accumulator} accumulator) {verdict} {images:,} test images "
                f"({int(r.logit_mismatches):,} with any output integer different; {r.repeats} seeds).")
        found.append(Finding("B.integer", text, {"images": float(images), "prediction_mismatches": float(differ),
                                                 "logit_mismatches": float(r.logit_mismatches)},
                             (Evidence("ptq_integer", i, name),)))
    return found


def sweep(table: pd.DataFrame) -> list[Finding]:
    """Per part (weights only; 8-bit weights with quantized activations), per choice, the lowest
    bits whose median delta stays within 1 point of float; or that none does; or that the sweep's
    lowest still does (it did not reach the limit)."""
    found = []
    table = table.reset_index(drop=True)
    for (setup, part), group in table.groupby(["setup", "part"], sort=False):
        items, cited, numbers = [], [], {}
        for choice, rows in group.groupby("choice", sort=False):
            ordered = sorted(((int(i), r) for i, r in zip(rows.index, rows.itertuples(index=False), strict=True)),
                             key=lambda x: -x[1].bits)
            items.append(f"{choice}: {_lowest(ordered)}")
            cited += [Evidence("ptq_sweep", i, named(r.name, setup)) for i, r in ordered]
            numbers.update({f"{choice} {r.bits} bits delta_points": 100 * float(r.delta) for _, r in ordered})
        what = ("weights only (activations float), weight bits" if part == "weights" else
                "8-bit weights with quantized activations, activation bits")
        found.append(Finding("B.sweep", f"Sweep{' [' + setup + ']' if setup else ''}, {what}, the lowest within 1 point "
                                        f"of the float network (median delta over seeds): " + "; ".join(items) + ".",
                             numbers, tuple(cited)))
    return found


def _lowest(ordered: list[tuple[int, Any]]) -> str:
    """"6 bits (-0.40 points; 4 bits: -3.10)"; "none (8 bits: -1.50)"; "even 2 bits (-0.20): the
    sweep did not go low enough to find the limit"."""
    within = [r for _, r in ordered if r.delta >= -WITHIN - EPSILON]
    if not within:
        top = ordered[0][1]
        return f"none ({top.bits} bits: {points(top.delta)} points)"
    lowest = min(within, key=lambda r: r.bits)
    below = [r for _, r in ordered if r.bits < lowest.bits]
    text = f"{lowest.bits} bits ({points(lowest.delta)} points"
    if not below:
        return f"even the sweep's lowest, {text}): the sweep did not go low enough to find the limit"
    text += f"; {below[0].bits} bits: {points(below[0].delta)})"
    above = [r for _, r in ordered if r.bits > lowest.bits and r.delta < -WITHIN - EPSILON]
    if above:
        text += f", though {listing(f'{r.bits} bits' for r in above)} did not stay within"
    return text
