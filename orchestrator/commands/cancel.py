"""cancel CELL... | --all: cancel cells' live jobs (one scancel for all of them)."""
from __future__ import annotations

from rich.console import Console

from results_format.text import visible

from orchestrator.commands.common import planned, print_warnings
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
    report = cancel(plan, chosen)
    cancelled, untied = report.cancelled, report.untied
    idle = len(chosen) - len(cancelled) - len(untied)
    names = dict(zip(plan.cell_ids, cell_names(plan.cells), strict=True))
    listed = ", ".join(f"{names[cid]} ({cid})" for cid in cancelled)
    console.print(visible((f"cancelled {len(cancelled)} cell(s)" + (f": {listed}" if len(cancelled) <= 10 else "")
                           if cancelled else "cancelled nothing") + (f"; {idle} had no live job" if idle else "")),
                  markup=False, highlight=False)
    if untied:
        cell, job = untied[0]
        print_warnings([f"left {len(untied)} cell(s)' jobs alone ({names.get(cell, cell)}: job {job}): nothing ties "
                        "them to this study (their registry line has no token, or SLURM names the job otherwise); "
                        "`scancel` them yourself if they are yours"])
    return 0
