"""collect.formulas: each formula with the numbers of its docstring, and NaN where it cannot be computed."""
from __future__ import annotations

import math

import pytest

from collect import formulas as f

NAN = float("nan")


def test_speedup_and_efficiency():
    assert f.speedup(30.0, 20.0) == 1.5
    assert f.efficiency(1.5, 2) == 0.75
    assert f.efficiency(1.2, 1) == 1.2


@pytest.mark.parametrize("t1, tn", [(None, 2.0), (NAN, 2.0), (2.0, None), (2.0, 0.0), (2.0, -1.0)])
def test_speedup_without_both_times_is_nan(t1, tn):
    assert math.isnan(f.speedup(t1, tn))


def test_estimates():
    assert f.compute_estimate_s(30.0, 4) == 7.5
    assert f.comm_estimate_s(30.0, 10.0, 4) == 2.5
    assert f.comm_estimate_s(30.0, 30.0, 1) == 0.0
    assert math.isnan(f.comm_estimate_s(None, 10.0, 4)) and math.isnan(f.compute_estimate_s(30.0, 0))


def test_steps_and_bytes():
    assert f.steps_per_epoch(50_000, 32, 2) == 782  # ceil(781.25)
    assert f.steps_per_epoch(50_000, 128, 1) == 391  # ceil(390.625)
    assert f.steps_per_epoch(256, 128, 2) == 1
    assert f.ring_allreduce_bytes(11_173_962, 2) == 44_695_848
    assert f.ring_allreduce_bytes(11_173_962, 4) == pytest.approx(1.5 * 44_695_848)  # 2 x 3/4 x P x 4
    assert f.ring_allreduce_bytes(11_173_962, 1) == 0
    assert f.epoch_comm_bytes(50_000, 32, 2) == 34_952_153_136


def test_bandwidth_and_share():
    assert f.bandwidth_gbps(34_952_153_136, 10.0) == pytest.approx(3.4952153136)
    assert math.isnan(f.bandwidth_gbps(1e9, 0.0)) and math.isnan(f.bandwidth_gbps(1e9, -1.0))
    assert f.busbw_share(3.5, 14.0) == 0.25
    assert math.isnan(f.busbw_share(3.5, NAN))


def test_gradients_from_measured_bytes_or_resnet18():
    assert f.gradients_of(44_695_848) == 11_173_962
    assert f.gradients_of(None) == f.gradients_of(NAN) == f.gradients_of(0) == 11_173_962
