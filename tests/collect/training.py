"""A results dir's training cells as the training tables read them (collect.train.frame)."""
from __future__ import annotations

from pathlib import Path

from collect.load import load
from collect.train.frame import TrainFrames, frames


def training(results_dir: Path) -> TrainFrames:
    return frames(load(results_dir).of_kind("train"))
