"""logs CELL [-f]: a cell's output (rank 0's stdout and stderr); -f follows it until the cell ends."""
from __future__ import annotations

import sys
import textwrap

from rich.console import Console

from jobs.core.layout import cell_part_of_log
from jobs.core.regular_file import NotRegular
from results_format.text import visible
from orchestrator.commands.common import add_interval, interval_for, planned
from orchestrator.watch.cell_logs import cell_ended, follow, log_files, tail_lines
from orchestrator.plan.cell_names import cell_names, select_cells
from orchestrator.watch.status import Monitor


def register(verbs, common) -> None:
    p = verbs.add_parser("logs", parents=[common], help="show (or -f follow) a cell's output")
    p.add_argument("cell", help="a cell's name (`label#2` among repeats), id, unique id prefix, or label "
                                "(`status` lists them)")
    p.add_argument("-f", "--follow", action="store_true", help="keep printing new output until the cell ends")
    p.add_argument("-n", "--lines", type=int, default=100, help="last lines of each file to show first (0: all)")
    add_interval(p, "checks whether the cell has ended, with -f")
    p.set_defaults(run=run)


def run(args, console: Console) -> int:
    plan = planned(args)
    cell_id, = select_cells(plan, [args.cell], one=True)
    name = dict(zip(plan.cell_ids, cell_names(plan.cells), strict=True))[cell_id]
    monitor = Monitor(plan)
    report = monitor.refresh()  # records the jobs of an interrupted submit, so their logs are found
    out, err = log_files(monitor.submission(cell_id), cell_id)
    for path in (out, err):
        try:
            text = cell_lines(tail_lines(path, 0), cell_id, args.lines)
        except NotRegular as exc:
            print(f"warning: {exc}; not read", file=sys.stderr)
            continue
        header(console, f"==> {path} <==")  # the output itself is shown as written
        print(text or "(nothing yet)", end="" if text.endswith("\n") else "\n")
    row = next(r for r in report.rows if r.cell_id == cell_id)
    if not args.follow or row.state.is_terminal:  # nothing more will be written
        header(console, f"--- cell {name} ({cell_id}): {row.state}{': ' + row.detail if row.detail else ''}")
        return 0
    try:
        for path, text in follow([out, err], cell_ended(monitor, cell_id), interval_for(args, plan)):
            sys.stdout.write(text if path == out else "".join(f"[err] {line}" for line in text.splitlines(True)))
            sys.stdout.flush()
    except KeyboardInterrupt:
        return 0
    row = next(r for r in monitor.refresh().rows if r.cell_id == cell_id)
    header(console, f"--- cell {name} ({cell_id}): {row.state}{': ' + row.detail if row.detail else ''}")
    return 0


def cell_lines(text: str, cell_id: str, lines: int) -> str:
    """The last `lines` lines (0: all) of the cell's part of its log: a packed task's log holds
    several cells', each under its header line (jobs.core.layout)."""
    mine = cell_part_of_log(text, cell_id)
    return mine if lines <= 0 else "".join(mine.splitlines(keepends=True)[-lines:])


def header(console: Console, text: str) -> None:
    """A line of ours between the cell's output, as text, wrapped at the terminal's width between
    words: a path is never cut (one longer than the terminal is its own line, whole, to copy)."""
    for line in textwrap.wrap(visible(text), console.width, break_long_words=False, break_on_hyphens=False):
        print(line)
