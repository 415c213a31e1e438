"""Where an epoch's time goes: named phases summed over the steps."""
from __future__ import annotations

import time
from collections import defaultdict
from typing import Callable


class PhaseTimer:
    """Sums wall time per phase. `sync` waits for the device first, so each lap is the
    phase's own time and not work queued earlier (a sync costs a little overlap, which
    the homework's per-step loss.item() costs anyway)."""

    def __init__(self, sync: Callable[[], None]) -> None:
        self._sync = sync
        self.totals: dict[str, float] = defaultdict(float)
        self._last = time.perf_counter()

    def restart(self) -> None:
        self._sync()
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        self._sync()
        now = time.perf_counter()
        self.totals[phase] += now - self._last
        self._last = now
