"""Rich tables for `plan` and `status` (rendering only)."""
from __future__ import annotations

from collections import Counter

from rich.table import Table

from orchestrator.plan import Plan, estimate_gpu_hours
from orchestrator.status import CellStatus

STATE_STYLE = {
    "done": "green", "oom": "yellow", "running": "cyan", "pending": "blue", "queued": "blue",
    "failed": "red", "timeout": "red", "cancelled": "red", "unknown": "magenta", "not submitted": "dim",
}


def plan_table(plan: Plan) -> Table:
    where = [f"profile {plan.profile}" if plan.profile else "no cluster profile"]
    if plan.container.enabled:
        where.append(f"in {plan.container.runtime} {plan.container.image}"
                     + (f" + {plan.container.overlay}:ro" if plan.container.overlay else ""))
    caption = "\n".join(filter(None, [plan.description, "; ".join(where)]))
    table = Table(title=f"Study {plan.study}: {len(plan.cells)} cells in {len(plan.arrays)} arrays",
                  caption=caption, caption_justify="left")
    for name in ("array", "nodes", "GPUs/node", "tasks/node", "CPUs/task", "time limit", "cells", "est. GPU-h"):
        table.add_column(name, justify="left" if name == "array" else "right")
    for array in plan.arrays:
        hours = sum(estimate_gpu_hours(plan.cell(cid), plan.cluster) for cid in array.cell_ids)
        s = array.shape
        table.add_row(array.name, str(s.nodes), str(s.gpus_per_node), str(s.tasks_per_node), str(s.cpus_per_task),
                      f"{s.time_min} min", str(len(array.cell_ids)), f"{hours:.2f}")
    return table


def cells_table(plan: Plan) -> Table:
    table = Table(title="Cells")
    for name in ("cell", "label", "array", "batch/GPU", "global batch", "epochs", "data", "remedies"):
        table.add_column(name)
    for cell in plan.cells:
        remedies = ", ".join(filter(None, [
            "linear LR" if cell.lr_scaling == "linear" else "",
            f"warmup {cell.warmup_epochs} ep" if cell.warmup_epochs else "", "SyncBN" if cell.sync_bn else "",
        ])) or "-"
        table.add_row(cell.cell_id, cell.label, plan.array_of(cell.cell_id).name, str(cell.batch_per_gpu),
                      str(cell.global_batch), f"{cell.epochs} (time {cell.timed_epoch})",
                      f"{cell.dataset} {cell.train_images}", remedies)
    return table


def _elapsed(seconds) -> str:
    if seconds is None:
        return ""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def status_table(study: str, rows: list[CellStatus]) -> Table:
    counts = Counter(r.state for r in rows)
    summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    table = Table(title=f"Study {study}: {summary}")
    for name in ("cell", "label", "state", "job", "elapsed", "node", "detail"):
        table.add_column(name, overflow="fold")
    for r in rows:
        style = STATE_STYLE.get(r.state, "")
        table.add_row(r.cell_id, r.label, f"[{style}]{r.state}[/]" if style else r.state, r.job_id,
                      _elapsed(r.elapsed_s), r.node, r.detail)
    return table
