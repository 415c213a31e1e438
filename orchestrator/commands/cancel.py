"""cancel CELL... | --all: cancel cells' live jobs (one scancel for all of them)."""
from __future__ import annotations

from rich.console import Console

from results_format.text import visible

from orchestrator.commands.common import planned
from orchestrator.cancel import cancel
from orchestrator.plan.cell_names import cell_names, select_cells
from orchestrator.errors import UserError


def register(verbs, common) -> None:
    p = verbs.add_parser("cancel", parents=[common], help="cancel cells' queued or running jobs, or --all")
    p.add_argument("cells", nargs="*", help="cells' names (`label#2` among repeats), ids, unique id prefixes, or labels "
                                                "(every cell of it; `status` lists them)")
    p.add_argument("--all", action="store_true", help="every cell of the study")
    p.set_defaults(run=run)


def run(args, console: Console) -> int:
    plan = planned(args)
    if bool(args.cells) == bool(args.all):
        raise UserError("name the cells to cancel (names, ids, prefixes or labels), or pass --all for the whole study")
    chosen = list(plan.cell_ids) if args.all else select_cells(plan, args.cells)
    cancelled = cancel(plan, chosen)
    names = dict(zip(plan.cell_ids, cell_names(plan.cells), strict=True))
    listed = ", ".join(f"{names[cid]} ({cid})" for cid in cancelled)
    console.print(visible(f"cancelled {len(cancelled)} cell(s)" + (f": {listed}" if 0 < len(cancelled) <= 10 else "")
                          + (f"; {len(chosen) - len(cancelled)} had no live job" if len(chosen) > len(cancelled) else "")),
                  markup=False, highlight=False)
    return 0
