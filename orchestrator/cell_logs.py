"""A cell's output: where its log files are, their last lines, and following them as they grow."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Optional
from collections.abc import Callable, Iterator

from orchestrator.errors import UserError
from jobs.core.registry import Submission
from orchestrator.status import Monitor

FOLLOW_READ_S = 0.5  # how often -f reads the log files (the scheduler is asked far less often)


def log_files(sub: Optional[Submission], cell_id: str) -> tuple[Path, Path]:
    if sub is None:
        raise UserError(f"cell {cell_id} was never submitted: no logs; `submit` queues it")
    if not sub.log_out or not sub.log_err:
        raise UserError(f"cell {cell_id} waits in the local queue and has no log yet; try again when it runs")
    return Path(sub.log_out), Path(sub.log_err)


def tail_lines(path: Path, lines: int) -> str:
    """The last `lines` lines of a file (0: all of it), or "" when it does not exist yet."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
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
                with open(path, "rb") as f:
                    f.seek(offsets[path])
                    chunk = f.read()
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
