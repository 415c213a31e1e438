"""The small hand-made result sets of the third TA's items (tests/collect/test_answers_ta3.py and class 7 of
tests/collect/test_claims_properties.py): each the shape of the set the TA read, a few cells."""
from __future__ import annotations

from jobs.core.result import Result
from tests.factories import cell, train_result


def cpu_runs(engine: str, b: int, gpus: int, times: tuple[float, ...]) -> list[Result]:
    """One CPU run of the cell per epoch time in `times` (train time 0.05 s less)."""
    return [train_result(cell(engine, b, gpus, repeat=r), epoch_s=t, train_s=t - 0.05, gpu_model="cpu")
            for r, t in enumerate(times)]


def loader_set(t1_small: tuple[float, float], t1_large: tuple[float, float], b: int = 128) -> list[Result]:
    """1 GPU at b and 4b ((epoch s, train s): the rest is data wait), 4 GPUs, DDP at b (global 4b), one run each."""
    return [train_result(cell("single", b), epoch_s=t1_small[0], train_s=t1_small[1]),
            train_result(cell("single", 4 * b), epoch_s=t1_large[0], train_s=t1_large[1]),
            train_result(cell("ddp", b, 4), epoch_s=2.5, train_s=2.4)]


def q4_set(accuracies: list[float]) -> list[Result]:
    """Q1's one cell, Q4's baseline and one large run on 4 GPUs whose training accuracy by epoch is `accuracies`."""
    base = train_result(cell("single", 128, epochs=5, timed_epoch=5), accuracies=[0.3, 0.5, 0.7, 0.9, 0.99])
    large = train_result(cell("ddp", 2048, 4, epochs=5, timed_epoch=5), accuracies=accuracies)
    return [train_result(cell("single", 32)), base, large]
