"""Per-epoch checkpoints, so a requeued job (preemption, time limit) resumes instead of
starting over, and its result still has every epoch exactly once."""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, Optional

import torch

from jobs.core.atomic import replacing


def save(path: Path, state: dict[str, Any]) -> None:
    """Atomically: a job killed while saving leaves the previous checkpoint intact."""
    with replacing(path) as tmp:
        torch.save(state, tmp)


class CheckpointError(RuntimeError):
    """A checkpoint that does not load: cut short, corrupt, or holding more than weights.
    `reason` says which, for a caller that words its own fix."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"checkpoint {path} is unreadable ({reason}); delete it to run the cell from its first epoch")
        self.path, self.reason = path, reason


def load(path: Path, device: torch.device) -> Optional[dict[str, Any]]:
    """The saved state, unpickled as weights only: tensors, dicts, lists and numbers (what
    `save` writes), so nothing in the file can run code while it is read."""
    if not path.is_file():
        return None
    try:
        return torch.load(path, map_location=device, weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError) as exc:
        # A file cut short fails in torch's zip reader (RuntimeError), garbage in the unpickler; a
        # file holding code is refused by weights_only: each names this file, never torch's internals.
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        what = "holds more than weights" if "Weights only load failed" in str(exc) else "cut short or corrupt"
        raise CheckpointError(path, f"{what}: {first}") from exc
