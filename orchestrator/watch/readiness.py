"""Which answers are ready while the queue drains (pure): per question of the study's kind, the states
of the cells it reads, in one line. A kind says what each question reads in `jobs.<kind>.questions`
(where it has one: `needs(cells, counts)` and `signature(cell)`, torch- and pandas-free).

    ready        every cell it reads has its answer (done, or oom: the batch did not fit)
    provisional  some have: `collect` answers from those, the others still to come
    waiting      none has yet: how many are running, queued, not submitted
    blocked      one ended without an answer (failed, timed out, cancelled): the command that retries it

Cells alike in what the questions read are asked about once: 100,000 cells hold a few hundred kinds
of cell, so the lines cost one pass over the cells.
"""
from __future__ import annotations

import importlib
import importlib.util
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jobs.core.kinds import PACKAGES
from results_format.states import CellState
from orchestrator.plan.plan import Plan
from orchestrator.watch.status import CellRow

READY, PROVISIONAL, WAITING, BLOCKED = "ready", "provisional", "waiting", "blocked"


@dataclass(frozen=True)
class Readiness:
    question: str
    states: Counter[CellState]  # the cells it reads, by state

    @property
    def cells(self) -> int:
        return sum(self.states.values())

    @property
    def answered(self) -> int:
        return sum(n for s, n in self.states.items() if s.is_final)

    @property
    def failed(self) -> int:
        return sum(n for s, n in self.states.items() if s.is_retryable)

    @property
    def word(self) -> str:
        if self.failed:
            return BLOCKED
        return READY if self.answered == self.cells else PROVISIONAL if self.answered else WAITING


def readiness(plan: Plan, states: Mapping[str, CellState]) -> list[Readiness]:
    """Each question the study's cells are asked, in its kind's order, with its cells' states (by id;
    a cell without one is unknown)."""
    out = []
    for kind, module in _kinds(plan):
        groups: dict[tuple, tuple[Any, Counter[CellState]]] = {}
        for cell_id, cell in zip(plan.cell_ids, plan.cells, strict=True):
            if cell.kind == kind:
                key = module.signature(cell)
                group = groups.get(key) or groups.setdefault(key, (cell, Counter()))
                group[1][states.get(cell_id, CellState.UNKNOWN)] += 1
        cells = [c for c, _ in groups.values()]
        for question, reads in module.needs(cells, [sum(n.values()) for _, n in groups.values()]).items():
            counted: Counter[CellState] = Counter()
            for cell, count in groups.values():
                if reads(cell):
                    counted.update(count)
            if counted:
                out.append(Readiness(question, counted))
    return out


def _kinds(plan: Plan) -> list[tuple[str, Any]]:
    """The kinds of the plan's cells that say what their questions read, with that module."""
    found = []
    for kind in dict.fromkeys(c.kind for c in plan.cells):
        name = f"{PACKAGES[kind]}.questions"
        if importlib.util.find_spec(name) is not None:
            found.append((kind, importlib.import_module(name)))
    return found


# The words a line counts cells by, in this order: pending is queued by SLURM, skipped not run here.
WORDS = {CellState.RUNNING: "running", CellState.QUEUED: "queued", CellState.PENDING: "queued",
         CellState.NOT_SUBMITTED: "not submitted", CellState.SKIPPED: "skipped here", CellState.UNKNOWN: "unknown",
         CellState.FAILED: "failed", CellState.TIMEOUT: "timed out", CellState.CANCELLED: "cancelled"}


def _counted(states: Counter[CellState], which) -> str:
    """"3 running, 4 queued": the states `which` keeps, by WORDS (pending with queued)."""
    counts: Counter[str] = Counter()
    for state, word in WORDS.items():
        if which(state) and states.get(state):
            counts[word] += states[state]
    return ", ".join(f"{n:,} {word}" for word, n in counts.items())


def line(r: Readiness, retry: str) -> str:
    """"A.Q2: provisional, from 20 of 27 cells; waiting on 3 running, 4 queued"."""
    rest = _counted(r.states, lambda s: not s.is_final and not s.is_retryable)
    if r.word == BLOCKED:
        why = _counted(r.states, lambda s: s.is_retryable)
        return f"{r.question}: blocked, {why} of its {r.cells:,} cells; retry: {retry}"
    if r.word == READY:
        return f"{r.question}: ready ({r.cells:,} cells)"
    if r.word == WAITING:
        return f"{r.question}: waiting on {r.cells:,} cells ({rest})"
    return f"{r.question}: provisional, from {r.answered:,} of {r.cells:,} cells; waiting on {rest}"


def status_lines(plan: Plan, rows: Sequence[CellRow]) -> list[str]:
    """What `status` ends with: a line per question."""
    found = readiness(plan, {r.cell_id: r.state for r in rows})
    if not found:
        return []
    retry = f"python -m orchestrator submit --retry-failed --results {plan.results_dir}"
    return ["Answers:"] + ["  " + line(r, retry) for r in found]


def provisional_line(plan: Plan, states: Mapping[str, CellState]) -> str:
    """What `collect` says of answers made from some of their cells: "provisional answers (from some of
    their cells): A.Q2 (20 of 27 cells), A.Q4.1 (6 of 7 cells, 1 failed); `status` says which are still to
    come; `submit --retry-failed` reruns those that ended without a result"; "" when every answer has
    all its cells. A cell that failed is said as such: nothing is coming for it until it is retried."""
    partial = [r for r in readiness(plan, states) if r.word != READY]
    if not partial:
        return ""
    shown = ", ".join(f"{r.question} ({r.answered:,} of {r.cells:,} cells"
                      + (f", {_counted(r.states, lambda s: s.is_retryable)}" if r.word == BLOCKED else "") + ")"
                      for r in partial)  # every one: a question list is short, and none is hidden
    coming = "; `status` says which are still to come" if any(r.word != BLOCKED for r in partial) else ""
    retry = "; `submit --retry-failed` reruns those that ended without a result" if any(
        r.word == BLOCKED for r in partial) else ""
    return f"provisional answers (from some of their cells): {shown}{coming}{retry}"
