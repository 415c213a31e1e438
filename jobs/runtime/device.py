"""TODO docstring"""
from __future__ import annotations
import torch


def sync_device(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
