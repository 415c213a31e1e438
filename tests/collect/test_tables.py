"""collect.train.tables over the mixed results dir worked by hand (tests/collect/dirs.py), with
failed, oom, timeout, pending and missing cells, and over small dirs for the edge cases."""
from __future__ import annotations

import math

import pytest

from collect.train import grids, tables
from tests.collect.training import training
from tests.collect.dirs import by
from tests.factories import cell, train_result, write_results


@pytest.fixture(scope="module")
def loaded(mixed_template):
    return training(mixed_template)


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


def test_timing_runs_leave_out_remedies_and_other_protocols(tmp_path):
    plain = (cell("single", 32), cell("single", 64))
    others = (cell("single", 32, epochs=5, timed_epoch=5), cell("single", 32, lr_scaling="linear"),
              cell("single", 32, warmup_epochs=1), cell("ddp", 32, 2, sync_bn=True))
    frame = training(write_results(tmp_path, planned=plain + others)).frame
    assert tables.timing_protocol(frame) == (2, 2)  # the most common (epochs, timed epoch) without a remedy
    assert sorted(tables.timing_cells(frame).cell_id) == sorted(c.cell_id for c in plain)


def test_hw5_timing_protocol_is_two_epochs_the_second_timed(tmp_path):
    from orchestrator.plan.study import load_study

    frame = training(write_results(tmp_path, planned=load_study("hw5").cells)).frame
    assert tables.timing_protocol(frame) == (2, 2)
    assert len(tables.timing_cells(frame)) == 3 * (6 + 12 + 3)  # Q1, one node DP/DDP, two nodes; three repeats


def test_table1_speedup_and_efficiency_by_hand(loaded):
    t1 = tables.table1(loaded.frame)
    assert set(t1.batch_per_gpu) == {32, 128}  # 512 and up ran on 1 GPU only: Q1's
    base = by(t1, engine="single", batch_per_gpu=32)
    assert (base.speedup, base.efficiency) == (1.0, 1.0)
    assert by(t1, engine="single", batch_per_gpu=128).t1_s == 22.0  # T1 at each batch: its own (median) 1-GPU run
    ddp2 = by(t1, engine="ddp", gpus=2, batch_per_gpu=32)
    assert (ddp2.t1_s, ddp2.epoch_s, ddp2.speedup, ddp2.efficiency) == (40.0, 25.0, 1.6, 0.8)
    assert ddp2.t1_s_status == "ok"
    dp2 = by(t1, engine="dp", gpus=2, batch_per_gpu=32)
    assert dp2.speedup == pytest.approx(4 / 3) and dp2.efficiency == pytest.approx(2 / 3)
    ddp4 = by(t1, engine="ddp", gpus=4, batch_per_gpu=32)
    assert (ddp4.speedup, ddp4.efficiency) == (3.2, 0.8)


def test_table1_keeps_failed_timeout_pending_and_missing_rows(loaded):
    t1 = tables.table1(loaded.frame)
    not_ok = {("ddp", 2, 128): "failed", ("dp", 2, 128): "pending", ("ddp", 4, 128): "not submitted",
              ("dp", 4, 32): "timeout"}
    assert len(t1) == 5 + len(not_ok)
    for (engine, gpus, b), status in not_ok.items():
        r = by(t1, engine=engine, gpus=gpus, batch_per_gpu=b)
        assert r.status == status
        assert math.isnan(r.epoch_s) and math.isnan(r.speedup) and r.repeats == 0 and r.runs == 1


def test_table1_order_gpus_then_engine_then_batch(loaded):
    t1 = tables.table1(loaded.frame)
    assert list(zip(t1.gpus, t1.engine, t1.batch_per_gpu)) == [
        (1, "single", 32), (1, "single", 128), (2, "dp", 32), (2, "dp", 128), (2, "ddp", 32), (2, "ddp", 128),
        (4, "dp", 32), (4, "ddp", 32), (4, "ddp", 128)]


def test_repeats_collapse_to_the_median_and_any_ok_repeat_wins(tmp_path):
    reps = [cell("single", 32, repeat=r) for r in range(5)]
    runs = [train_result(c, epoch_s=t, train_s=t - 1) for c, t in zip(reps[:3], (10.0, 14.0, 11.0), strict=True)]
    runs += [train_result(reps[3], status="failed", error="boom"), train_result(cell("ddp", 32, 2), epoch_s=4.0, train_s=3.0)]
    frame = training(write_results(tmp_path, runs, planned=reps)).frame  # reps[4]: no result at all
    t1 = tables.table1(frame)
    one = by(t1, engine="single")
    assert (one.status, one.epoch_s, one.repeats, one.runs) == ("ok", 11.0, 3, 5)  # median of 10, 11, 14
    assert by(t1, engine="ddp").speedup == pytest.approx(11.0 / 4.0)
    q1 = tables.q1_table(frame)
    assert (q1.iloc[0].train_s, q1.iloc[0].repeats) == (10.0, 3)  # median of 9, 10, 13


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
    assert set(t2.engine) == {"dp", "ddp"}  # the N-GPU runs only
    ddp2 = by(t2, engine="ddp", gpus=2, batch_per_gpu=32)
    assert (ddp2.t1_train_s, ddp2.train_s, ddp2.compute_est_s, ddp2.comm_est_s) == (32.0, 20.0, 16.0, 4.0)
    assert (ddp2.compute_measured_s, ddp2.comm_measured_s) == (15.0, 2.0)  # 1 + 16 - 2; 2
    ddp4 = by(t2, engine="ddp", gpus=4, batch_per_gpu=32)
    assert (ddp4.compute_est_s, ddp4.comm_est_s, ddp4.compute_measured_s, ddp4.comm_measured_s) == (8.0, 2.0, 7.0, 1.5)
    dp2 = by(t2, engine="dp", gpus=2, batch_per_gpu=32)
    assert (dp2.compute_est_s, dp2.comm_est_s) == (16.0, 8.0)
    assert math.isnan(dp2.comm_measured_s) and math.isnan(dp2.compute_measured_s)  # not measured
    assert by(t2, engine="ddp", gpus=4, batch_per_gpu=128).status == "not submitted"


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
    results = [train_result(cell("single", 16, train_images=1000), epoch_s=3.0, train_s=2.0),
               train_result(small, epoch_s=2.0, train_s=1.5, busbw_gbps=10.0, grad_bytes=8_000_000),
               train_result(cell("dp", 16, 2, train_images=1000), epoch_s=2.0, train_s=1.25),
               train_result(cell("ddp", 16, 2, train_images=1000, model="tiny"), epoch_s=2.0, train_s=1.5)]
    t3 = tables.table3(training(write_results(tmp_path, results)).frame)
    row = by(t3, engine="ddp", model="resnet18")
    # steps = ceil(1000 / 32) = 32; bytes = 32 x 2(1)/2 x 2,000,000 x 4 = 256,000,000; comm est = 1.5 - 2/2 = 0.5
    assert (row.steps, row.gradients, row.bytes_per_gpu, row.comm_est_s) == (32, 2_000_000, 256_000_000, 0.5)
    assert row.util_est_gbps == pytest.approx(0.512)
    dp = by(t3, engine="dp")  # no all-reduce of its own: P of the DDP run of the same model
    assert (dp.gradients, dp.comm_est_s, dp.util_est_gbps) == (2_000_000, 0.25, pytest.approx(1.024))
    assert by(t3, model="tiny").gradients == 11_173_962  # no run of that model measured it


def test_a_missing_baseline_leaves_speedup_and_estimates_empty(tmp_path):
    frame = training(write_results(tmp_path, [train_result(cell("ddp", 64, 2), epoch_s=10.0, train_s=8.0, busbw_gbps=5.0)])).frame
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


def test_a_gradients_only_cell_is_not_a_run_of_the_recipe(tmp_path):
    """Q7's cell (broadcast_buffers off) is no timing run and no 'no remedy' row of Q4."""
    recipe, gradonly = cell("ddp", 2048, 4, epochs=5, timed_epoch=5), cell("ddp", 2048, 4, epochs=5, timed_epoch=5,
                                                                        broadcast_buffers=False)
    frame = training(write_results(tmp_path, planned=[recipe, gradonly, cell("single", 32)])).frame
    assert list(tables.plain(frame)) == [True, False, True]
    q4 = tables.q4_table(frame, training(tmp_path).epochs)
    assert sorted(grids.remedy_name(r) for r in q4.itertuples()) == ["gradients only (no buffer broadcast)", "none"]


def test_tables_of_an_empty_results_dir(tmp_path):
    loaded = training(write_results(tmp_path, []))
    assert loaded.frame.empty
    for table in (tables.q1_table(loaded.frame), tables.table1(loaded.frame), tables.table2(loaded.frame),
                  tables.table3(loaded.frame), tables.q4_table(loaded.frame, loaded.epochs)):
        assert table.empty


def test_tables_of_a_plan_with_no_results_yet(tmp_path):
    frame = training(write_results(tmp_path, planned=[cell("single", 32), cell("ddp", 32, 2)])).frame
    t1 = tables.table1(frame)
    assert list(t1.status) == ["not submitted", "not submitted"] and t1.speedup.isna().all()
    assert list(tables.q1_table(frame).status) == ["not submitted"]
    assert tables.largest_fitting_batch(tables.q1_table(frame)) is None


def test_tables_of_a_study_with_no_timing_runs(tmp_path):
    frame = training(write_results(tmp_path, planned=[cell("single", 128, lr_scaling="linear")])).frame
    assert tables.timing_protocol(frame) is None
    assert tables.table1(frame).empty and tables.q1_table(frame).empty and tables.table2(frame).empty
