"""Which answers hold undecided words, and what would decide them (pure): every inconclusive verdict
(a ratio's or a difference's) in an answer's record (one run on a side included) whose sides name
their cells, and the runs per side the rule (collect.settle_rule) asks for next. `collect` says
them; `submit --settle` queues them (orchestrator.settle turns runs per side into new repeats of
those cells)."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from collect.questions import Answered, answer_all
from collect.settle_rule import PILOT, pilot_size, stage_two_size
from collect.verdict import INCONCLUSIVE, Difference, Verdict

PILOT_ROUND, SECOND_ROUND = "pilot", "second stage"  # the round a comparison is in: stage 1's top-up, or the sized stage 2


@dataclass(frozen=True)
class Undecided:
    """An inconclusive comparison that chose a word of an answer: the question, the record's field
    that holds the verdict ("trend", "runs.1.faster"), the verdict with its sides (collect.sides),
    the round it is in and the runs per side that round brings each side to."""

    question: str
    field: str
    verdict: Verdict | Difference
    round: str  # PILOT_ROUND or SECOND_ROUND
    runs: int  # runs per side in all after this round (each side keeps what it has beyond)

    @property
    def a_cells(self) -> tuple[str, ...]:
        return self.verdict.sides.a_cells if self.verdict.sides else ()

    @property
    def b_cells(self) -> tuple[str, ...]:
        return self.verdict.sides.b_cells if self.verdict.sides else ()


def undecided(answers: Sequence[Answered]) -> tuple[Undecided, ...]:
    """Each inconclusive verdict of each answer, once per question and pair of sides, whose sides both
    name cells (a figure whose table kept none cannot be repeated), in the answers' order."""
    out, seen = [], set()
    for answer in answers:
        for field, v in verdicts(answer.record, ""):
            if v.outcome != INCONCLUSIVE or v.sides is None or not (v.sides.a_cells and v.sides.b_cells):
                continue
            key = (answer.id, v.sides.a_cells, v.sides.b_cells)
            if key not in seen:
                seen.add(key)
                out.append(next_round(answer.id, field, v))
    return tuple(out)


def next_round(question: str, field: str, v: Verdict | Difference) -> Undecided:
    """The rule's next round for an inconclusive verdict (collect.settle_rule): the pilot while a
    side has fewer runs than it, else the second stage sized from what is measured, on the verdict's
    scale (a ratio's, or a difference's)."""
    assert v.sides is not None
    a, b = v.sides.a_values, v.sides.b_values
    if min(len(a), len(b)) < PILOT:
        return Undecided(question, field, v, PILOT_ROUND, pilot_size(len(a), len(b)))
    return Undecided(question, field, v, SECOND_ROUND,
                     stage_two_size(a, b, v.threshold, ratio=isinstance(v, Verdict)))


def verdicts(value: Any, prefix: str) -> Iterator[tuple[str, Verdict | Difference]]:
    """(field path, verdict) of every verdict (a ratio's or a difference's) in a record, nested records
    and lists included."""
    if isinstance(value, (Verdict, Difference)):
        yield prefix.rstrip("."), value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if f.name not in ("evidence", "missing"):
                yield from verdicts(getattr(value, f.name), f"{prefix}{f.name}.")
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from verdicts(item, f"{prefix}{i}.")


def answers_of(results_dir: Path) -> tuple[Answered, ...]:
    """Every answer of a results dir, as `collect` makes them, and no file written: what `submit --settle` reads."""
    from collect import kinds
    from collect.load import load
    from collect.view import DEFAULT_VIEW

    loaded = load(results_dir)
    present = kinds.present(loaded)
    built = {key: table for kind in present for key, table in kind.tables(loaded, DEFAULT_VIEW).items()}
    return tuple(a for kind in present for a in answer_all(kind.questions, built))
