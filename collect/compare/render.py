"""A Comparison (collect.compare.table) for people and for programs: the lines said first (the
sets, the environments, the counts), the grid of the largest changes, every row as a frame
(compare.csv), as JSON, and as a Markdown report section."""
from __future__ import annotations

import json
import math
from typing import Any, Optional

import pandas as pd

from collect.compare.pairing import labels
from collect.compare.table import ONLY_A, ONLY_B, Comparison, Row, largest_first, one_sided
from collect.render import Grid, md_text, to_markdown
from collect.verdict import MOST_REPEATS

SHOWN = 15  # rows on the console and in the report's grid; compare.csv has them all
COLUMNS = ["kind", "configuration", "metric", "unit", "headline", "a_runs", "b_runs", "a_median", "b_median", "a",
           "b", "ratio", "ratio_low", "ratio_high", "outcome", "verdict", "repeats_needed"]


def header_lines(c: Comparison) -> list[str]:
    """What is said before the rows: the sets, what differs between their environments, the counts,
    the geometric means, the rule, and the notes."""
    lines = [f"A (baseline): {c.a_name}", f"B: {c.b_name}", "every ratio is B / A"]
    if c.environment_differs:
        lines.append("environments differ, so a change below may be the environment's, not the code's: "
                     + "; ".join(line.text() for line in c.environment if line.differs))
    else:
        lines.append("same environment: " + "; ".join(line.text() for line in c.environment))
    counts = c.counts()
    total = sum(counts.values())
    lines.append(f"{total} configuration{'s' if total != 1 else ''}: "
                 + (", ".join(f"{n} {outcome}" for outcome, n in counts.items()) or "none"))
    lines += [f"{title}: geometric mean ratio {ratio:.3f} over {n} configuration{'s' if n != 1 else ''}"
              for title, ratio, n in c.geometric_means()]
    lines.append(rule(c))
    return lines + [f"note: {note}" for note in c.notes]


def rule(c: Comparison) -> str:
    return (f"verdicts: ratio of medians with a {100 * c.confidence:g}% interval (Welch t on the log values, "
            f"collect/verdict.py); beyond ±{100 * c.threshold:g}% or equivalent within it; one run: no spread measured")


def grid(c: Comparison, shown: int = SHOWN) -> Grid:
    """The paired rows, largest changes first, at most `shown` of them, each configuration named by
    what varies among those shown; the interval column only where a row shown has one (both sides
    with a spread). Fits the terminal (collect.render.fold): compare.csv has every row and field."""
    ordered = largest_first(c.rows)
    rows = ordered[:shown]
    names = labels([(r.kind, r.fields) for r in rows])
    spread = any(_interval(r) != "-" for r in rows)
    more = len(ordered) - shown
    notes = [f"the {shown} largest of {len(ordered)} paired rows" if more > 0 else ""]
    alone = one_sided(c.rows)
    if any(alone.values()):
        a, b = alone[ONLY_A], alone[ONLY_B]
        notes.append(f"{a} configuration{'s' if a != 1 else ''} only in A and {b} only in B")
    if more > 0 or any(alone.values()):
        notes.append("every row is in compare.csv")
    header = ["configuration", "metric", "A", "B", "B/A"] + ["interval"] * spread + ["verdict"]
    return Grid("compare", "B against A, largest changes first",
                "A, B: the median over the runs (how many, when more than one); B/A: the ratio of medians"
                + (f", its {100 * c.confidence:g}% interval beside it; inconclusive (~N runs): the runs per side "
                   "that would settle it" if spread else ""),
                header,
                [[name, r.title, r.a.text(r.unit, short=True), r.b.text(r.unit, short=True), _ratio(r)]
                 + [_interval(r)] * spread + [short(r)] for name, r in zip(names, rows, strict=True)],
                empty="" if ordered or any(alone.values()) else "no configurations in either set",
                text_columns=(0, 1, len(header) - 1), more="; ".join(n for n in notes if n))


def short(r: Row) -> str:
    """The verdict in a few words: "36.6% slower", "equivalent (±5%)", "inconclusive (~5 runs)" (per side
    would settle it), "one run"
    (no spread: the ratio alone), "OOM in both"."""
    v = r.verdict
    if v is None:
        return r.text
    if v.one_run:
        return "one run"
    if v.outcome == "beyond":
        return f"{abs(v.percent):.1f}% {r.outcome}"
    if v.outcome == "equivalent":
        return f"equivalent (±{100 * v.threshold:g}%)"
    needed = f"{MOST_REPEATS}+" if (v.repeats_needed or 0) >= MOST_REPEATS else f"~{v.repeats_needed}"
    return f"inconclusive ({needed} runs)"


def _interval(r: Row) -> str:
    v = r.verdict
    if v is None or v.one_run:
        return "-"
    return f"{v.low:.3f}-{v.high:.3f}"


def _ratio(r: Row) -> str:
    return f"{r.verdict.ratio:.3f}" if r.verdict else "-"


def frame(c: Comparison) -> pd.DataFrame:
    """Every row (compare.csv), in the configurations' order."""
    return pd.DataFrame([record(r) for r in c.rows], columns=COLUMNS)


def record(r: Row) -> dict[str, Any]:
    v = r.verdict
    return dict(kind=r.kind, configuration=r.config, metric=r.metric.name if r.metric else "status", unit=r.unit,
                headline=r.headline, a_runs=len(r.a.values), b_runs=len(r.b.values),
                a_median=_number(r.a.median), b_median=_number(r.b.median), a=r.a.text(r.unit), b=r.b.text(r.unit),
                ratio=_number(v.ratio) if v else None, ratio_low=_number(v.low) if v else None,
                ratio_high=_number(v.high) if v else None, outcome=r.outcome, verdict=r.text,
                repeats_needed=v.repeats_needed if v else None)


def _number(value: float) -> Optional[float]:
    return None if math.isnan(value) else value


def to_json(c: Comparison, written: list[str]) -> str:
    return json.dumps(dict(
        a=c.a_name, b=c.b_name, threshold=c.threshold, confidence=c.confidence,
        environment=[dict(name=e.name, a=e.a, b=e.b, differs=e.differs) for e in c.environment],
        counts=c.counts(), geometric_means=[dict(metric=t, ratio=r, configurations=n) for t, r, n in c.geometric_means()],
        notes=list(c.notes), rows=[record(r) for r in c.rows], written=written), indent=1)


def markdown(c: Comparison, plot_file: Optional[str]) -> str:
    """The comparison as a report section: the lines said first, the ratio plot, the grid."""
    lines = ["## B against A", ""] + [f"- {md_text(line)}" for line in header_lines(c)] + [""]
    if plot_file:
        lines += [f"![B / A per configuration]({plot_file})", ""]
    return "\n".join(lines) + to_markdown(grid(c))

