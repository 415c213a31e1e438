"""The finished jobs' time and their epochs' share (orchestrator.watch.result_cache: from their phases), for `status`."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Optional, Protocol


class Timed(Protocol):
    @property
    def elapsed_s(self) -> Optional[float]: ...

    @property
    def epochs_s(self) -> Optional[float]: ...


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
