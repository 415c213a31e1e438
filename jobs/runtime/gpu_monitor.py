"""GPU utilisation and memory, sampled through NVML while the timed epoch runs."""
from __future__ import annotations

import statistics
import threading
from typing import Any, Optional

INTERVAL_S = 0.05


class GpuMonitor:
    """Samples the GPUs this process uses; a no-op where NVML is missing (CPU machines)."""

    def __init__(self, device_indices: list[int]) -> None:
        self._handles: list = []
        self._samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in device_indices]
        except Exception:  # no NVML here: nothing to sample
            self._handles = []

    def __enter__(self) -> GpuMonitor:
        if self._handles:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL_S):
            for handle in self._handles:
                util = self._nvml.nvmlDeviceGetUtilizationRates(handle)
                memory = self._nvml.nvmlDeviceGetMemoryInfo(handle)
                self._samples.append((float(util.gpu), memory.used / 2**30))

    def summary(self) -> Optional[dict[str, Any]]:
        if not self._samples:
            return None
        utils = [u for u, _ in self._samples]
        return {
            "samples": len(self._samples), "interval_s": INTERVAL_S, "gpus": len(self._handles),
            "util_mean_pct": statistics.fmean(utils), "util_median_pct": statistics.median(utils),
            "mem_used_max_gib": max(m for _, m in self._samples),
        }
