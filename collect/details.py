"""A question's details: the lines beneath its answer (`collect --findings`, the report's
"Details", `--json`'s "details"), worded from the very record the answer is built from, never from a
second pass over the tables. Kind-agnostic: `record_details` walks any record's fields; a kind may
give a question its own (collect.questions.Question.details).

Every comparative word here is a verdict's (collect.verdict): `verdict_text` says its outcome, its
ratio or difference and the interval; no word is chosen by any other rule.
"""
from __future__ import annotations

import dataclasses
import math
from enum import Enum
from typing import Any, Union

from collect.evidence import Evidence, Measured, shown
from collect.sides import COMPARED
from collect.verdict import BEYOND, EQUIVALENT, MOST_REPEATS, Difference, Verdict

Judged = Union[Verdict, Difference]
SKIPPED = ("evidence", "missing")  # said by the answer itself
LISTED = 12  # items of a list described one by one; the rest counted (a study may hold 100,000 cells)
UNITS = (("_pct", "%"), ("_s", " s"), ("_gbps", " GB/s"), ("_gib", " GiB"), ("_bytes", " B"), ("_points", " points"))


def verdict_text(v: Judged, inverted: bool = False) -> str:
    """The verdict in words, b against a: "1.10x (1.07 to 1.13): above, beyond the 5% threshold";
    "1.01x (0.98 to 1.04): equivalent (within 5%)"; "1.04x: one run a side, no spread measured
    (inconclusive)"; "+0.02 (-0.01 to +0.05): inconclusive; about 8 repeats a side would settle
    it". A difference shows b - a and its threshold in the values' unit. `inverted`: a ratio of times shown
    as the speedup a / b its answer and `submit --settle` print (collect.sides.COMPARED), above and below swapped."""
    direction = v.direction
    if isinstance(v, Verdict) and inverted and v.ratio > 0:
        centre, ends, band = f"{1 / v.ratio:.2f}x", (f"{1 / v.high:.2f}", f"{1 / v.low:.2f}"), f"{v.threshold:.0%}"
        direction = -direction
    elif isinstance(v, Verdict):
        centre, ends, band = f"{v.ratio:.2f}x", (f"{v.low:.2f}", f"{v.high:.2f}"), f"{v.threshold:.0%}"
    else:
        centre, ends, band = f"{v.delta:+.3g}", (f"{v.low:+.3g}", f"{v.high:+.3g}"), f"{v.threshold:g}"
    if v.one_run:
        return f"{centre}: one run a side, no spread measured (inconclusive)"
    interval = centre if math.isnan(v.low) else f"{centre} ({ends[0]} to {ends[1]})"  # none at 0 (verdict.at_zero)
    if v.outcome == BEYOND:
        return f"{interval}: {'above' if direction > 0 else 'below'}, beyond the {band} threshold"
    if v.outcome == EQUIVALENT:
        return f"{interval}: equivalent (within {band})"
    many = "more than" if (v.repeats_needed or 0) >= MOST_REPEATS else "about"
    settle = f"; {many} {v.repeats_needed} repeats a side would settle it" if v.repeats_needed else ""
    return f"{interval}: inconclusive{settle}"


def value_text(name: str, value: Any, inverted: bool = False) -> str:
    """One field's value in words, its unit from its name (`_s` seconds, `_pct` percent, `share` a
    fraction shown in percent...); "" for what is not there (None, NaN). `inverted`: verdicts inside are
    shown the way round their answer words them (verdict_text)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (Verdict, Difference)):
        return verdict_text(value, inverted)
    if isinstance(value, Measured):
        return shown(value, lambda x: f"{x:.4g}", _unit(name))
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}{_unit(name)}"
    if isinstance(value, float):
        if "share" in name:  # one decimal: an answer's rounded or floored percent reads the same
            return f"{100 * value:.1f}%"
        return f"{value:.4g}{_unit(name)}"
    if isinstance(value, (tuple, list)):  # a list of records: " | " between them, "; " inside each
        return (" | " if value and dataclasses.is_dataclass(value[0]) else ", ").join(
            t for t in (value_text(name, v, inverted) for v in value) if t)
    if dataclasses.is_dataclass(value):
        return _fields(value, inverted)
    return str(value)


def _unit(name: str) -> str:
    """The unit a field's name ends with ("train_s", "busbw_gbps"), or is ("gbps")."""
    return next((unit for end, unit in UNITS if name.endswith(end) or name == end[1:]), "")


def _fields(item: Any, inverted: bool = False) -> str:
    """"name value; name value" over a nested record's fields that hold a value."""
    parts = ((f.name, value_text(f.name, getattr(item, f.name), inverted)) for f in dataclasses.fields(item)
             if f.name not in SKIPPED)
    return "; ".join(f"{name.replace('_', ' ')} {text}" for name, text in parts if text)


def record_details(record: Any) -> tuple[str, ...]:
    """The record's fields as lines: first its plain values on one line, then one line per verdict,
    figure or nested record, and one per item of a list of them ("splits 2: ..."), the first LISTED
    of a list and a line that counts the rest (`collect --json` has them all)."""
    plain, lines = [], []
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        label = f.name.replace("_", " ")
        inverted = COMPARED.get(f.name, ("", False))[1]  # the way round the answer and the settle lines say it
        if f.name in SKIPPED or isinstance(value, Evidence):
            continue
        if isinstance(value, (tuple, list)) and value and dataclasses.is_dataclass(value[0]):
            lines += [f"{label} {i + 1}: {value_text(f.name, item, inverted)}" for i, item in enumerate(value[:LISTED])]
            if len(value) > LISTED:
                lines.append(f"{label}: {len(value) - LISTED:,} more, not listed here (collect --json has every one)")
        elif dataclasses.is_dataclass(value) or isinstance(value, Measured):
            lines.append(f"{label}: {value_text(f.name, value, inverted)}")
        elif text := value_text(f.name, value):
            plain.append(f"{label} {text}")
    return (("; ".join(plain),) if plain else ()) + tuple(lines)
