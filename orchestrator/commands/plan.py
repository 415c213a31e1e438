"""plan: expand the study into cells and arrays; write plan.json, study.toml, sbatch/*.sh."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Optional

from rich.console import Console

from collect.fit import print_grids
from orchestrator.budget import budget
from orchestrator.budget.cost import study_cost
from orchestrator.commands import display
from orchestrator.commands.common import print_warnings
from orchestrator.slurm import slurm_client
from jobs.core.layout import PLAN_FILE, SBATCH_DIR
from orchestrator.local.machine import not_here, this_machine
from orchestrator.plan.current_study import POINTER, ROOT, write_current
from orchestrator.plan.cluster import packing, packing_text
from orchestrator.plan import private_dir
from orchestrator.errors import PlanError
from orchestrator.plan.plan import ArrayPlan, Plan, build_plan, check_results_path, install_plan, read_plan
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
                   help="where the cells will run, as plan words it: slurm (auto: where sbatch is on the PATH "
                        "or a profile is given) says the partition, GPUs and image; local says which cells this "
                        "machine cannot run (`submit` skips them) and what a CPU leaves out")
    p.set_defaults(run=run)


def run(args, console: Console) -> int:
    study = load_study(args.study or DEFAULT_STUDY, profile=args.profile)
    results_dir = Path(args.results) if args.results else ROOT / study.name
    check_results_path(results_dir.absolute())
    print_warnings(private_dir.check(results_dir))
    plan = build_plan(study, results_dir, Path.cwd())
    if earlier := earlier_plan(results_dir):  # its settle repeats are kept
        from orchestrator import settle  # pandas: only where a plan is replaced

        plan = settle.extended(plan, settle.kept_repeats(earlier, plan))
    sbatch_dir = results_dir / SBATCH_DIR
    texts = {array.name: packed_sbatch(plan, array) for array in plan.arrays}
    path = install_plan(plan, study.source, texts)
    try:
        write_current(results_dir, plan.study, plan.created_at)
    except OSError as exc:  # e.g. another user's pointer in a shared runs/ with the sticky bit
        print_warnings([f"{plan.study} is planned but not the current study ({ROOT / POINTER}: {exc.strerror}); "
                        f"pass --study {plan.study} to the other verbs"])
    estimates = budget.plan_estimates(plan)
    on_cluster = for_cluster(args.executor, plan)
    print_grids(console, [display.plan_grid(plan, estimates)])
    here = 0 if on_cluster else this_machine().gpus  # the local queue packs cells on its GPUs (submit --exclusive: one at a time)
    console.print(display.cost_text(study_cost(plan, estimates, on_cluster, here)), markup=False, highlight=False)
    if budget.plan_budget_text(plan, estimates):
        console.print(budget.plan_budget_text(plan, estimates))
    if on_cluster:
        if plan.cluster.pack > 1:
            console.print(packing_lines(plan), markup=False, highlight=False)
        console.print(display.cluster_text(plan, slurm_client.on_slurm()), markup=False, highlight=False)
    else:
        notes = display.cpu_notes(plan) if not this_machine().gpus else None
        if notes is not None:
            console.print(notes)
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


def for_cluster(executor: str, plan: Plan) -> bool:
    """Whether the cells will run on SLURM's nodes, not this machine: --executor slurm, or auto with
    sbatch on the PATH (a login node) or a cluster profile (a plan made for a cluster, off it)."""
    return executor == "slurm" or (executor == "auto" and (slurm_client.on_slurm() or bool(plan.profile)))


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


def earlier_plan(results_dir: Path) -> Optional[Plan]:
    """The plan this one replaces, if one is there to read (one that cannot be read is replaced whole)."""
    try:
        return read_plan(results_dir) if (results_dir / PLAN_FILE).is_file() else None
    except PlanError:
        return None


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
