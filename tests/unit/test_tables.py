"""collect.tables: the homework's tables over the results frame, worked by hand."""
from __future__ import annotations

import math

import pytest

from collect.load import load, load_frame
from collect.tables import (largest_fitting_batch, q1_table, strong_scaling, table1, table2, table3, timing_cells,
                            timing_protocol)
from jobs.cell import Cell
from jobs.result import write_result

from ._collect_data import DDP2_32, SINGLE_32, bad_result, ok_result, write_plan_of


def row(table, **match):
    hits = table
    for key, value in match.items():
        hits = hits[hits[key] == value]
    assert len(hits) == 1, (match, len(hits))
    return hits.iloc[0]


def test_table1_speedup_and_efficiency_by_hand(results_dir):
    t = table1(load_frame(results_dir))
    ddp = row(t, engine="ddp", gpus=2, batch_per_gpu=32)
    # T1 = 10 s (1 GPU, b32), T2 = 6 s: speedup 10/6 = 1.667, efficiency 1.667/2 = 0.833
    assert (ddp.status, ddp.epoch_s, ddp.t1_s, ddp.t1_s_status) == ("ok", 6.0, 10.0, "ok")
    assert ddp.speedup == pytest.approx(10 / 6) and ddp.efficiency == pytest.approx(5 / 6)
    assert round(ddp.speedup, 3) == 1.667 and round(ddp.efficiency, 3) == 0.833
    one = row(t, engine="single", batch_per_gpu=32)
    assert (one.speedup, one.efficiency) == (1.0, 1.0)
    assert row(t, engine="single", batch_per_gpu=128).t1_s == 5.0


def test_table1_keeps_oom_failed_and_missing_rows(results_dir):
    t = table1(load_frame(results_dir))
    assert len(t) == 6
    for match, status in (({"engine": "ddp", "batch_per_gpu": 128}, "oom"), ({"engine": "dp", "gpus": 4}, "failed"),
                          ({"engine": "dp", "gpus": 2}, "missing")):
        r = row(t, **match)
        assert r.status == status
        assert math.isnan(r.epoch_s) and math.isnan(r.speedup) and r.repeats == 0 and r.runs == 1


def test_table1_order_gpus_then_engine_then_batch(results_dir):
    t = table1(load_frame(results_dir))
    assert list(zip(t.gpus, t.engine, t.batch_per_gpu)) == [
        (1, "single", 32), (1, "single", 128), (2, "dp", 32), (2, "ddp", 32), (2, "ddp", 128), (4, "dp", 32)]


def test_table1_without_a_baseline_says_not_in_study(tmp_path):
    write_plan_of(tmp_path, (DDP2_32,))
    write_result(tmp_path, ok_result(DDP2_32, 6.0, 5.0))
    r = row(table1(load_frame(tmp_path)), engine="ddp")
    assert r.t1_s_status == "not in study" and math.isnan(r.speedup)


def test_repeats_collapse_to_the_median_and_any_ok_repeat_wins(tmp_path):
    reps = [Cell(engine="single", batch_per_gpu=32, repeat=r) for r in range(5)]
    write_plan_of(tmp_path, (*reps, DDP2_32))
    for cell, seconds in zip(reps, (10.0, 14.0, 11.0)):
        write_result(tmp_path, ok_result(cell, seconds, seconds - 1))
    write_result(tmp_path, bad_result(reps[3], "failed", "boom"))  # reps[4]: no result at all
    write_result(tmp_path, ok_result(DDP2_32, 4.0, 3.0))
    t = table1(load_frame(tmp_path))
    one = row(t, engine="single")
    assert (one.status, one.epoch_s, one.repeats, one.runs) == ("ok", 11.0, 3, 5)  # median of 10, 11, 14
    assert row(t, engine="ddp").speedup == pytest.approx(11.0 / 4.0)
    q1 = q1_table(load_frame(tmp_path))
    assert (q1.iloc[0].train_s, q1.iloc[0].repeats) == (10.0, 3)  # median of 9, 10, 13


def test_q1_table_by_hand(results_dir):
    q1 = q1_table(load_frame(results_dir))
    assert list(q1.batch_per_gpu) == [32, 128] and list(q1.status) == ["ok", "ok"]
    b32, b128 = q1.iloc[0], q1.iloc[1]
    assert (b32.train_s, b32.epoch_s, b32.data_wait_s) == (8.0, 10.0, 2.0)
    assert b32.train_images_per_s == 6250.0  # 50000 / 8
    assert b128.train_images_per_s == 12500.0  # 50000 / 4


def test_q1_stops_at_the_first_batch_that_does_not_fit(tmp_path):
    cells = [Cell(engine="single", batch_per_gpu=b) for b in (32, 128, 512, 2048)]
    write_plan_of(tmp_path, tuple(cells))
    write_result(tmp_path, ok_result(cells[0], 10.0, 8.0))
    write_result(tmp_path, ok_result(cells[1], 5.0, 4.0))
    write_result(tmp_path, bad_result(cells[2], "oom", "CUDA out of memory"))
    write_result(tmp_path, bad_result(cells[3], "oom", "CUDA out of memory"))
    q1 = q1_table(load_frame(tmp_path))
    assert list(zip(q1.batch_per_gpu, q1.status)) == [(32, "ok"), (128, "ok"), (512, "oom")]
    assert largest_fitting_batch(q1) == 128


def test_timing_runs_leave_out_remedies_and_other_protocols(tmp_path):
    plain = (Cell(engine="single", batch_per_gpu=32), Cell(engine="single", batch_per_gpu=64))
    others = (Cell(engine="single", batch_per_gpu=32, epochs=5, timed_epoch=5),
              Cell(engine="single", batch_per_gpu=32, lr_scaling="linear"),
              Cell(engine="single", batch_per_gpu=32, warmup_epochs=1),
              Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=32, sync_bn=True))
    write_plan_of(tmp_path, (*plain, *others))
    frame = load_frame(tmp_path)
    assert timing_protocol(frame) == (2, 2)  # the most common (epochs, timed epoch) without a remedy
    assert sorted(timing_cells(frame).cell_id) == sorted(c.cell_id for c in plain)


def test_hw5_timing_protocol_is_two_epochs_the_second_timed(tmp_path):
    from orchestrator.study import load_study

    write_plan_of(tmp_path, load_study("hw5").cells)
    frame = load_frame(tmp_path)
    assert timing_protocol(frame) == (2, 2)
    assert len(timing_cells(frame)) == 3 * (6 + 12 + 3)  # Q1, one node DP/DDP, two nodes; three repeats


def test_strong_scaling_by_hand(tmp_path):
    b64 = Cell(engine="single", batch_per_gpu=64)
    write_plan_of(tmp_path, (SINGLE_32, b64, DDP2_32))
    write_result(tmp_path, ok_result(SINGLE_32, 10.0, 8.0))
    write_result(tmp_path, ok_result(b64, 8.0, 7.0))
    write_result(tmp_path, ok_result(DDP2_32, 6.0, 5.0))
    strong = strong_scaling(load_frame(tmp_path))
    r = row(strong, engine="ddp")
    # global batch 64: T1 = 8 s (b64 on 1 GPU), T2 = 6 s (b32 on each of 2): 1.333, efficiency 0.667
    assert (r.global_batch, r.t1_strong_s) == (64, 8.0)
    assert r.speedup == pytest.approx(8 / 6) and r.efficiency == pytest.approx(4 / 6)


def test_table2_compute_and_communication_by_hand(results_dir):
    t2 = table2(load_frame(results_dir))
    assert set(t2.engine) == {"dp", "ddp"}  # the N-GPU runs only
    r = row(t2, engine="ddp", batch_per_gpu=32)
    # train times: T1 = 8 s, T2 = 5 s: compute 8/2 = 4, comm 5 - 4 = 1
    assert (r.t1_train_s, r.train_s) == (8.0, 5.0)
    assert r.compute_est_s == pytest.approx(4.0) and r.comm_est_s == pytest.approx(1.0)
    # measured: h2d 0.1 + compute 4.9 - exposed 0.5 = 4.5; comm = exposed 0.5
    assert r.compute_measured_s == pytest.approx(4.5) and r.comm_measured_s == pytest.approx(0.5)


def test_table3_bandwidth_by_hand(results_dir):
    r = row(table3(load_frame(results_dir)), engine="ddp", batch_per_gpu=32)
    # steps = ceil(50000 / 64) = 782; P = 11,173,962 (no measured bytes); 2(N-1)/N x P x 4 = 44,695,848
    assert (r.steps, r.gradients) == (782, 11_173_962)
    assert r.bytes_per_gpu == pytest.approx(782 * 44_695_848)  # 34,952,153,136
    assert r.util_est_gbps == pytest.approx(34.952153136)  # over 1 s of estimated comm
    assert r.util_measured_gbps == pytest.approx(69.904306272)  # over 0.5 s measured
    assert math.isnan(r.share_est)  # no busbw measured


def test_tables_of_a_plan_with_no_results_yet(tmp_path):
    write_plan_of(tmp_path, (SINGLE_32, DDP2_32))
    frame = load(tmp_path).frame
    t = table1(frame)
    assert list(t.status) == ["missing", "missing"] and t.speedup.isna().all()
    assert list(q1_table(frame).status) == ["missing"]
    assert largest_fitting_batch(q1_table(frame)) is None


def test_tables_of_a_study_with_no_timing_runs(tmp_path):
    write_plan_of(tmp_path, (Cell(engine="single", batch_per_gpu=128, lr_scaling="linear"),))
    frame = load_frame(tmp_path)
    assert timing_protocol(frame) is None
    assert table1(frame).empty and q1_table(frame).empty and table2(frame).empty


def test_batches_run_on_one_gpu_only_are_left_to_q1(results_dir):
    q1_only = Cell(engine="single", batch_per_gpu=2048)
    write_result(results_dir, ok_result(q1_only, 3.0, 2.5))
    frame = load_frame(results_dir)
    assert 2048 not in set(table1(frame).batch_per_gpu)
    assert 2048 in set(q1_table(frame).batch_per_gpu)
