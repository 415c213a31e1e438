"""Cells named on the command line: by id, unique id prefix or label."""
from __future__ import annotations

from orchestrator.errors import PlanError
from orchestrator.plan.plan import Plan


def select_cells(plan: Plan, names: list[str]) -> list[str]:
    """Cell ids for each name: a whole id, a unique id prefix (4+ characters), or a label (all that match)."""
    chosen: list[str] = []
    for name in names:
        matches = [cid for c, cid in zip(plan.cells, plan.cell_ids, strict=True) if cid == name or c.label == name]
        if not matches and len(name) >= 4:
            matches = [cid for cid in plan.cell_ids if cid.startswith(name)]
        if not matches:
            raise PlanError(f"no cell of study {plan.study} matches {name!r}; `status` lists cell ids and labels")
        chosen += [m for m in matches if m not in chosen]
    return chosen
