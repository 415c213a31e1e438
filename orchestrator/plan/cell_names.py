"""Cells named on the command line and on screen: by id, unique id prefix, label, or name.

A cell's name is its label, and where several cells of the plan share that label (the repeats
of a configuration, or cells the label does not tell apart) "#k": the k-th of them in plan order,
from 1 (`single-1g-b32-e2#2`). Every verb that shows a cell shows this name; every verb that takes
one selects by it."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from jobs.core.cell import StudyCell
from orchestrator.errors import PlanError
from orchestrator.plan.plan import Plan

SHOWN = 10  # names listed when a name matches several cells


def cell_names(cells: Sequence[StudyCell]) -> list[str]:
    """Each cell's name, in order (see the module's docstring): unique within `cells`."""
    labels = [cell.label for cell in cells]
    shared = {label for label, n in Counter(labels).items() if n > 1}
    seen: Counter[str] = Counter()
    names = []
    for label in labels:
        if label in shared:
            seen[label] += 1
            label = f"{label}#{seen[label]}"
        names.append(label)
    return names


def select_cells(plan: Plan, names: list[str], one: bool = False) -> list[str]:
    """Cell ids for each name: a whole id, a cell's name (`label#k`), a label (every cell of it), or
    a unique id prefix (4+ characters). `one`: a name that matches several cells is refused with
    theirs (`logs` shows one cell)."""
    shown = cell_names(plan.cells)
    by_name = dict(zip(shown, plan.cell_ids, strict=True))
    name_of = dict(zip(plan.cell_ids, shown, strict=True))
    chosen: list[str] = []
    for name in names:
        if name in name_of or name in by_name:
            matches = [by_name.get(name, name)]
        else:
            matches = [cid for c, cid in zip(plan.cells, plan.cell_ids, strict=True) if c.label == name]
        if not matches and len(name) >= 4:
            matches = [cid for cid in plan.cell_ids if cid.startswith(name)]
        if not matches:
            raise PlanError(f"no cell of study {plan.study} matches {name!r}; `status` lists cell ids and names")
        if one and len(matches) > 1:
            listed = ", ".join(name_of[cid] for cid in matches[:SHOWN])
            more = f" (and {len(matches) - SHOWN} more)" if len(matches) > SHOWN else ""
            raise PlanError(f"{name!r} matches {len(matches)} cells: name one of {listed}{more}")
        chosen += [m for m in matches if m not in chosen]
    return chosen
