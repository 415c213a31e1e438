"""What `status` shows of a study at any size (pure): counts per state and per array, the cells
that need a look, and the cells a user asks for (--state, --grep).

A cell needs a look when it ended without an answer (failed, timeout, cancelled), when nothing
says what became of it (unknown), when this machine could not run it (skipped), when SLURM has
kept it pending longer than its array's time limit (it could have run by then), or while it
runs. Cells queued for the local executor wait for their GPUs: not a reason to look.
A study of up to SMALL_STUDY cells lists every cell, as it always did.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Optional

from orchestrator.plan.plan import Plan
from results_format.states import CellState
from orchestrator.watch.status import CellRow

SMALL_STUDY = 30  # up to this many cells, status lists every cell
LOOK_ROWS = 15  # cells listed by the summary, at most: with its counts and notes, a screenful
LOOK_ORDER = (CellState.FAILED, CellState.TIMEOUT, CellState.CANCELLED, CellState.UNKNOWN, CellState.SKIPPED,
              CellState.PENDING, CellState.RUNNING)  # the most urgent first


def state_named(text: str) -> CellState:
    """A state as a user types it ("failed", "not-submitted", "not_submitted"); ValueError lists them."""
    try:
        return CellState(text.strip().lower().replace("-", " ").replace("_", " "))
    except ValueError:
        names = ", ".join(s.value.replace(" ", "-") for s in CellState)
        raise ValueError(f"unknown state {text!r}; one of {names}") from None


def overdue(row: CellRow, plan: Plan) -> bool:
    """Pending in SLURM for longer than its array's time limit."""
    return row.state == CellState.PENDING and row.waited_s is not None \
        and row.waited_s > 60 * plan.array_of(row.cell_id).shape.time_min


def needs_look(row: CellRow, plan: Plan) -> bool:
    if row.state == CellState.PENDING:
        return overdue(row, plan)
    return row.state in LOOK_ORDER


def look_rows(rows: Iterable[CellRow], plan: Plan) -> list[CellRow]:
    """The cells that need a look, the most urgent first (LOOK_ORDER), each state in plan order."""
    rank = {state: i for i, state in enumerate(LOOK_ORDER)}
    return sorted((r for r in rows if needs_look(r, plan)), key=lambda r: rank[r.state])


def matching(rows: Iterable[CellRow], states: Sequence[CellState] = (), grep: Optional[str] = None) -> list[CellRow]:
    """The cells in one of `states` (all, when none is given) whose id, label, state, job, node or
    detail holds `grep` (any case; plain text, no pattern)."""
    wanted = set(states)
    needle = (grep or "").lower()
    return [r for r in rows if (not wanted or r.state in wanted)
            and (not needle or needle in f"{r.cell_id}\n{r.label}\n{r.state}\n{r.job_id}\n{r.node}\n{r.detail}".lower())]


def state_counts(rows: Iterable[CellRow]) -> dict[str, int]:
    """How many cells are in each state, in the states' order, those with none left out."""
    counts = Counter(r.state for r in rows)
    return {state.value: counts[state] for state in CellState if counts[state]}


def array_counts(rows: Iterable[CellRow], plan: Plan) -> dict[str, dict[str, int]]:
    """Per array (in plan order): how many of its cells are in each state."""
    counts = Counter((plan.array_of(r.cell_id).name, r.state) for r in rows)
    return {a.name: {s.value: counts[(a.name, s)] for s in CellState if counts[(a.name, s)]} for a in plan.arrays}


def look_counts(looks: Sequence[CellRow]) -> str:
    """"12 failed, 2 pending longer than their time limit, 3 running"."""
    counts = Counter(r.state for r in looks)
    words = {CellState.PENDING: "pending longer than their time limit"}
    return ", ".join(f"{counts[s]:,} {words.get(s, s.value)}" for s in LOOK_ORDER if counts[s])
