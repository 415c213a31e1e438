"""The command study's one question: how its time metric scales with the process count. No essay:
the record counts the verdicts of the scaling table (each N against its series' fewest processes
N0, by collect.verdict on the per-repeat times, with the cells of each side, so that `submit
--settle` can add the repeats an inconclusive one needs) and names the best efficiency."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Optional

from collect.command.grids import figure
from collect.evidence import Evidence, Measured, shown
from collect.questions import Question, Record, Tables, against, one_run_note
from collect.verdict import BEYOND, EQUIVALENT, Verdict


class CommandQ(StrEnum):
    SCALING = "command.scaling"


@dataclass(frozen=True)
class Compared:
    """One row of the scaling table past its series' base: N processes against N0."""

    series: str  # "weak, batch_per_gpu=64"
    metric: str
    processes: int
    base_processes: int
    time: Measured
    base_time: Measured
    speedup: float  # T(N0) / T(N), medians
    efficiency: float  # speedup / (N / N0)
    verdict: Verdict  # T(N) against T(N0): below 1 is faster


@dataclass(frozen=True)
class Scaling(Record):
    compared: tuple[Compared, ...]
    faster: int  # verdicts beyond the threshold, below 1
    slower: int  # beyond it, above 1
    equivalent: int
    inconclusive: int
    best: Compared  # the highest efficiency


def answer(tables: Tables) -> Optional[Scaling]:
    """Every N > N0 of the scaling table against its base; None when the table has none."""
    table = tables["command_scaling"].reset_index(drop=True)
    compared, evidence = [], []
    for (regime, series, metric), part in table.groupby(["regime", "series", "metric"], sort=False):
        base = next(r for r in part.itertuples() if r.processes == r.base_processes)
        for r in part.itertuples():
            if r.processes == r.base_processes:
                continue
            time, base_time = Measured.of(r, "time"), Measured.of(base, "time")
            compared.append(Compared(f"{regime}, {series}", str(metric), int(r.processes), int(r.base_processes), time,
                                     base_time, float(r.speedup), float(r.efficiency), against(time, base_time)))
            evidence.append(Evidence("command_scaling", int(r.Index), f"{regime}, {series}, N = {r.processes}"))
    if not compared:
        return None
    outcomes = [(c.verdict.outcome, c.verdict.direction) for c in compared]
    return Scaling(tuple(evidence), (), tuple(compared), outcomes.count((BEYOND, -1)), outcomes.count((BEYOND, 1)),
                   sum(o == EQUIVALENT for o, _ in outcomes), sum(o not in (BEYOND, EQUIVALENT) for o, _ in outcomes),
                   max(compared, key=lambda c: c.efficiency))


def render(r: Scaling) -> str:
    """"Against each series' fewest processes, 3 of 4 comparisons are faster beyond 5%, ... The best
    efficiency: 0.95 (speedup 1.90) at N = 2, weak, batch_per_gpu=64: epoch_s 5.2 s (...) against 9.9 s."""
    n, b = len(r.compared), r.best
    counts = ", ".join(f"{k} {word}" for k, word in ((r.faster, "faster"), (r.slower, "slower"),
                                                      (r.equivalent, "equivalent"), (r.inconclusive, "inconclusive"))
                       if k)
    notes = one_run_note(*(c.verdict for c in r.compared))
    text = (f"Against each series' fewest processes, {n} comparison{'s' if n != 1 else ''} by the verdict rule "
            f"(threshold {b.verdict.threshold:.0%}): {counts}. The best efficiency: {b.efficiency:.2f} (speedup "
            f"{b.speedup:.2f}) at N = {b.processes}, {b.series}: {b.metric} {shown(b.time, figure)} against "
            f"{shown(b.base_time, figure)} at N = {b.base_processes}.")
    return text + "".join(f" ({note}.)" for note in notes)


QUESTIONS = (Question(CommandQ.SCALING, "How does your script's time scale with the processes?", ("command_scaling",),
                      ("command_scaling",), answer, render),)
