"""plan: expand the study into cells and arrays; write plan.json, study.toml, sbatch/*.sh."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from rich.console import Console

from collect.fit import print_grids
from orchestrator.budget import budget
from orchestrator.commands import display
from orchestrator.slurm import slurm_client
from jobs.core.layout import SBATCH_DIR
from orchestrator.local.machine import not_here, this_machine
from orchestrator.plan.cluster import packing, packing_text
from orchestrator.plan.plan import ArrayPlan, Plan, build_plan, check_results_path, install_plan
from orchestrator.slurm.sbatch import render_sbatch
from orchestrator.plan.study import DEFAULT_STUDY, load_study
from orchestrator.submit import EXECUTORS


def register(verbs, common) -> None:
    p = verbs.add_parser("plan", parents=[common], help="expand the study into cells and arrays; write the plan")
    p.add_argument("--cells", action="store_true", help="list every cell too")
    p.add_argument("--profile", help="cluster profile: a name (e.g. greene) or a .toml path; wins over the "
                                     "study's `profile`")
    p.add_argument("--sbatch", action="store_true", help="print each array's sbatch text, exactly as written")
    p.add_argument("--executor", default="auto", choices=EXECUTORS,
                   help="local (auto: where there is no sbatch): also say which cells this machine cannot run, "
                        "which `submit` will skip")
    p.set_defaults(run=run)


def run(args, console: Console) -> int:
    study = load_study(args.study or DEFAULT_STUDY, profile=args.profile)
    results_dir = Path(args.results) if args.results else Path("runs") / study.name
    check_results_path(results_dir.absolute())
    plan = build_plan(study, results_dir, Path.cwd())
    sbatch_dir = results_dir / SBATCH_DIR
    texts = {array.name: packed_sbatch(plan, array) for array in plan.arrays}
    path = install_plan(plan, study.source, texts)
    estimates = budget.plan_estimates(plan)
    print_grids(console, [display.plan_grid(plan, estimates)])
    if budget.plan_budget_text(plan, estimates):
        console.print(budget.plan_budget_text(plan, estimates))
    if plan.cluster.pack > 1:
        console.print(packing_lines(plan), markup=False, highlight=False)
    notes = display.cpu_notes(plan) if not this_machine().gpus else None
    if notes is not None:
        console.print(notes)
    if args.executor == "local" or (args.executor == "auto" and not slurm_client.on_slurm()):
        say_what_runs_here(plan, console)
    if args.cells and len(plan.cells) > display.RICH_ROWS:
        console.out(display.cells_text(plan, estimates, console.width), highlight=False)  # plain text: fast at any length
    elif args.cells:
        print_grids(console, [display.cells_grid(plan, estimates)])
    if args.sbatch:
        for name, text in texts.items():
            console.rule(str(sbatch_dir / f"{name}.sh"))
            console.print(text, markup=False, highlight=False, soft_wrap=True, end="")
    console.print(f"plan: {path}\nsbatch scripts: {sbatch_dir}/\nnext: python -m orchestrator submit"
                  + (f" --study {args.study}" if args.study not in (None, DEFAULT_STUDY) else ""))
    return 0


def packed_sbatch(plan: Plan, array: ArrayPlan) -> str:
    """The array's sbatch text as `submit` sends it for all its cells, packed as [cluster] pack says."""
    packed = packing(len(array.cell_ids), plan.cluster.pack, array.shape.time_min, plan.cluster.max_time_min)
    return render_sbatch(plan, array, packed.tasks, shape=dataclasses.replace(array.shape, time_min=packed.time_min))


def packing_lines(plan: Plan) -> str:
    """What [cluster] pack makes of each array on SLURM (submit --pack N says it for its own N)."""
    lines = [f"[cluster] pack = {plan.cluster.pack}: on SLURM each array task runs its cells one after another"]
    for array in plan.arrays:
        packed = packing(len(array.cell_ids), plan.cluster.pack, array.shape.time_min, plan.cluster.max_time_min)
        lines.append(f"  {array.name}: {packing_text(packed, array.shape.time_min)}")
    return "\n".join(lines)


def say_what_runs_here(plan: Plan, console: Console) -> None:
    """How many cells this machine runs under the local executor, and why it skips the others."""
    machine = this_machine()
    skipped = not_here(plan.cells, machine)
    count = sum(map(len, skipped.values()))
    console.print(f"local executor: this machine ({display.machine_text(machine)}) runs {len(plan.cells) - count} "
                  f"of {len(plan.cells)} cells" + (f"; `submit` will skip {count}:" if count else ""),
                  markup=False, highlight=False)
    if skipped:
        console.print(display.skipped_lines(skipped))
