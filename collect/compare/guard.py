"""`collect --compare A --fail-on WORD:PCT`: what a CI job fails on, as data. A regression is a
configuration of A that B made worse in any way a user relies on:

- slower (or worse) beyond PCT, by the verdict rule (collect.verdict) at PCT;
- a new failure: more of its runs OOM, failed, timed out or not run in B than in A;
- a vanished run: fewer runs in B than in A (a configuration only in A has lost them all);
- a collapsed value: a figure A measured that B's runs ended ok without, or at 0 (a test
  accuracy of 0.0: a diverged run).

No configuration in both sets (an empty set, another kind, another study) is no comparison: the
CLI exits 2 before any regression is counted. Neither is a set whose configurations have no figure
on both sides, or one run a side (no spread: never "slower"): exit 2 where no regression was found.
"""
from __future__ import annotations

from dataclasses import dataclass

from collect.compare.table import ONLY_A, ONLY_B, Comparison, Row, Side, worse_beyond

FAILED_WORDS = {"oom": "OOM"}  # other statuses are said as they are: failed, timeout, not submitted


@dataclass(frozen=True)
class Regression:
    config: str  # the configuration's label
    metric: str  # its metric's title, or "runs"
    why: str  # "12.0% slower (interval ...)", "1 OOM more than in A (A: 3 runs, B: 3)", "2 of 3 runs vanished"


@dataclass(frozen=True)
class Guard:
    regressions: tuple[Regression, ...]
    paired: int  # configurations in both sets (whatever their runs hold)
    compared: int  # configurations with a figure in both sets
    one_run: tuple[str, ...]  # those compared on one run a side (no verdict can say slower): their labels

def guard(comparison: Comparison, word: str, threshold: float) -> Guard:
    """The regressions of B against A (module docstring), configuration by configuration."""
    found = [Regression(r.config, r.title, r.text) for r in worse_beyond(comparison, word, threshold)]
    for r in comparison.headline_rows:
        found += runs_lost(r)
    found += [Regression(r.config, r.title, why) for r in comparison.rows if (why := collapsed(r))]
    both = [r for r in comparison.headline_rows if r.outcome not in (ONLY_A, ONLY_B)]
    compared = [r for r in both if r.verdict is not None]
    one_run = tuple(r.config for r in compared if r.verdict is not None and r.verdict.one_run)
    return Guard(tuple(found), len(both), len(compared), one_run)


def runs_lost(r: Row) -> list[Regression]:
    """A configuration's new failures and vanished runs (its headline row holds every run)."""
    a_runs, b_runs = _count(r.a), _count(r.b)
    if r.outcome == ONLY_A:
        return [Regression(r.config, "runs", f"every run vanished: {a_runs} in A, none in B")]
    lost = []
    for status, n in r.b.others.items():
        more = n - r.a.others.get(status, 0)
        if status != "ok" and more > 0 and r.a.present:
            lost.append(Regression(r.config, "runs", f"{more} {FAILED_WORDS.get(status, status)} more than in A "
                                                     f"(A: {r.a.text(r.unit)}; B: {r.b.text(r.unit)})"))
    if r.b.present and b_runs < a_runs:
        lost.append(Regression(r.config, "runs", f"{a_runs - b_runs} of {a_runs} runs vanished (B has {b_runs})"))
    return lost


def collapsed(r: Row) -> str:
    """"81.0% in A, 0.0% in B": a figure with a better way that A measured and B lost or holds at 0."""
    if r.metric is None or not r.metric.better or not r.a.values:
        return ""
    zero = any(v == 0 for v in r.b.values)
    unmeasured = r.b.others.get("ok", 0) > r.a.others.get("ok", 0)
    return f"collapsed: {r.text}" if zero or unmeasured else ""


def _count(side: Side) -> int:
    return len(side.values) + sum(side.others.values())
