"""collect.tables over a results dir worked by hand (tests/collect/conftest.py), with failed,
oom, timeout, pending and missing cells."""
from __future__ import annotations

import math

import pytest

from collect import tables
from collect.load import load
from tests.collect.factory import cell, result, write_dir


@pytest.fixture(scope="module")
def loaded(mixed_dir):
    return load(mixed_dir)


def by(table, **match):
    rows = table
    for key, value in match.items():
        rows = rows[rows[key] == value]
    assert len(rows) == 1, f"{match}: {len(rows)} rows"
    return rows.iloc[0]


def test_q1_stops_at_the_first_oom_and_keeps_later_pending(loaded):
    q1 = tables.q1_table(loaded.frame)
    assert list(zip(q1.batch_per_gpu, q1.status)) == [(32, "ok"), (128, "ok"), (512, "oom"), (8192, "pending")]
    b32, b128 = by(q1, batch_per_gpu=32), by(q1, batch_per_gpu=128)
    assert (b32.train_s, b32.epoch_s, b32.data_wait_s) == (32.0, 40.0, 8.0)
    assert b32.train_images_per_s == pytest.approx(50_000 / 32)
    assert (b128.train_s, b128.epoch_s, b128.repeats, b128.runs) == (17.0, 22.0, 3, 3)  # medians of 3 repeats
    assert tables.largest_fitting_batch(q1) == 128


def test_timing_protocol_is_the_common_two_epoch_run(loaded):
    assert tables.timing_protocol(loaded.frame) == (2, 2)
    assert set(tables.timing_cells(loaded.frame).epochs) == {2}


def test_table1_speedup_and_efficiency_by_hand(loaded):
    t1 = tables.table1(loaded.frame)
    assert set(t1.batch_per_gpu) == {32, 128}  # 512 and up ran on 1 GPU only: Q1's
    base = by(t1, engine="single", batch_per_gpu=32)
    assert (base.speedup, base.efficiency) == (1.0, 1.0)
    ddp2 = by(t1, engine="ddp", gpus=2, batch_per_gpu=32)
    assert (ddp2.t1_s, ddp2.epoch_s, ddp2.speedup, ddp2.efficiency) == (40.0, 25.0, 1.6, 0.8)
    dp2 = by(t1, engine="dp", gpus=2, batch_per_gpu=32)
    assert dp2.speedup == pytest.approx(4 / 3) and dp2.efficiency == pytest.approx(2 / 3)
    ddp4 = by(t1, engine="ddp", gpus=4, batch_per_gpu=32)
    assert (ddp4.speedup, ddp4.efficiency) == (3.2, 0.8)
    statuses = {(r.engine, r.gpus, r.batch_per_gpu): r.status for r in t1.itertuples()}
    assert statuses[("ddp", 2, 128)] == "failed" and statuses[("dp", 2, 128)] == "pending"
    assert statuses[("ddp", 4, 128)] == "missing" and statuses[("dp", 4, 32)] == "timeout"
    assert math.isnan(by(t1, engine="ddp", gpus=2, batch_per_gpu=128).speedup)


def test_strong_scaling_pairs_the_same_global_batch(loaded):
    strong = tables.strong_scaling(loaded.frame)
    # 4 GPUs x b32 = global 128: T1(batch 128 on 1 GPU) = 22 (median) -> 22 / 12.5 = 1.76, / 4 = 0.44
    row = by(strong, engine="ddp", gpus=4, batch_per_gpu=32)
    assert (row.global_batch, row.t1_strong_s, row.speedup, row.efficiency) == (128, 22.0, 1.76, 0.44)
    assert by(strong, engine="dp", gpus=4, batch_per_gpu=32).status == "timeout"
    # 2 GPUs x b32 = 64 and 2 GPUs x b128 = 256: no 1-GPU run at that batch, so no row
    assert set(strong.gpus) == {4}
    assert by(strong, engine="ddp", gpus=4, batch_per_gpu=128).t1_strong_status == "oom"  # batch 512 on 1 GPU


def test_table2_estimate_and_measurement_by_hand(loaded):
    t2 = tables.table2(loaded.frame)
    assert "single" not in set(t2.engine)
    ddp2 = by(t2, engine="ddp", gpus=2, batch_per_gpu=32)
    assert (ddp2.t1_train_s, ddp2.train_s, ddp2.compute_est_s, ddp2.comm_est_s) == (32.0, 20.0, 16.0, 4.0)
    assert (ddp2.compute_measured_s, ddp2.comm_measured_s) == (15.0, 2.0)  # 1 + 16 - 2; 2
    ddp4 = by(t2, engine="ddp", gpus=4, batch_per_gpu=32)
    assert (ddp4.compute_est_s, ddp4.comm_est_s, ddp4.compute_measured_s, ddp4.comm_measured_s) == (8.0, 2.0, 7.0, 1.5)
    dp2 = by(t2, engine="dp", gpus=2, batch_per_gpu=32)
    assert (dp2.compute_est_s, dp2.comm_est_s) == (16.0, 8.0)
    assert math.isnan(dp2.comm_measured_s) and math.isnan(dp2.compute_measured_s)  # not measured
    assert by(t2, engine="ddp", gpus=4, batch_per_gpu=128).status == "missing"


def test_table3_bandwidth_by_hand(loaded):
    t3 = tables.table3(loaded.frame)
    ddp2 = by(t3, engine="ddp", gpus=2, batch_per_gpu=32)
    assert (ddp2.steps, ddp2.gradients, ddp2.bytes_per_gpu) == (782, 11_173_962, 34_952_153_136)
    assert ddp2.util_est_gbps == pytest.approx(34.952153136 / 4)
    assert ddp2.util_measured_gbps == pytest.approx(34.952153136 / 2)
    assert (ddp2.busbw_gbps, ddp2.share_est) == (40.0, pytest.approx(34.952153136 / 4 / 40))
    ddp4 = by(t3, engine="ddp", gpus=4, batch_per_gpu=32)
    assert (ddp4.steps, ddp4.bytes_per_gpu) == (391, 26_214_114_852)
    assert ddp4.util_est_gbps == pytest.approx(13.107057426)
    assert ddp4.share_measured == pytest.approx(26.214114852 / 1.5 / 50)
    dp2 = by(t3, engine="dp", gpus=2, batch_per_gpu=32)
    assert dp2.util_est_gbps == pytest.approx(34.952153136 / 8)
    assert math.isnan(dp2.util_measured_gbps) and math.isnan(dp2.busbw_gbps) and math.isnan(dp2.share_est)


def test_table3_takes_p_from_the_result_and_images_from_the_cell(tmp_path):
    small = cell("ddp", 16, 2, train_images=1000)
    results = [result(cell("single", 16, train_images=1000), epoch_s=3.0, train_s=2.0),
               result(small, epoch_s=2.0, train_s=1.5, busbw_gbps=10.0, grad_bytes=8_000_000),
               result(cell("dp", 16, 2, train_images=1000), epoch_s=2.0, train_s=1.25),
               result(cell("ddp", 16, 2, train_images=1000, model="tiny"), epoch_s=2.0, train_s=1.5)]
    t3 = tables.table3(load(write_dir(tmp_path, results)).frame)
    row = by(t3, engine="ddp", model="resnet18")
    # steps = ceil(1000 / 32) = 32; bytes = 32 x 2(1)/2 x 2,000,000 x 4 = 256,000,000; comm est = 1.5 - 2/2 = 0.5
    assert (row.steps, row.gradients, row.bytes_per_gpu, row.comm_est_s) == (32, 2_000_000, 256_000_000, 0.5)
    assert row.util_est_gbps == pytest.approx(0.512)
    dp = by(t3, engine="dp")  # no all-reduce of its own: P of the DDP run of the same model
    assert (dp.gradients, dp.comm_est_s, dp.util_est_gbps) == (2_000_000, 0.25, pytest.approx(1.024))
    assert by(t3, model="tiny").gradients == 11_173_962  # no run of that model measured it


def test_a_missing_baseline_leaves_speedup_and_estimates_empty(tmp_path):
    frame = load(write_dir(tmp_path, [result(cell("ddp", 64, 2), epoch_s=10.0, train_s=8.0, busbw_gbps=5.0)])).frame
    row = by(tables.table1(frame), engine="ddp")
    assert row.status == "ok" and row.t1_s_status == "not in study" and math.isnan(row.speedup)
    t3 = by(tables.table3(frame), engine="ddp")
    assert math.isnan(t3.compute_est_s) and math.isnan(t3.comm_est_s) and math.isnan(t3.util_est_gbps)
    assert t3.steps == 391 and t3.busbw_gbps == 5.0
    assert tables.strong_scaling(frame).empty


def test_q4_against_the_batch_128_baseline(loaded):
    q4 = tables.q4_table(loaded.frame, loaded.epochs)
    assert list(q4.baseline) == [True] + [False] * 4
    base = q4.iloc[0]
    assert (base.engine, base.batch_per_gpu, base.loss, base.accuracy) == ("single", 128, 0.8, 0.7)
    none = by(q4, batch_per_gpu=2048, lr_scaling="none")
    assert (none.loss, none.d_loss, none.d_accuracy) == (1.6, pytest.approx(0.8), pytest.approx(-0.28))
    warm = by(q4, batch_per_gpu=2048, warmup_epochs=2)
    assert (warm.epoch_lr, warm.d_accuracy) == (6.4, pytest.approx(-0.08))
    assert by(q4, batch_per_gpu=8192).status == "oom"
    assert list(q4.batch_per_gpu) == [128, 8192, 2048, 2048, 2048]  # baseline, then the largest batch first
    curves = tables.q4_curves(loaded.frame, loaded.epochs)
    assert len(curves) == 4 * 5 and list(curves[curves.engine == "single"].sort_values("epoch").loss) == [2.0, 1.5, 1.2, 1.0, 0.8]


def test_tables_of_an_empty_results_dir(tmp_path):
    loaded = load(write_dir(tmp_path, []))
    assert loaded.frame.empty
    for table in (tables.q1_table(loaded.frame), tables.table1(loaded.frame), tables.table2(loaded.frame),
                  tables.table3(loaded.frame), tables.q4_table(loaded.frame, loaded.epochs)):
        assert table.empty
