"""Per-epoch checkpoints, so a requeued job (preemption, time limit) resumes instead of
starting over, and its result still has every epoch exactly once."""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, Optional

import torch

from jobs.atomic import replacing



def save(path: Path, state: dict[str, Any]) -> None:
    """Atomically: a job killed while saving leaves the previous checkpoint intact."""
    with replacing(path) as tmp:
        torch.save(state, tmp)


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be loaded as weights only."""


def load(path: Path, device: torch.device) -> Optional[dict[str, Any]]:
    """The saved state, unpickled as weights only: tensors, dicts, lists and numbers (what
    `save` writes), so nothing in the file can run code while it is read."""
    if not path.is_file():
        return None
    try:
        return torch.load(path, map_location=device, weights_only=True)
    except pickle.UnpicklingError as exc:
        raise CheckpointError(f"checkpoint {path} holds more than weights ({str(exc).splitlines()[0]}); "
                              "delete it to run the cell from its first epoch") from exc
