"""Rich tables for `plan` and `status` (rendering only)."""
from __future__ import annotations

import dataclasses
import math
import textwrap
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Optional

from rich.console import Group
from rich.table import Table

from collect.render import Grid
from rich.text import Text

from jobs.core.cell import StudyCell
from jobs.core.kinds import kind_named
from results_format.text import visible
from orchestrator.watch import job_time, overview
from orchestrator.budget.cost import StudyCost, shares, study_cost
from orchestrator.budget.estimate import Estimate, estimates_text, profile_estimates
from orchestrator.local.machine import Machine
from orchestrator.plan.cell_names import cell_names
from orchestrator.plan.plan import Plan
from results_format.states import CellState
from orchestrator.watch.status import CellRow

STATE_STYLE = {
    CellState.DONE: "green", CellState.OOM: "yellow", CellState.RUNNING: "cyan", CellState.PENDING: "blue",
    CellState.QUEUED: "blue", CellState.FAILED: "red", CellState.TIMEOUT: "red", CellState.CANCELLED: "red",
    CellState.UNKNOWN: "magenta", CellState.NOT_SUBMITTED: "dim", CellState.SKIPPED: "yellow",
}


def plan_grid(plan: Plan, estimates: Optional[Mapping[str, Estimate]] = None) -> Grid:
    """The arrays; `estimates`: each cell's GPU-hours (default: all from the profile's pace).
    Printed by collect.fit's one rule (headers wrap at words, never cut)."""
    estimates = estimates or profile_estimates(dict(zip(plan.cell_ids, plan.cells, strict=True)), plan.cluster)
    where = f"profile {plan.profile}" if plan.profile else "no cluster profile"  # its image: cluster_text
    caption = "\n".join(filter(None, [plan.description, where,
                                      estimates_text(estimates, plan.cluster.images_per_s_per_gpu)]))
    hours, total = shares([a.gpu_hours for a in study_cost(plan, estimates, on_slurm=True).arrays], 2)
    rows = []
    for array, text in zip(plan.arrays, hours, strict=True):
        s = array.shape
        rows.append([array.name, str(s.nodes), str(s.gpus_per_node), str(s.tasks_per_node), str(s.cpus_per_task),
                     f"{s.time_min} min", str(len(array.cell_ids)), text])
    if len(plan.arrays) > 1:
        rows.append(["total", "", "", "", "", "", str(len(plan.cells)), total])  # the rows above add up to it
    return Grid("arrays", f"Study {plan.study}: {len(plan.cells)} cells in {len(plan.arrays)} arrays", caption,
                ["array", "nodes", "GPUs per node", "tasks per node", "CPUs per task", "time limit", "cells",
                 "est. GPU-h"], rows)


def cost_text(cost: StudyCost) -> str:
    """The study's cost in one line: GPU-hours, and the wall time at the arrays' parallelism."""
    if cost.on_slurm:
        pace = (f"at most {cost.parallel} tasks of each array at once" if cost.parallel
                else "every task of an array at once (no throttle)")
        how = f"{pace}, the {len(cost.arrays)} arrays side by side, once SLURM starts them"
    elif cost.parallel > 1:
        how = f"cells side by side on this machine's {cost.parallel} GPUs (the local queue)"
    else:
        how = "one cell at a time on this machine (the local queue)"
    return (f"cost: {cost.cells:,} cells, {cost.gpu_hours:.2f} GPU-h; about {duration_text(cost.wall_s)} of wall "
            f"time with {how}")


def duration_text(seconds: float) -> str:
    """"3 h 05 min", "25 min", "under a minute"."""
    minutes = math.ceil(seconds / 60)
    if minutes < 1:
        return "under a minute"
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"


def cpu_notes(plan: Plan) -> Optional[Text]:
    """What the study's jobs leave out when they run on a CPU, and why (its kind says: Kind.cpu_notes)."""
    kinds = {cell.kind for cell in plan.cells}
    notes = [note for kind in sorted(kinds) for note in kind_named(kind).cpu_notes]
    if not notes:
        return None
    return Text("Run here (no GPU), each \"GPU\" of a cell is a CPU process, and its job leaves out:\n"
                + "\n".join(f"- {note}" for note in notes))


def cluster_text(plan: Plan, sbatch_here: bool) -> str:
    """Where SLURM will run the cells: the partition, the nodes' GPUs, the image (or the Python that
    submits); and, off the cluster, where to submit from."""
    c = plan.cluster
    partition = f"partition {c.partition}" if c.partition else "the cluster's default partition"
    gpus = f"nodes of {c.gpus_per_node} GPUs" + (f" ({c.constraint})" if c.constraint else "")
    image = plan.container
    inside = (f"inside {image.runtime} {image.image}" + (f" + {image.overlay}:ro" if image.overlay else "")
              if image.enabled else "in the Python that runs `submit`")
    where = "" if sbatch_here else "\n(no sbatch on this machine: run `submit` on the cluster's login node)"
    return visible(f"SLURM runs the cells on {partition}, {gpus}, {inside}{where}")  # the throttle: cost_text


def cells_grid(plan: Plan, estimates: Optional[Mapping[str, Estimate]] = None) -> Grid:
    """One row per cell: id, label, array, then the columns its kind shows (a study has one kind),
    then its GPU-hour estimate and whether it is measured or the profile's."""
    estimates = estimates or profile_estimates(dict(zip(plan.cell_ids, plan.cells, strict=True)), plan.cluster)
    extra = list(plan.cells[0].plan_columns()) if plan.cells else []
    rows = []
    for cell, name in zip(plan.cells, cell_names(plan.cells), strict=True):
        shown = cell.plan_columns()
        guess = estimates[cell.cell_id]
        rows.append([cell.cell_id, name, plan.array_of(cell.cell_id).name, *(shown.get(k, "") for k in extra),
                     f"{guess.gpu_hours:.3f}", guess.source])
    header = ["cell", "label", "array"] + extra + ["est. GPU-h", "from"]
    numbers = ("batch/GPU", "global batch", "variants", "est. GPU-h")
    return Grid("cells", "Cells", "", header, rows,
                text_columns=tuple(i for i, name in enumerate(header) if name not in numbers))


def cells_text(plan: Plan, estimates: Mapping[str, Estimate], width: Optional[int] = None) -> str:
    """cells_grid as plain text, for a plan too long for rich to lay out quickly (it takes a
    minute for 100,000 rows): the same columns, aligned; within `width` the kind's columns give
    way from the right (a line below names them), the id, label, array and estimate stay."""
    extra = list(plan.cells[0].plan_columns()) if plan.cells else []
    rows = [["cell", "label", "array", *extra, "est. GPU-h", "from"]]
    for cell, name in zip(plan.cells, cell_names(plan.cells), strict=True):
        shown, guess = cell.plan_columns(), estimates[cell.cell_id]
        rows.append([cell.cell_id, name, plan.array_of(cell.cell_id).name, *(shown.get(k, "") for k in extra),
                     f"{guess.gpu_hours:.3f}", guess.source])
    widths = [max(map(len, column)) for column in zip(*rows, strict=True)]
    kept = list(range(len(widths)))
    hidden: list[str] = []
    while width and extra and sum(widths[i] + GAP for i in kept) - GAP > width and len(kept) > 5:
        hidden.insert(0, rows[0][kept.pop(-3)])  # the last of the kind's columns
    lines = [(" " * GAP).join(r[i].ljust(widths[i]) for i in kept).rstrip() for r in rows]
    note = textwrap.wrap(f"(not shown at this width: {', '.join(hidden)})", width) if hidden and width else []
    return "\n".join(["Cells", *lines, *note])


def _elapsed(seconds) -> str:
    if seconds is None:
        return ""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


STATUS_COLUMNS = ("cell", "label", "state", "job", "elapsed", "node")  # the last three give way first
ALWAYS_SHOWN = 3
MIN_DETAIL = 12  # characters of the detail column kept even on a terminal too narrow for the rest
GAP = 2  # spaces between columns
RICH_ROWS = 1000  # a longer list of cells is plain text (status_lines): rich lays out 100,000 rows in minutes


def _layout(rows: list[CellRow], width: int) -> tuple[list[tuple[str, ...]], list[int], list[int], list[str], int]:
    """Each row's texts, the columns' widths, the columns shown (job, elapsed and node where some
    cell has one and they fit: node gives way first), those hidden, and the detail's width."""
    cells: list[tuple[str, ...]] = [tuple(map(visible, (r.cell_id, r.label, r.state.value, r.job_id,
                                                        _elapsed(r.elapsed_s), r.node))) for r in rows]
    widths = [max([len(name)] + [len(c[i]) for c in cells]) for i, name in enumerate(STATUS_COLUMNS)]
    shown = [i for i in range(len(STATUS_COLUMNS)) if i < ALWAYS_SHOWN or any(c[i] for c in cells)]
    hidden: list[str] = []
    while len(shown) > ALWAYS_SHOWN and sum(widths[i] for i in shown) + GAP * len(shown) + MIN_DETAIL > width:
        hidden.insert(0, STATUS_COLUMNS[shown.pop()])
    detail = max(MIN_DETAIL, width - sum(widths[i] for i in shown) - GAP * len(shown))
    return cells, widths, shown, hidden, detail


def status_title(study: str, rows: list[CellRow]) -> str:
    counts = Counter(r.state for r in rows)
    return f"Study {study}: " + ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))


def status_table(study: str, rows: list[CellRow], width: int = 80, title: Optional[str] = None) -> Table:
    """One line per cell within `width` columns: ids, labels and states are never wrapped or
    cut; job, elapsed and node are shown where some cell has one and they fit (node gives way
    first); the detail takes what is left and ends in "…" when longer (failure_notes shows a
    failed cell's whole, status --json and `logs` every cell's). Every text is shown as text,
    never as markup. `title`: above it (default: the study and its cells' counts)."""
    cells, widths, shown, hidden, detail = _layout(rows, width)
    table = Table(title=Text(title or status_title(study, rows)), box=None, padding=(0, GAP // 2), pad_edge=False,
                  show_edge=False, caption=f"(not shown at this width: {', '.join(hidden)})" if hidden else None,
                  title_justify="left" if title else "center")
    for i in shown:
        table.add_column(STATUS_COLUMNS[i], no_wrap=True, min_width=widths[i])
    table.add_column("detail", no_wrap=True, overflow="ellipsis", max_width=detail)
    for r, texts in zip(rows, cells, strict=True):
        styled = [Text(texts[i], style=STATE_STYLE.get(r.state, "") if i == 2 else "") for i in shown]
        table.add_row(*styled, Text(visible(r.detail)))
    return table


def status_lines(title: str, rows: list[CellRow], width: int = 80) -> str:
    """The status table as plain text, for lists too long for rich to lay out quickly (100,000
    rows in a second, not a minute): the same columns, no colours."""
    cells, widths, shown, hidden, detail = _layout(rows, width)
    pad = " " * GAP
    lines = [title, pad.join(STATUS_COLUMNS[i].ljust(widths[i]) for i in shown) + pad + "detail"]
    for r, texts in zip(rows, cells, strict=True):
        text = visible(r.detail)
        text = text if len(text) <= detail else text[:detail - 1] + "…"
        lines.append(pad.join(texts[i].ljust(widths[i]) for i in shown) + pad + text)
    if hidden:
        lines.append(f"(not shown at this width: {', '.join(hidden)})")
    return "\n".join(line.rstrip() for line in lines)


MAX_REASONS = 10  # distinct failure reasons listed below the status table; --json has every cell's
MAX_NAMED = 3  # cells named per reason


def failure_notes(rows: list[CellRow]) -> Optional[Text]:
    """Why the cells that ended without an answer (failed, timeout, cancelled) ended, whole and
    wrapped (the table cuts it to one line): one paragraph per distinct reason, naming its
    cells, at most MAX_REASONS of them, so that 100,000 cells failing alike take one."""
    by_reason: dict[str, list[CellRow]] = {}
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
        notes.append(visible(reason))
    if len(by_reason) > MAX_REASONS:
        notes.append(f"\n({len(by_reason) - MAX_REASONS} more reasons: `status --json` has every cell's, "
                     "`logs CELL` its output)")
    return notes


def status_view(study: str, rows: list[CellRow], width: int = 80, title: Optional[str] = None) -> Group:
    """The status table, the finished jobs' time and their epochs' share, then the failed cells'
    whole reasons below it."""
    notes = failure_notes(rows)
    spent = job_time.summary(rows)
    return Group(status_table(study, rows, width, title), *([Text(spent)] if spent else []), *([notes] if notes else []))


def summary_view(plan: Plan, rows: list[CellRow], width: int = 80) -> Group:
    """A study of any size in a screenful: its cells' counts per state and per array, the cells
    that need a look (overview.look_rows: at most LOOK_ROWS, the most urgent first, and how to
    list the rest), then why the cells that failed ended."""
    counts = ", ".join(f"{n:,} {state}" for state, n in overview.state_counts(rows).items())
    parts: list = [Text(f"Study {plan.study}: {len(rows):,} cells: {counts}"), arrays_table(plan, rows)]
    looks = overview.look_rows(rows, plan)
    shown = [_waited(r, plan) for r in looks[:overview.LOOK_ROWS]]
    if looks:
        first = f" (the first {len(shown)})" if len(shown) < len(looks) else ""
        parts.append(status_table(plan.study, shown, width, title=f"Need a look: {overview.look_counts(looks)}{first}"))
    else:
        parts.append(Text("Nothing needs a look: no cell failed, runs, or has been pending longer than its time limit."))
    parts.append(Text("(`status --state STATE` lists the cells in a state, `--grep TEXT` those that show TEXT, "
                      "`--all` every cell)", style="dim"))
    notes = failure_notes(rows)
    return Group(*parts, *([notes] if notes else []))


def _waited(row: CellRow, plan: Plan) -> CellRow:
    """A cell waiting too long, its detail saying for how long: "waiting 2:03:00 (limit 60 min); Priority"."""
    if row.waited_s is None or not overview.overdue(row, plan):
        return row
    limit = plan.array_of(row.cell_id).shape.time_min
    return dataclasses.replace(row, detail=f"waiting {_elapsed(row.waited_s)} (limit {limit} min)"
                               + (f"; {row.detail}" if row.detail else ""))


def arrays_table(plan: Plan, rows: list[CellRow]) -> Table:
    """Per array: its cells, and how many are in each state (the states some cell is in)."""
    per_array = overview.array_counts(rows, plan)
    states = [s for s in CellState if any(s.value in counts for counts in per_array.values())]
    table = Table(box=None, padding=(0, GAP // 2), pad_edge=False, show_edge=False)
    table.add_column("array")
    table.add_column("cells", justify="right")
    for state in states:
        table.add_column(state.value, justify="right", style=STATE_STYLE[state])
    for name, counts in per_array.items():
        table.add_row(name, f"{sum(counts.values()):,}", *(f"{counts.get(s.value, 0):,}" for s in states))
    return table



def machine_text(machine: Machine) -> str:
    gpus = f"{machine.gpus} GPU{'s' if machine.gpus != 1 else ''}" if machine.gpus else "no GPU"
    return f"{gpus}, {machine.cpus} CPUs"


def skipped_lines(by_why: Mapping[str, Sequence[StudyCell]]) -> Text:
    """The cells the local executor skips on this machine (machine.not_here): one line per
    reason, with how many and their first labels, so that 100,000 cells skipped alike take one."""
    text = Text()
    for why, alike in by_why.items():
        labels = list(dict.fromkeys(c.label for c in alike))  # repeats share a label
        named = ", ".join(labels[:MAX_NAMED]) + (", …" if len(labels) > MAX_NAMED else "")
        text.append(("\n" if text else "") + f"{len(alike)} skipped ({named}): ",
                    style=STATE_STYLE[CellState.SKIPPED])
        text.append(why)
    return text
