"""jobs.train.schedule: linear and square-root LR scaling and gradual warmup (Goyal et al. 2017), worked by hand."""
from __future__ import annotations

import pytest

from jobs.train.cell import Cell
from jobs.train.schedule import lr_at, target_lr


def big(**extra) -> Cell:
    # 4 GPUs x 512 = global batch 2048; ref 128 -> k = 16; 0.1 x 16 = 1.6
    fields = dict(engine="ddp", gpus_per_node=4, batch_per_gpu=512, lr=0.1, lr_ref_batch=128, epochs=5, timed_epoch=5)
    return Cell(**{**fields, **extra})


def test_linear_scaling_multiplies_by_global_over_reference_batch():
    assert target_lr(big(lr_scaling="linear")) == pytest.approx(1.6)


def test_linear_scaling_counts_gpus_on_every_node():
    cell = Cell(engine="ddp", nodes=2, gpus_per_node=2, batch_per_gpu=64, lr=0.1, lr_scaling="linear")
    assert target_lr(cell) == pytest.approx(0.1 * 256 / 128)  # 0.2


def test_reference_batch_is_honoured():
    assert target_lr(big(lr_scaling="linear", lr_ref_batch=256)) == pytest.approx(0.8)


def test_sqrt_scaling_multiplies_by_the_square_root_of_global_over_reference_batch():
    assert target_lr(big(lr_scaling="sqrt")) == pytest.approx(0.4)  # k = 16: 0.1 x 4
    two_by_two = Cell(engine="ddp", nodes=2, gpus_per_node=2, batch_per_gpu=128, lr=0.1, lr_scaling="sqrt")
    assert target_lr(two_by_two) == pytest.approx(0.2)  # 512 / 128 = 4: 0.1 x 2


def test_sqrt_warmup_ramps_to_the_square_root_rule():
    # 0.1 + (0.4 - 0.1) x 1/2 at the middle of a 2-epoch warmup
    assert lr_at(big(lr_scaling="sqrt", warmup_epochs=2), 1.0) == pytest.approx(0.25)


def test_no_scaling_keeps_the_base_lr():
    assert target_lr(big()) == 0.1


@pytest.mark.parametrize("epochs_done, expected", [
    (0.0, 0.1),  # starts at the base lr
    (0.5, 0.475),  # 0.1 + 1.5 x 0.5/2
    (1.0, 0.85),  # midpoint: 0.1 + 1.5 x 1/2
    (1.5, 1.225),
    (2.0, 1.6),  # warmup over: the scaled lr
    (4.75, 1.6),  # held after warmup
])
def test_warmup_ramps_linearly_then_holds(epochs_done, expected):
    assert lr_at(big(lr_scaling="linear", warmup_epochs=2), epochs_done) == pytest.approx(expected)


def test_without_warmup_the_scaled_lr_applies_from_the_first_step():
    assert lr_at(big(lr_scaling="linear"), 0.0) == pytest.approx(1.6)


@pytest.mark.parametrize("epochs_done", [0.0, 0.5, 1.0, 3.0])
def test_warmup_without_scaling_is_constant(epochs_done):
    assert lr_at(big(warmup_epochs=2), epochs_done) == pytest.approx(0.1)
