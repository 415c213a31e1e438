"""Where an epoch's time goes, without stalling the loop: phase boundaries are CUDA events
on a GPU (read once, at the end of the epoch), host clock readings on a CPU."""
from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import torch

# "error" (or "warn"): torch raises (warns) on any host-device sync inside a timed step.
SYNC_DEBUG_ENV = "JOBS_SYNC_DEBUG"


@contextlib.contextmanager
def no_host_sync(device: torch.device) -> Iterator[None]:
    """The timed steps run in here. Under $JOBS_SYNC_DEBUG on a GPU, torch's sync debug mode
    flags every operation that makes the CPU wait for the GPU (.item(), a copy to the host,
    a tensor built from host data on the device): one such call per step costs a quarter of
    a faithful epoch, and the tests run every engine under "error"."""
    mode = os.environ.get(SYNC_DEBUG_ENV, "")
    if device.type != "cuda" or not mode:
        yield
        return
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode(mode)
    try:
        yield
    finally:
        torch.cuda.set_sync_debug_mode(previous)


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
