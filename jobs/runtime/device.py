"""The device a job runs on: one wait for its queued work, for every kind."""
from __future__ import annotations

import torch


def sync_device(device: torch.device) -> None:
    """Wait for the GPU's queued work (a no-op on the CPU): only at the edges of a timed window."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
