"""The question, collect's unit: each kind declares its questions (collect.<kind>.questions), each an
id, a title, the tables and plots it shows, a pure function from the tables to a typed answer record
(numbers, verdicts, evidence rows) and a renderer that words the record as the assignment's
expected answer, and its details (collect.details: the lines beneath it, from the same record).
Order, presence and the `--json` schema come from those lists. Kind-agnostic. Adding a question
touches its kind's questions file (and one test): nothing here, nor in the report.

Every comparative word of an answer and its details is chosen by collect.verdict over each side's
per-repeat values (`against`, `says`); a figure with repeats is shown with its range.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Optional, TypeVar

import pandas as pd

from collect.details import record_details
from collect.evidence import Evidence, Measured
from collect.sides import Sides
from collect.verdict import Difference, Verdict, at_zero, leaning, verdict

Tables = Mapping[str, pd.DataFrame]
WORDS = 120  # an answer's words at most (the console's screen holds every answer of a study)


@dataclass(frozen=True)
class Record:
    """An answer as data: the kind's record types add their numbers and verdicts as fields. `missing`:
    what the study lacks for this question (said once inside the answer, in the student's words);
    `evidence`: the table rows its numbers come from; `to_add`: what the tool's user could add to the
    study to measure it, in the study file's words (the details say it, never the paragraph)."""

    evidence: tuple[Evidence, ...]
    missing: tuple[str, ...]
    to_add: tuple[str, ...] = field(default=(), kw_only=True)

    def numbers(self) -> dict[str, Any]:
        """Every number and verdict of the record, by field name (nested records and verdicts by
        "<field>.<name>"), for `collect --json`: NaN as None."""
        return _flat(self, "")


def _flat(value: Any, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if f.name not in ("evidence", "missing", "to_add") and not f.metadata.get("cells"):
                out.update(_flat(getattr(value, f.name), f"{prefix}{f.name}."))
        return out
    key = prefix.rstrip(".")
    if isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            out.update(_flat(item, f"{key}.{i}."))
    elif isinstance(value, bool) or isinstance(value, (int, str)) or value is None:
        out[key] = value
    elif isinstance(value, float):
        out[key] = None if math.isnan(value) else value
    return out


@dataclass(frozen=True)
class Question:
    """One question of a kind: `answer` returns its record (None: the study's cells cannot speak to
    it, so it is not asked), `render` words it, `details` gives the lines beneath it from the same
    record (by default every field of it: collect.details.record_details)."""

    id: StrEnum
    title: str
    tables: tuple[str, ...]
    plots: tuple[str, ...]
    answer: Callable[[Tables], Optional[Record]]
    render: Callable[[Any], str]
    details: Callable[[Any], tuple[str, ...]] = record_details


@dataclass(frozen=True)
class Answered:
    """A question with its record, the paragraph, and its details (both from the record)."""

    question: Question
    record: Record
    text: str
    details: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return str(self.question.id)

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.id, "title": self.question.title, "text": self.text,
                "numbers": self.record.numbers(), "missing": list(self.record.missing),
                "evidence": [e.to_dict() for e in self.record.evidence],
                "tables": list(self.question.tables), "details": list(self.details)}


def answer_all(questions: Sequence[Question], tables: Tables) -> tuple[Answered, ...]:
    """Each question the tables speak to, in the declared order: its record, paragraph and details."""
    out = []
    for q in questions:
        record = q.answer(tables)
        if record is not None:
            out.append(Answered(q, record, q.render(record), q.details(record)))
    return tuple(out)


def values(m: Measured) -> tuple[float, ...]:
    """A figure's per-repeat values (its median alone where the table kept none)."""
    return m.values or (m.value,)


def against(new: Measured, base: Measured) -> Verdict:
    """The verdict on `new` against `base` (collect.verdict over their per-repeat values: the ratio
    new / base, its interval, and direction +1 when new is above base beyond the threshold), with
    the cells of each side (collect.settle); where a value is 0 (a diverged run's accuracy: no
    ratio's interval), collect.verdict.at_zero."""
    a, b = values(base), values(new)
    return with_sides(at_zero(a, b) if 0 in a + b else verdict(a, b), new, base)


J = TypeVar("J", Verdict, Difference)


def with_sides(judged: J, new: Measured, base: Measured) -> J:
    """The verdict on `new` against `base` with what it compared (collect.sides): each side's values as
    the verdict read them (so `new` and `base` on the verdict's scale) and their cells (collect.settle)."""
    return dataclasses.replace(judged, sides=Sides(values(base), values(new), base.cells, new.cells))


@dataclass(frozen=True)
class Words:
    """The words for each outcome of a verdict on new against base: below, above, equivalent,
    inconclusive (with repeats: the spread does not decide)."""

    below: str
    above: str
    same: str = "not distinguishable from"
    unsure: str = "not clearly different from"


def says(v: Verdict | Difference, words: Words) -> str:
    """The word the verdict chose: beyond (below or above, by direction), equivalent, inconclusive.
    With one run on a side the verdict is inconclusive by rule: the word then says which way the one
    run went (or `same` within the threshold), and the answer says once that no spread was measured
    (`one_run_note`)."""
    if v.outcome == "beyond":
        return words.below if v.direction < 0 else words.above
    if v.outcome == "equivalent":
        return words.same
    if v.one_run:
        way = leaning(v)
        return words.same if way == 0 else words.below if way < 0 else words.above
    return words.unsure


ONE_RUN = "figures without a range are single runs"


def one_run_note(*verdicts: Optional[Verdict | Difference]) -> list[str]:
    """What the answer says once where a comparison rests on single runs: its words are the runs' as
    measured, not a verdict over a spread."""
    if any(v is not None and v.one_run for v in verdicts):
        return [ONE_RUN]
    return []


def words_in(text: str) -> int:
    return len(text.split())
