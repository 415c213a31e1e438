"""Rich tables for `plan` and `status` (rendering only)."""
from __future__ import annotations

from collections import Counter
from typing import Optional

from rich.console import Group
from rich.table import Table
from rich.text import Text

from jobs.core.kinds import kind_named
from orchestrator import job_time
from orchestrator.plan import Plan, estimate_gpu_hours
from orchestrator.states import CellState
from orchestrator.status import CellStatus

STATE_STYLE = {
    CellState.DONE: "green", CellState.OOM: "yellow", CellState.RUNNING: "cyan", CellState.PENDING: "blue",
    CellState.QUEUED: "blue", CellState.FAILED: "red", CellState.TIMEOUT: "red", CellState.CANCELLED: "red",
    CellState.UNKNOWN: "magenta", CellState.NOT_SUBMITTED: "dim", CellState.SKIPPED: "yellow",
}


def plan_table(plan: Plan) -> Table:
    where = [f"profile {plan.profile}" if plan.profile else "no cluster profile"]
    if plan.container.enabled:
        where.append(f"in {plan.container.runtime} {plan.container.image}"
                     + (f" + {plan.container.overlay}:ro" if plan.container.overlay else ""))
    caption = "\n".join(filter(None, [plan.description, "; ".join(where)]))
    table = Table(title=Text(f"Study {plan.study}: {len(plan.cells)} cells in {len(plan.arrays)} arrays"),
                  caption=Text(caption), caption_justify="left")  # the user's words are text, not markup
    for name in ("array", "nodes", "GPUs/node", "tasks/node", "CPUs/task", "time limit", "cells", "est. GPU-h"):
        table.add_column(name, justify="left" if name == "array" else "right")
    for array in plan.arrays:
        hours = sum(estimate_gpu_hours(plan.cell(cid), plan.cluster) for cid in array.cell_ids)
        s = array.shape
        table.add_row(array.name, str(s.nodes), str(s.gpus_per_node), str(s.tasks_per_node), str(s.cpus_per_task),
                      f"{s.time_min} min", str(len(array.cell_ids)), f"{hours:.2f}")
    return table


def cpu_notes(plan: Plan) -> Optional[Text]:
    """What the study's jobs leave out when they run on a CPU, and why (its kind says: Kind.cpu_notes)."""
    kinds = {cell.kind for cell in plan.cells}
    notes = [note for kind in sorted(kinds) for note in kind_named(kind).cpu_notes]
    if not notes:
        return None
    return Text("Run here (no GPU), each \"GPU\" of a cell is a CPU process, and its job leaves out:\n"
                + "\n".join(f"- {note}" for note in notes))


def cells_table(plan: Plan) -> Table:
    """One row per cell: id, label, array, then the columns its kind shows (a study has one kind)."""
    table = Table(title="Cells")
    extra = list(plan.cells[0].plan_columns()) if plan.cells else []
    for name in ["cell", "label", "array"] + extra:
        table.add_column(name)
    for cell in plan.cells:
        shown = cell.plan_columns()
        table.add_row(cell.cell_id, cell.label, plan.array_of(cell.cell_id).name, *(shown.get(k, "") for k in extra))
    return table


def _elapsed(seconds) -> str:
    if seconds is None:
        return ""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


STATUS_COLUMNS = ("cell", "label", "state", "job", "elapsed", "node")  # the last three give way first
ALWAYS_SHOWN = 3
MIN_DETAIL = 12  # characters of the detail column kept even on a terminal too narrow for the rest
GAP = 2  # spaces between columns


def status_table(study: str, rows: list[CellStatus], width: int = 80) -> Table:
    """One line per cell within `width` columns: ids, labels and states are never wrapped or
    cut; job, elapsed and node are shown where some cell has one and they fit (node gives way
    first); the detail takes what is left and ends in "…" when longer (failure_notes shows a
    failed cell's whole, status --json and `logs` every cell's). Every text is shown as text,
    never as markup."""
    counts = Counter(r.state for r in rows)
    summary = ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))
    cells = [(r.cell_id, r.label, r.state, r.job_id, _elapsed(r.elapsed_s), r.node) for r in rows]
    widths = [max([len(name)] + [len(c[i]) for c in cells]) for i, name in enumerate(STATUS_COLUMNS)]
    shown = [i for i in range(len(STATUS_COLUMNS)) if i < ALWAYS_SHOWN or any(c[i] for c in cells)]
    hidden: list[str] = []
    while len(shown) > ALWAYS_SHOWN and sum(widths[i] for i in shown) + GAP * len(shown) + MIN_DETAIL > width:
        hidden.insert(0, STATUS_COLUMNS[shown.pop()])
    table = Table(title=Text(f"Study {study}: {summary}"), box=None, padding=(0, GAP // 2), pad_edge=False,
                  show_edge=False, caption=f"(not shown at this width: {', '.join(hidden)})" if hidden else None)
    for i in shown:
        table.add_column(STATUS_COLUMNS[i], no_wrap=True, min_width=widths[i])
    detail = max(MIN_DETAIL, width - sum(widths[i] for i in shown) - GAP * len(shown))
    table.add_column("detail", no_wrap=True, overflow="ellipsis", max_width=detail)
    for r, texts in zip(rows, cells, strict=True):
        styled = [Text(texts[i], style=STATE_STYLE.get(r.state, "") if i == 2 else "") for i in shown]
        table.add_row(*styled, Text(r.detail))
    return table


MAX_REASONS = 10  # distinct failure reasons listed below the status table; --json has every cell's
MAX_NAMED = 3  # cells named per reason


def failure_notes(rows: list[CellStatus]) -> Optional[Text]:
    """Why the cells that ended without an answer (failed, timeout, cancelled) ended, whole and
    wrapped (the table cuts it to one line): one paragraph per distinct reason, naming its
    cells, at most MAX_REASONS of them, so that 100,000 cells failing alike take one."""
    by_reason: dict[str, list[CellStatus]] = {}
    for r in rows:
        if r.state.is_retryable and r.detail:
            by_reason.setdefault(r.detail, []).append(r)
    if not by_reason:
        return None
    notes = Text()
    for reason, alike in list(by_reason.items())[:MAX_REASONS]:
        named = ", ".join(r.cell_id for r in alike[:MAX_NAMED])
        more = f" and {len(alike) - MAX_NAMED} more" if len(alike) > MAX_NAMED else ""
        states = "/".join(dict.fromkeys(r.state.value for r in alike))
        notes.append(f"\n{named}{more} ({states}): ", style=STATE_STYLE[alike[0].state])
        notes.append(reason)
    if len(by_reason) > MAX_REASONS:
        notes.append(f"\n({len(by_reason) - MAX_REASONS} more reasons: `status --json` has every cell's, "
                     "`logs CELL` its output)")
    return notes


def status_view(study: str, rows: list[CellStatus], width: int = 80) -> Group:
    """The status table, the finished jobs' time and their epochs' share, then the failed cells'
    whole reasons below it."""
    notes = failure_notes(rows)
    spent = job_time.summary(rows)
    return Group(status_table(study, rows, width), *([Text(spent)] if spent else []), *([notes] if notes else []))
