"""Where an epoch's time goes, without stalling the loop: phase boundaries are CUDA events
on a GPU (read once, at the end of the epoch), host clock readings on a CPU."""
from __future__ import annotations

import time

import torch


class StepPhases:
    """Marks taken in order within each step; `between(a, b)` sums, over steps, the time
    from mark a to mark b."""

    def __init__(self, device: torch.device) -> None:
        self._cuda = device.type == "cuda"
        self._steps: list[list] = []

    def mark(self, new_step: bool = False) -> None:
        if new_step or not self._steps:
            self._steps.append([])
        if self._cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self._steps[-1].append(event)
        else:
            self._steps[-1].append(time.perf_counter())

    def between(self, a: int, b: int) -> float:
        if self._cuda:
            torch.cuda.synchronize()
            return sum(s[a].elapsed_time(s[b]) for s in self._steps) / 1000
        return sum(s[b] - s[a] for s in self._steps)
