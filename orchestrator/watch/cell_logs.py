"""A cell's output: where its log files are, their last lines, and following them as they grow."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional
from collections.abc import Callable, Iterator

from jobs.core.regular_file import LOG_READ_MAX, MB, NotRegular, open_regular, read_end
from orchestrator.errors import UserError
from results_format.registry import Submission
from orchestrator.watch.status import Monitor

FOLLOW_READ_S = 0.5  # how often -f reads the log files (the scheduler is asked far less often)


def log_files(sub: Optional[Submission], cell_id: str) -> tuple[Path, Path]:
    if sub is None:
        raise UserError(f"cell {cell_id} was never submitted: no logs; `submit` queues it")
    if not sub.log_out or not sub.log_err:
        raise UserError(f"cell {cell_id} waits in the local queue and has no log yet; try again when it runs")
    return Path(sub.log_out), Path(sub.log_err)


def tail_lines(path: Path, lines: int) -> str:
    """The last `lines` lines of a log (0: all of it, up to its last LOG_READ_MAX bytes), or ""
    when it does not exist yet; NotRegular when it is no regular file (a FIFO)."""
    try:
        data, skipped = read_end(path, "log file", LOG_READ_MAX)
    except NotRegular:
        raise
    except OSError:
        return ""
    text = data.decode(errors="replace")
    if skipped:
        text = f"({skipped / MB:,.0f} MB before this not shown)\n" + text.split("\n", 1)[-1]
    if lines <= 0:
        return text
    return "".join(text.splitlines(keepends=True)[-lines:])


def follow(paths: list[Path], ended: Callable[[], bool], check_every_s: float) -> Iterator[tuple[Path, str]]:
    """New text of each file as it is written, until `ended()` (asked every check_every_s) says
    the cell is over; then what is left is read once more."""
    offsets = {p: (p.stat().st_size if p.exists() else 0) for p in paths}
    next_check = time.monotonic() + check_every_s
    while True:
        over = False
        if time.monotonic() >= next_check:
            over, next_check = ended(), time.monotonic() + check_every_s
        for path in paths:
            try:
                with open_regular(path, "log file") as f:  # a FIFO is skipped (`logs` said so), never waited on
                    f.seek(offsets[path])
                    chunk = f.read(LOG_READ_MAX)
            except OSError:
                continue
            if chunk:
                offsets[path] += len(chunk)
                yield path, chunk.decode(errors="replace")
        if over:
            return
        time.sleep(FOLLOW_READ_S)


def cell_ended(monitor: Monitor, cell_id: str) -> Callable[[], bool]:
    def ended() -> bool:
        row = next(r for r in monitor.refresh().rows if r.cell_id == cell_id)
        return row.state.is_terminal
    return ended
