"""The comparison of two sets as data: one Row per (configuration, metric) with each side's runs
and the verdict (collect.verdict) on B against A, and the Comparison: every row, the headline
rows' counts and geometric-mean ratios, what differs between the environments. Words for people
are chosen here as data (Row.outcome, Row.text); collect.compare.render lays them out."""
from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from collect.compare.environment import EnvLine
from collect.compare.pairing import Pair
from collect.compare.runs import Metric, Run
from collect.render import seconds, status_text
from collect.verdict import BEYOND, EQUIVALENT, MOST_REPEATS, Verdict, verdict

ONLY_A, ONLY_B = "only in A", "only in B"
STATUS_CHANGED, NO_FIGURES = "status changed", "no figures"  # OOM in A, 5.10 s in B; OOM in both
SHORT_UNITS = {"images/s": "img/s"}  # a grid's narrow columns
NOT_MEASURED = "not measured"  # a run that ended ok without this figure (a result from before it was recorded)
OUTCOMES = ("slower", "faster", "lower", "higher", EQUIVALENT, "inconclusive", STATUS_CHANGED, ONLY_A, ONLY_B,
            NO_FIGURES)  # counted in this order


@dataclass(frozen=True)
class Side:
    """A configuration's runs in one set, for one metric: the figures of those that have it, and
    the statuses of the rest ("oom": 2)."""

    values: tuple[float, ...]
    others: Mapping[str, int]

    @property
    def present(self) -> bool:
        return bool(self.values or self.others)

    @property
    def median(self) -> float:
        return statistics.median(self.values) if self.values else math.nan

    def text(self, unit: str, short: bool = False) -> str:
        """"5.10 s (3 runs)" ("5.10 s (3)" short, its unit SHORT_UNITS'), "5.10 s", "OOM", "2 failed, 1 OOM";
        "-" when the set has no such configuration."""
        if self.values:
            runs = f" ({len(self.values)}{'' if short else ' runs'})" if len(self.values) > 1 else ""
            return f"{figure(self.median, SHORT_UNITS.get(unit, unit) if short else unit)}{runs}"
        if not self.others:
            return "-"
        words = {s: NOT_MEASURED if s == "ok" else status_text(s) for s in self.others}  # ok: ran, without this figure
        if len(self.others) == 1:
            return words[next(iter(self.others))]
        return ", ".join(f"{n} {words[s]}" for s, n in self.others.items())


@dataclass(frozen=True)
class Row:
    kind: str
    config: str  # the configuration's label (collect.compare.pairing.Pair.label)
    metric: Optional[Metric]  # None: a configuration with no figure on either side (its status row)
    headline: bool  # the metric standing for its configuration (counted in the summary)
    a: Side
    b: Side
    verdict: Optional[Verdict]  # when both sides have a figure
    outcome: str  # one of OUTCOMES
    text: str  # for people: "8.2% slower (95% CI 5.1% to 11.4%)", "OOM in A, 5.10 s in B", "OOM in both"
    fields: Mapping[str, Any] = field(default_factory=dict)  # the configuration's (Pair.fields): a grid names its rows

    @property
    def title(self) -> str:
        return self.metric.title if self.metric else "status"

    @property
    def unit(self) -> str:
        return self.metric.unit if self.metric else ""


@dataclass(frozen=True)
class Comparison:
    a_name: str  # where set A was read (the baseline: --compare)
    b_name: str  # where set B was read (--results)
    environment: tuple[EnvLine, ...]
    rows: tuple[Row, ...]
    threshold: float
    confidence: float
    notes: tuple[str, ...] = ()

    @property
    def headline_rows(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.headline)

    def counts(self) -> dict[str, int]:
        """How many configurations (their headline rows) came out each way, in OUTCOMES' order, those with none left out."""
        found = Counter(r.outcome for r in self.headline_rows)
        return {o: found[o] for o in OUTCOMES if found[o]}

    def geometric_means(self) -> list[tuple[str, float, int]]:
        """Per headline metric: (its title, exp(mean ln ratio) over the configurations compared, how many)."""
        logs: dict[str, list[float]] = {}
        for r in self.headline_rows:
            if r.verdict is not None and r.metric is not None:
                logs.setdefault(r.metric.title, []).append(math.log(r.verdict.ratio))
        return [(title, math.exp(sum(v) / len(v)), len(v)) for title, v in logs.items()]

    @property
    def environment_differs(self) -> bool:
        return any(line.differs for line in self.environment)


def figure(value: float, unit: str) -> str:
    """"5.10 s", "1234 images/s", "98.7%", "245.3 GB/s", "0.0123 GB/s"."""
    if unit == "s":
        return f"{seconds(value)} s"
    if unit == "%":
        return f"{value:.1f}%"
    if value < 10:
        return f"{value:#.3g} {unit}"
    return f"{value:.1f} {unit}" if value < 1000 else f"{value:.0f} {unit}"


def side(runs: Sequence[Run], metric: str) -> Side:
    values = tuple(r.values[metric] for r in runs if metric in r.values)
    others = Counter(r.status for r in runs if metric not in r.values)
    return Side(values, dict(others))


def row(p: Pair, metric: Optional[Metric], threshold: float, confidence: float) -> Row:
    """The row of one configuration and metric: a verdict when both sides have a figure, else what
    each side holds ("OOM in A, 5.10 s in B")."""
    name = metric.name if metric else ""
    a, b = side(p.a, name), side(p.b, name)
    unit, headline = (metric.unit if metric else ""), (metric is None or metric.name == p.headline)
    if not a.present or not b.present:
        outcome = ONLY_B if not a.present else ONLY_A
        return Row(p.kind, p.label, metric, headline, a, b, None, outcome, outcome, p.fields)
    if a.values and b.values and metric is not None and min(a.values + b.values) > 0:  # a ratio of a 0: none
        v = verdict(a.values, b.values, threshold, confidence)
        return Row(p.kind, p.label, metric, headline, a, b, v, outcome_of(v, metric), verdict_text(v, metric), p.fields)
    same = a.text(unit) == b.text(unit)  # the same statuses (no figure on either side)
    return Row(p.kind, p.label, metric, headline, a, b, None, NO_FIGURES if same else STATUS_CHANGED, sides_text(a, b, unit),
               p.fields)


def outcome_of(v: Verdict, metric: Metric) -> str:
    return metric.word(v.direction) if v.outcome == BEYOND else v.outcome


def verdict_text(v: Verdict, metric: Metric) -> str:
    """"8.2% slower (interval +5.1% to +11.4%)"; "equivalent within ±5% (interval ...)"; "+3.0%,
    inconclusive (interval ...): ~12 runs per side would settle it"; "+3.0%, inconclusive: one run,
    no spread measured"."""
    if v.one_run:
        return f"{v.percent:+.1f}%, inconclusive: one run, no spread measured"
    interval = f"(interval {100 * (v.low - 1):+.1f}% to {100 * (v.high - 1):+.1f}%)"
    if v.outcome == BEYOND:
        return f"{abs(v.percent):.1f}% {metric.word(v.direction)} {interval}"
    if v.outcome == EQUIVALENT:
        return f"equivalent within ±{100 * v.threshold:g}% {interval}"
    runs = f"more than {MOST_REPEATS}" if (v.repeats_needed or 0) >= MOST_REPEATS else f"~{v.repeats_needed}"
    return f"{v.percent:+.1f}%, inconclusive {interval}: {runs} runs per side would settle it"


def sides_text(a: Side, b: Side, unit: str) -> str:
    """"OOM in both"; "OOM in A, 5.10 s in B"."""
    ta, tb = a.text(unit), b.text(unit)
    return f"{ta} in both" if ta == tb else f"{ta} in A, {tb} in B"


def rows(pairs: Sequence[Pair], metrics: Mapping[str, Metric], threshold: float = 0.05,
         confidence: float = 0.95) -> tuple[Row, ...]:
    """Every configuration's rows: its headline metric first, then each other metric either side
    measured (in the order of `metrics`); a status row when neither side measured any."""
    out: list[Row] = []
    for p in pairs:
        named = {name for r in p.a + p.b for name in r.values}
        order = [p.headline] if p.headline in metrics else []
        order += [name for name in metrics if name in named and name != p.headline]
        if not order:
            out.append(row(p, None, threshold, confidence))
        out += [row(p, metrics[name], threshold, confidence) for name in order]
    return tuple(out)


def worse_beyond(comparison: Comparison, word: str, threshold: float) -> list[Row]:
    """The rows whose metric got `word` ("slower": a time or rate; "worse": any metric with a
    better way) beyond `threshold`, by the verdict rule at that threshold."""
    found = []
    for r in comparison.rows:
        m = r.metric
        if m is None or not m.better or r.verdict is None or (word == "slower" and not m.speed):
            continue
        v = verdict(r.a.values, r.b.values, threshold, comparison.confidence)
        if v.outcome == BEYOND and v.direction * m.better < 0:
            found.append(r)
    return found


def largest_first(rows: Sequence[Row]) -> list[Row]:
    """The paired rows: those with a figure on both sides by the size of their change, |ln(B/A)|,
    largest first (whatever the verdict), then those whose status changed, then those with no
    figure on either side. Rows of a configuration in one set only are left out (one_sided counts them)."""
    rank_of = {STATUS_CHANGED: 1, NO_FIGURES: 2}

    def rank(r: Row) -> tuple[int, float]:
        return (0, -abs(math.log(r.verdict.ratio))) if r.verdict else (rank_of.get(r.outcome, 1), 0.0)
    return sorted((r for r in rows if r.outcome not in (ONLY_A, ONLY_B)), key=rank)


def one_sided(rows: Sequence[Row]) -> dict[str, int]:
    """How many configurations (their headline rows) are in one set only: {"only in A": 1, "only in B": 24}."""
    found = Counter(r.outcome for r in rows if r.headline and r.outcome in (ONLY_A, ONLY_B))
    return {o: found[o] for o in (ONLY_A, ONLY_B)}
