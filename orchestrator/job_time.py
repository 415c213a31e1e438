"""A finished cell's time in its job, from its result (jobs.core.phases), for `status`."""
from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Optional, Protocol

from jobs.core.result import Result


class Timed(Protocol):
    @property
    def elapsed_s(self) -> Optional[float]: ...

    @property
    def epochs_s(self) -> Optional[float]: ...


def run_seconds(result: Result) -> Optional[float]:
    """The job's wall time: its phases' sum (the task's start to its result), or, in a result
    written before phases, its first line to its end (started_at, ended_at); None if neither."""
    if result.phases is not None:
        return result.phases.total_s()
    try:
        start, end = (dt.datetime.fromisoformat(result.env[k]) for k in ("started_at", "ended_at"))
    except (KeyError, TypeError, ValueError):
        return None
    return (end - start).total_seconds()


def epochs_seconds(result: Result) -> Optional[float]:
    """Seconds the job spent in its epochs (None: not recorded, or a kind without epochs)."""
    return result.phases.epochs_s if result.phases is not None else None


def clock(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


def summary(rows: Sequence[Timed]) -> Optional[str]:
    """One line on the finished jobs that recorded their epochs: their time, and the epochs' share."""
    timed = [r for r in rows if r.elapsed_s is not None and r.epochs_s is not None]
    if not timed:
        return None
    total = sum(r.elapsed_s or 0.0 for r in timed)
    epochs = sum(r.epochs_s or 0.0 for r in timed)
    share = f" ({100 * epochs / total:.0f} %)" if total > 0 else ""
    return (f"{len(timed)} finished job(s) with phases: {clock(total)} in all, {clock(epochs)} of it in epochs{share}; "
            "`collect` shows where the rest went (overhead)")
