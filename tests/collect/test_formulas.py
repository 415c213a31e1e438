"""collect.train.formulas: each formula against numbers worked by hand (N = 1 too), and NaN where it
cannot be computed (a missing, zero or negative input)."""
from __future__ import annotations

import math

import pytest

from collect.repeats import spread
from collect.train import formulas as f

P = 11_173_962
NAN = math.nan


def test_speedup_and_efficiency_by_hand():
    assert f.speedup(30.0, 20.0) == pytest.approx(1.5)
    assert f.efficiency(1.5, 2) == pytest.approx(0.75)
    assert f.speedup(40.0, 12.5) == pytest.approx(3.2)
    assert f.efficiency(3.2, 4) == pytest.approx(0.8)
    assert f.efficiency(1.2, 1) == 1.2  # faster than linear is shown, not capped at 1


def test_one_gpu_is_its_own_baseline():
    assert f.speedup(30.0, 30.0) == 1.0
    assert f.efficiency(1.0, 1) == 1.0
    assert f.compute_estimate_s(30.0, 1) == 30.0
    assert f.comm_estimate_s(30.0, 30.0, 1) == 0.0
    assert f.ring_allreduce_bytes(P, 1) == 0.0
    assert f.epoch_comm_bytes(50_000, 128, 1) == 0.0
    assert math.isnan(f.bandwidth_gbps(0.0, 0.0))  # nothing moved in no time: undefined, not 0 or inf


@pytest.mark.parametrize("t1, tn", [(None, 2.0), (NAN, 2.0), (2.0, None), (2.0, 0.0), (2.0, -1.0)])
def test_speedup_without_both_times_is_nan(t1, tn):
    assert math.isnan(f.speedup(t1, tn))


@pytest.mark.parametrize("t1", [None, NAN])
def test_a_missing_baseline_gives_nan_not_an_error(t1):
    assert math.isnan(f.efficiency(f.speedup(t1, 10.0), 2))
    assert math.isnan(f.compute_estimate_s(t1, 2))
    assert math.isnan(f.comm_estimate_s(t1, 10.0, 2))
    assert math.isnan(f.bandwidth_gbps(1e9, f.comm_estimate_s(t1, 10.0, 2)))


def test_a_missing_or_zero_input_gives_nan():
    assert math.isnan(f.compute_estimate_s(30.0, 0))
    assert math.isnan(f.comm_estimate_s(30.0, None, 2))
    assert math.isnan(f.bandwidth_gbps(1e9, 0.0))  # no division by zero, no inf
    assert math.isnan(f.bandwidth_gbps(1e9, -0.5))  # an estimate below zero says nothing about bandwidth
    assert math.isnan(f.busbw_share(3.5, None))
    assert math.isnan(f.busbw_share(3.5, 0.0))
    assert math.isnan(f.busbw_share(3.5, NAN))


def test_compute_and_communication_estimate_by_hand():
    # T1 = 32 s on 1 GPU; T2 = 20 s -> compute 16, comm 4; T4 = 10 s -> compute 8, comm 2
    assert f.compute_estimate_s(32.0, 2) == 16.0 and f.comm_estimate_s(32.0, 20.0, 2) == 4.0
    assert f.compute_estimate_s(32.0, 4) == 8.0 and f.comm_estimate_s(32.0, 10.0, 4) == 2.0
    assert f.comm_estimate_s(32.0, 7.0, 4) == -1.0  # faster than the even split: kept, and flagged by the grid


def test_steps_round_up_the_last_short_step():
    assert f.steps_per_epoch(50_000, 32, 2) == 782  # 781.25
    assert f.steps_per_epoch(50_000, 32, 4) == 391  # 390.625
    assert f.steps_per_epoch(50_000, 128, 1) == 391
    assert f.steps_per_epoch(50_000, 512, 4) == 25  # 24.41
    assert f.steps_per_epoch(256, 128, 2) == 1


def test_ring_allreduce_bytes_by_hand():
    assert f.ring_allreduce_bytes(P, 2) == 44_695_848  # 2 x 1/2 x P x 4
    assert f.ring_allreduce_bytes(P, 4) == 67_043_772  # 2 x 3/4 x P x 4
    assert f.epoch_comm_bytes(50_000, 32, 2) == 782 * 44_695_848 == 34_952_153_136
    assert f.epoch_comm_bytes(50_000, 32, 4) == 391 * 67_043_772 == 26_214_114_852


def test_bandwidth_and_share_by_hand():
    assert f.bandwidth_gbps(34_952_153_136, 4.0) == pytest.approx(8.738038284)
    assert f.bandwidth_gbps(26_214_114_852, 2.0) == pytest.approx(13.107057426)
    assert f.busbw_share(8.738038284, 40.0) == pytest.approx(0.2184509571)
    assert f.busbw_share(3.5, 14.0) == pytest.approx(0.25)


def test_gradients_from_the_measured_bytes_else_resnet18():
    assert f.gradients_of(44_695_848) == P
    assert f.gradients_of(8_000_000) == 2_000_000
    assert f.gradients_of(None) == P and f.gradients_of(NAN) == P and f.gradients_of(0) == P


def test_every_formula_is_stated_for_the_tables():
    assert set(f.FORMULAS) >= {"speedup", "efficiency", "strong", "compute", "comm", "measured", "steps", "bytes",
                               "bandwidth", "share"}
    assert "2(N-1)/N x P x 4" in f.FORMULAS["bytes"] and "1e9" in f.FORMULAS["bandwidth"]


def test_spread_is_the_range_over_the_median():
    assert spread(4.1, 4.0, 4.4) == pytest.approx(0.4 / 4.1)
    assert spread(2.0, 2.0, 2.0) == 0.0
    assert math.isnan(spread(0.0, 0.0, 1.0)) and math.isnan(spread(None, 1.0, 2.0))
