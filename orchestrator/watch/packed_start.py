"""Which cells of a packed job have started. A job of several cells (a local queue's job, a SLURM
task of `submit --pack N`) runs them one after another, each under its header line in the job's log
(jobs.core.layout.cell_log_header); a cell whose header is not there yet waits inside the job,
though the job runs."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from jobs.core.layout import CELL_LOG_HEADER
from jobs.core.regular_file import NotRegular, TooLarge, read_regular

LOG_MAX = 8 << 20  # a training job's log is a line per epoch; a larger one is not read each refresh


def started_cells(log_out: Optional[str]) -> Optional[frozenset[str]]:
    """The cells whose header the job's log holds; None where it cannot tell (no log yet, a log too
    large, or no regular file)."""
    if not log_out:
        return None
    try:
        text = read_regular(Path(log_out), "job log", LOG_MAX).decode(errors="replace")
    except (OSError, NotRegular, TooLarge):
        return None
    return frozenset(m.group(3) for line in text.splitlines() if (m := CELL_LOG_HEADER.match(line)))
