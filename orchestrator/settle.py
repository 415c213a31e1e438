"""`submit --settle`: the extra repeats that settle the answers' inconclusive comparisons (pure, but
the cost: orchestrator.budget). collect.settle says which comparisons and how many runs per side
the rule asks (collect.settle_rule: a pilot to 3 runs a side, then one sized second stage, final);
here those runs become new cells of the plan: each a repeat of a side's configuration (the same
cell but its `repeat`, so a new cell id and its own seed: jobs.core.cell.run_seed), numbered after
the configuration's highest repeat, from collect.settle_rule.STAGE_TWO for the second stage. A
cell already planned counts as a run, whatever its state (a failed one is retried, not replaced:
`submit --retry-failed`); nothing measured is run again. A comparison whose two sides both hold
second-stage repeats is final: no more rounds.
"""
from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from collect.questions import Answered
from collect.settle import SECOND_ROUND, Undecided, undecided
from collect.sides import compared
from collect.settle_rule import DEFAULT_MAX_REPEATS, STAGE_TWO
from collect.verdict import Verdict
from jobs.core.cell import StudyCell
from orchestrator.budget import budget
from orchestrator.budget.estimate import Estimate
from orchestrator.plan.plan import Plan, group_arrays


@dataclass(frozen=True)
class Config:
    """A configuration of the plan: its cells (repeats of one another), the highest repeat number,
    and whether it holds second-stage repeats."""

    first: StudyCell  # its first cell in plan order: the new repeats copy it
    planned: int
    top: int
    second: bool


@dataclass(frozen=True)
class Step:
    """One comparison's part of the settle plan: the runs per side its round asks, `final` (its
    second stage is planned: its next verdict is its last), `capped` (the rule asked for more than
    --max-repeats)."""

    undecided: Undecided
    a: Config
    b: Config
    runs: int  # runs per side this round brings each side to (at most --max-repeats)
    final: bool = False
    capped: bool = False


@dataclass(frozen=True)
class SettlePlan:
    steps: tuple[Step, ...]  # every inconclusive comparison with cells in the plan
    cells: tuple[StudyCell, ...]  # the new repeats, in the order of the steps
    max_repeats: int
    unit: str = "GPU"  # "CPU" where the answers' runs ran on CPUs: their hours are no GPU's

    @property
    def configurations(self) -> int:
        return len({_key(c) for c in self.cells})


def _key(cell: StudyCell) -> tuple:
    """A configuration: its kind and its cell's fields but its repeat."""
    values = _but_repeat(type(cell))(cell)
    try:
        hash(values)
    except TypeError:  # a list among them
        values = tuple(map(_hashable, values))
    return (type(cell), values)


@functools.cache
def _but_repeat(cls: type) -> Callable[[Any], tuple]:
    """One getter of a cell class's fields but `repeat` (100,000 cells: a tenth of a second)."""
    names = [f.name for f in dataclasses.fields(cls) if f.name != "repeat"]
    getter = operator.attrgetter(*names)
    return lambda cell: getter(cell) if len(names) > 1 else (getter(cell),)


def _hashable(value: Any) -> Any:
    return tuple(map(_hashable, value)) if isinstance(value, list) else value


def configs(plan: Plan, cell_ids: Iterable[str]) -> dict[str, Config]:
    """The configuration of each given cell (by its id), from one pass over the plan's cells."""
    planned = set(plan.cell_ids)
    wanted = {cid: _key(plan.cell(cid)) for cid in cell_ids if cid in planned and _repeats(plan.cell(cid))}
    keys = set(wanted.values())
    found: dict[tuple, list[StudyCell]] = {}
    for cell in plan.cells:
        if _repeats(cell):
            key = _key(cell)
            if key in keys:
                found.setdefault(key, []).append(cell)
    out = {}
    for cid, key in wanted.items():
        cells = found[key]
        numbers = [c.repeat for c in cells]  # type: ignore[attr-defined]
        out[cid] = Config(cells[0], len(cells), max(numbers), max(numbers) >= STAGE_TWO)
    return out


def _repeats(cell: StudyCell) -> bool:
    """A kind whose cells repeat by their `repeat` field (every kind here: others cannot be settled)."""
    return _has_repeat(type(cell))


@functools.cache
def _has_repeat(cls: type) -> bool:
    return "repeat" in {f.name for f in dataclasses.fields(cls)}


def settle_plan(plan: Plan, found: Sequence[Undecided], max_repeats: int = DEFAULT_MAX_REPEATS) -> SettlePlan:
    """The new repeats for `found` (collect.settle.undecided): per configuration, the most any of its
    comparisons asks, capped at `max_repeats` runs in all; comparisons whose cells are not in the
    plan are left out."""
    by_cell = configs(plan, {u.a_cells[0] for u in found} | {u.b_cells[0] for u in found})
    steps, wanted, second = [], dict[tuple, int](), set[tuple]()
    for u in found:
        a, b = by_cell.get(u.a_cells[0]), by_cell.get(u.b_cells[0])
        if a is None or b is None:
            continue
        if a.second and b.second:
            steps.append(Step(u, a, b, 0, final=True))
            continue
        runs = min(u.runs, max_repeats)
        steps.append(Step(u, a, b, runs, capped=u.runs > max_repeats))
        for side in (a, b):
            key = _key(side.first)
            wanted[key] = max(wanted.get(key, 0), runs)
            if u.round == SECOND_ROUND:
                second.add(key)
    return SettlePlan(tuple(steps), tuple(_new_cells(steps, wanted, second)), max_repeats)


def _new_cells(steps: Sequence[Step], wanted: Mapping[tuple, int], second: set[tuple]) -> list[StudyCell]:
    cells, done = [], set()
    for step in steps:
        for side in (step.a, step.b):
            key = _key(side.first)
            if key in done or step.final:
                continue
            done.add(key)
            start = max(side.top + 1, STAGE_TWO) if key in second else side.top + 1
            cells += [dataclasses.replace(side.first, repeat=start + i)  # type: ignore[type-var]
                      for i in range(max(wanted[key] - side.planned, 0))]
    return cells


def planned_runs(plan: Plan, settle: SettlePlan) -> set[str]:
    """The ids of every planned cell of the configurations the steps compare: those without a job
    (an sbatch refused, or a submit killed once the plan had grown) are due with the new repeats."""
    keys = {_key(side.first) for step in settle.steps for side in (step.a, step.b)}
    return {cell.cell_id for cell in plan.cells if _repeats(cell) and _key(cell) in keys}


def kept_repeats(old: Plan, new: Plan) -> list[StudyCell]:
    """The repeats `submit --settle` added to the old plan (cells the study file does not list) of a
    configuration the new plan still holds: planning again keeps them, so their runs stay in the answers."""
    listed = set(new.cell_ids)
    configurations = {_key(cell) for cell in new.cells if _repeats(cell)}
    return [cell for cell in old.cells if cell.cell_id not in listed and _repeats(cell)
            and cell.repeat > 0 and _key(cell) in configurations]  # type: ignore[attr-defined]


def extended(plan: Plan, cells: Sequence[StudyCell]) -> Plan:
    """The plan with `cells` added at its end, arrays grouped again (an array keeps its name and its
    cells' order: new cells join the end of their shape's array)."""
    every = plan.cells + tuple(cells)
    return dataclasses.replace(plan, cells=every, arrays=group_arrays(every, plan.cluster))


def gpu_hours(settle: SettlePlan, estimates: Mapping[str, Estimate]) -> float:
    return sum(estimates[c.cell_id].gpu_hours for c in settle.cells)


def plan_for(plan: Plan, answers: Sequence[Answered], max_repeats: int = DEFAULT_MAX_REPEATS
             ) -> tuple[SettlePlan, Plan, dict[str, Estimate]]:
    """The settle plan of these answers, the plan it extends, and every cell's GPU-hour estimate
    in it (the new ones from the measured pace of finished cells of their shape: orchestrator.budget.estimate)."""
    found = undecided(answers)
    settle = dataclasses.replace(settle_plan(plan, found, max_repeats), unit=_unit(answers, found))
    bigger = extended(plan, settle.cells)
    return settle, bigger, budget.plan_estimates(bigger) if settle.cells else {}


def _unit(answers: Sequence[Answered], found: Sequence[Undecided]) -> str:
    """CPU where the runs compared ran on CPUs (the records' `cpu` of the answers with a comparison to settle:
    the results' own devices, wherever they are collected), so the new repeats' hours are no GPU's."""
    asked = {u.question for u in found}
    flags = [bool(a.record.cpu) for a in answers if a.id in asked and hasattr(a.record, "cpu")]
    return "CPU" if flags and all(flags) else "GPU"


def elsewhere(settle: SettlePlan, executor: str, gpus_here: int) -> str:
    """Why the new repeats cannot run here, or "": off-cluster they run on this machine, and a
    verdict would pool them with runs of another device (CPU runs beside H200 ones: "0.007 s
    (0.006-8.00 s over 3 runs)"). Repeats run where their configuration ran."""
    here = "GPU" if gpus_here else "CPU"
    if executor != "local" or not settle.cells or settle.unit == here:
        return ""
    return (f"the runs to settle ran on {settle.unit}s and this machine would run their repeats on "
            f"{'its GPUs' if gpus_here else 'its CPU'}: one verdict cannot pool two devices; run `submit --settle` "
            "where they ran (on the cluster's login node: --executor slurm)")


FEW_MORE = 3  # comparisons past `lines`' limit that are listed rather than counted


def lines(settle: SettlePlan, estimates: Mapping[str, Estimate], limit: int = 0) -> list[str]:
    """The summary, then one indented line per comparison (the first `limit` of them, the rest counted;
    0: all)."""
    added: dict[tuple, tuple[int, float]] = {}  # per configuration: its new runs and their GPU-hours
    for cell in settle.cells:
        n, hours = added.get(_key(cell), (0, 0.0))
        added[_key(cell)] = (n + 1, hours + estimates[cell.cell_id].gpu_hours)
    # a cut hides at least FEW_MORE lines: "... and 1 more" would hide what one line could show
    shown = settle.steps[:limit] if limit and len(settle.steps) >= limit + FEW_MORE else settle.steps
    out = [summary(settle, estimates) + (":" if shown else "")]
    out += ["  " + step_line(step, added.get(_key(step.a.first), (0, 0.0)), added.get(_key(step.b.first), (0, 0.0)),
                             settle.unit) for step in shown]
    if len(settle.steps) > len(shown):
        out.append(f"  ... and {len(settle.steps) - len(shown):,} more: `submit --settle --dry-run` lists them all")
    return out


UNBOUNDED = 10.0  # an interval whose ends are further apart than this factor bounds nothing worth printing


def step_line(step: Step, a: tuple[int, float], b: tuple[int, float], unit: str = "GPU") -> str:
    """"A.Q2, speedup T1/TN of ddp-2g-b32-e2 against single-1g-b32-e2: 0.93x (0.82-1.05, 3+3 runs): second
    stage, from 3 to 9 runs a side, about 0.12 GPU-h"; a difference as "+1.50 (-0.20 to +3.20, 3+3 runs)".
    a, b: each side's new runs and their hours (a side shared by several comparisons gets the most any of
    them asks, once: the line then says so)."""
    u, v = step.undecided, step.undecided.verdict
    name, inverted = compared(u.field, v)
    if isinstance(v, Verdict):
        low, high, centre = (1 / v.high, 1 / v.low, 1 / v.ratio) if inverted else (v.low, v.high, v.ratio)
        spread = "too few runs to bound it" if high > UNBOUNDED * low else f"{low:.2f}-{high:.2f}"
        centre_text = f"{centre:.2f}x"
    else:  # a difference, in its values' unit (the answers': points), signed
        centre_text, spread = f"{v.delta:+.2f}", f"{v.low:+.2f} to {v.high:+.2f}"
    spread = "no spread" if v.one_run else spread
    # the count the answer and its details give (the verdict's), beside this round's
    need = (f" (as measured, about {v.repeats_needed} runs a side would settle it)"
            if v.repeats_needed and v.repeats_needed > step.runs else "")
    head = (f"{u.question}, {name} of {step.b.first.label} against {step.a.first.label}: {centre_text} "
            f"({spread}, {v.n_b}+{v.n_a} runs){need}")
    if step.final:
        return f"{head}: final, its second stage is planned"
    capped = f" (capped by --max-repeats; the rule asks {u.runs} runs a side to settle it)" if step.capped else ""
    if not a[0] and not b[0]:
        return f"{head}: {u.round} to {step.runs} runs a side{capped}, planned already"
    (b0, b1), (a0, a1) = (step.b.planned, step.b.planned + b[0]), (step.a.planned, step.a.planned + a[0])
    to = (f"from {b0} to {b1} runs a side" if (b0, b1) == (a0, a1)
          else f"from {b0} to {b1} runs of the first and from {a0} to {a1} of the second")
    shared = (f" (this comparison asks {step.runs}; another comparison of the same configurations asks more)"
              if max(a1, b1) > step.runs else "")
    return f"{head}: {u.round}, {to}{capped}{shared}, about {budget.hours(a[1] + b[1])} {unit}-h"


def summary(settle: SettlePlan, estimates: Mapping[str, Estimate]) -> str:
    """"3 answers leave comparisons undecided (their runs spread too wide to tell); `submit --settle` adds 14
    runs of 5 configurations, about 0.40 GPU-h"."""
    answers = len({s.undecided.question for s in settle.steps})
    if not settle.steps:
        return "no answer leaves a comparison undecided that more runs could settle"
    final = sum(s.final for s in settle.steps)
    tail = f"; {final} comparison(s) are final after their second stage" if final else ""
    head = (f"{answers} answer{'s leave comparisons' if answers > 1 else ' leaves a comparison'} undecided (their runs "
            "spread too wide to tell)")
    if not settle.cells:
        return f"{head}; the runs the rule asks for are planned already{tail}"
    return (f"{head}; `submit --settle` adds {len(settle.cells)} runs of {settle.configurations} configurations, "
            f"about {budget.hours(gpu_hours(settle, estimates))} {settle.unit}-h{tail}")
