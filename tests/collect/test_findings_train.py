"""The training kind's findings (Part A Q1-Q4, the lab) from result files written by hand: the
seed's own timings give numbers worked by hand, and each condition that picks a word is tried on
both sides with fabricated results.

The seed's timings (tests/collect/dirs.py: SEED_TIMINGS, from reference/h200-baseline.md: a naive script on H200s;
epoch s, of which waiting on data), written as results; train time = epoch - data wait:
  1 GPU   b32 15.43 (1.76) -> 13.67   b128 5.98 (2.47) -> 3.51   b512 4.64 (2.88) -> 1.76
  DP  2 GPUs b128 9.41 (0.38) -> 9.03
  DP  4 GPUs b128 7.18 (1.12) -> 6.06     b512 5.56 (3.77) -> 1.79
  DDP 4 GPUs b128 1.88 (0.26) -> 1.62     b512 1.73 (1.43) -> 0.30
By hand: images/s at b512 = 50,000 / 1.76 = 28,409, at b128 14,245: 3.51 / 1.76 = 1.99x.
  speedup = T1 / TN: DP2 b128 5.98 / 9.41 = 0.64 (efficiency 0.32); DP4 b128 0.83 (0.21), b512
  4.64 / 5.56 = 0.83 (0.21); DDP4 b128 5.98 / 1.88 = 3.18 (0.80), b512 4.64 / 1.73 = 2.68 (0.67).
  DDP vs DP on 4 GPUs: 7.18 / 1.88 = 3.82x, 5.56 / 1.73 = 3.21x as fast.
  strong, global batch 512: DDP4 b128 4.64 / 1.88 = 2.47 (0.62), DP4 b128 4.64 / 7.18 = 0.65.
  comm share (estimate) = (TN - T1/N) / TN: DP2 b128 (9.03 - 1.755) / 9.03 = 81%; DP4 b128
  (6.06 - 0.8775) / 6.06 = 86%; DP4 b512 (1.79 - 0.44) / 1.79 = 75%; DDP4 b128 46%; DDP4 b512 negative.
"""
from __future__ import annotations

import math
from typing import Optional

import pytest

from collect.findings import Finding
from collect.report import collect
from tests.collect.dirs import q4, seed_results
from tests.factories import cell, train_result, write_results

LIN = dict(lr_scaling="linear")


def findings(tmp_path, results, planned=(), submitted=()) -> list[Finding]:
    return list(collect(write_results(tmp_path, results, planned, submitted)).findings)


def texts(found: list[Finding], question: str, containing: str = "") -> list[str]:
    return [f.text for f in found if f.question == question and containing in f.text]


def one(found: list[Finding], question: str, containing: str = "") -> Finding:
    matching = [f for f in found if f.question == question and containing in f.text]
    assert len(matching) == 1, [f.text for f in found if f.question == question]
    return matching[0]


def timed(engine: str, b: int, gpus: int, epoch_s: float, train_s: Optional[float] = None, repeat: int = 0, **extra):
    return train_result(cell(engine, b, gpus, repeat=repeat), epoch_s=epoch_s,
                  train_s=epoch_s - 1.0 if train_s is None else train_s, **extra)


@pytest.fixture(scope="module")
def seed(tmp_path_factory) -> list[Finding]:
    return list(collect(write_results(tmp_path_factory.mktemp("seed"), seed_results(), study="seed")).findings)


def test_seed_q1_by_hand(seed):
    fit = one(seed, "A.Q1", "OOM")
    assert fit.text == ("The sweep did not reach OOM: it stopped at batch 512, the largest that ran on 1 GPU "
                        "(NVIDIA H200), so the largest batch that fits is at least 512.")
    assert fit.numbers["largest_fitting_batch"] == 512 and math.isnan(fit.numbers["first_oom_batch"])
    rate = one(seed, "A.Q1", "images per second")
    assert "batch 512 trains the most images per second: 28,409 images/s" in rate.text
    assert "1.99x the next best, batch 128's 14,245 images/s, one run each: no spread measured" in rate.text
    assert rate.numbers["images_per_s_batch_512"] == pytest.approx(50_000 / 1.76)
    assert texts(seed, "A.Q1", "falls at every step of the sweep, from 13.67 s at batch 32 to 1.76 s at batch 512: it "
                               "had not levelled off by the largest batch that ran, one run each: no spread measured.")
    assert not texts(seed, "A.Q1", "whole epoch")  # it falls at every step too: said once
    assert texts(seed, "A.Q1", "were not sampled in any Q1 run")


def test_seed_q2_speedups_by_hand_and_never_a_slower_run_called_faster(seed):
    dp2 = one(seed, "A.Q2", "2 GPUs, DataParallel (")
    assert "speedup 0.64x at batch 128 (efficiency 0.32; 9.41 s against 5.98 s: slower than 1 GPU)" in dp2.text
    assert dp2.numbers["speedup_batch_128"] == pytest.approx(5.98 / 9.41)
    dp4 = one(seed, "A.Q2", "4 GPUs, DataParallel (")
    assert "0.83x at batch 128 (efficiency 0.21; 7.18 s against 5.98 s: slower than 1 GPU)" in dp4.text
    assert "0.83x at batch 512 (efficiency 0.21; 5.56 s against 4.64 s: slower than 1 GPU)" in dp4.text
    ddp4 = one(seed, "A.Q2", "4 GPUs, DDP (")
    assert "3.18x at batch 128 (efficiency 0.80; 1.88 s against 5.98 s: faster than 1 GPU)" in ddp4.text
    assert "2.68x at batch 512 (efficiency 0.67" in ddp4.text
    assert one(seed, "A.Q2", "most efficient").text == (
        "Weak scaling, most efficient: 4 GPUs, DDP, batch 128 per GPU at 3.18x (efficiency 0.80); least efficient: "
        "4 GPUs, DataParallel, batch 128 per GPU at 0.83x (efficiency 0.21); each against 1 GPU at the same batch per GPU.")
    versus = one(seed, "A.Q2", "DDP's epoch against DataParallel's")
    assert "at batch 128, 1.88 s against 7.18 s (DDP faster, 3.82x as fast)" in versus.text
    assert "at batch 512, 1.73 s against 5.56 s (DDP faster, 3.21x as fast)" in versus.text
    strong = one(seed, "A.Q2", "Strong scaling (the global batch 512 fixed): 4 GPUs, DDP")
    assert ("runs 2.47x as fast as 1 GPU at batch 512 (efficiency 0.62), below the weak-scaling 3.18x at the same "
            "batch per GPU: 1 GPU takes 4.64 s at batch 512 against 5.98 s at batch 128") in strong.text
    assert one(seed, "A.Q2", "4 GPUs, DataParallel, batch 128 per GPU runs 0.65x").numbers["strong_speedup"] \
        == pytest.approx(4.64 / 7.18)


def test_seed_q3_shares_and_bound_by_hand(seed):
    assert one(seed, "A.Q3.1", "2 GPUs, DataParallel, batch 128 per GPU: ").numbers["comm_share_est"] == pytest.approx(
        (9.03 - 3.51 / 2) / 9.03)
    assert texts(seed, "A.Q3.1", "4 GPUs, DDP, batch 512 per GPU: the estimate TN - T1/N is negative (-0.140 s)")
    assert one(seed, "A.Q3.1", "Communication-bound").text == (
        "Communication-bound (communication at least 50% of the train time; measured where measured, else "
        "estimated): 2 GPUs, DataParallel, batch 128 per GPU (81%), 4 GPUs, DataParallel, batch 128 per GPU (86%) "
        "and 4 GPUs, DataParallel, batch 512 per GPU (75%); computation-bound: 4 GPUs, DDP, batch 128 per GPU (46%).")
    ddp = one(seed, "A.Q3.2", "4 GPUs, DDP, batch 128")
    assert "each GPU all-reduces 6.57 GB per epoch (98 steps" in ddp.text and "no busbw measured" in ddp.text


# Q1, each condition on both sides


def test_q1_says_the_largest_batch_that_fits_and_the_first_oom(tmp_path):
    found = findings(tmp_path, [timed("single", 32, 1, 10.0, peak_mem_gib=2.0, gpu_util_pct=50.0),
                                timed("single", 128, 1, 5.0, peak_mem_gib=7.5, gpu_util_pct=90.0),
                                train_result(cell("single", 512), status="oom")])
    assert one(found, "A.Q1", "OOM").text == ("On 1 GPU (NVIDIA H200), batch 128 per GPU is the largest that fits, at "
                                              "7.50 GiB of peak memory and batch 512 does not (OOM).")


def test_q1_a_batch_without_result_below_the_oom_leaves_the_limit_open(tmp_path):
    found = findings(tmp_path, [timed("single", 32, 1, 10.0), train_result(cell("single", 128), status="failed"),
                                train_result(cell("single", 512), status="oom")])
    text = one(found, "A.Q1", "OOM").text
    assert "batch 32 per GPU is the largest that ran and batch 512 does not fit (OOM)" in text
    assert "batch 128 (failed: failed: by hand) between them has no result, so the limit lies between 32 and 512" in text


def test_q1_a_sweep_that_stops_early_never_claims_no_oom(tmp_path):
    found = findings(tmp_path, [timed("single", 32, 1, 10.0), timed("single", 128, 1, 5.0)],
                     planned=[cell("single", 512)], submitted=[cell("single", 512)])
    text = one(found, "A.Q1", "OOM").text
    assert text.startswith("The sweep did not reach OOM: it stopped at batch 128") and "at least 128" in text
    assert text.endswith("; without a result: batch 512 (pending).")


def test_q1_best_rate_distinguishable_or_not(tmp_path):
    apart = findings(tmp_path / "a", [timed("single", 32, 1, 11.0, 10.0, repeat=i) for i in range(2)]
                     + [timed("single", 128, 1, 6.0, t, repeat=i) for i, t in enumerate([5.0, 5.2])])
    assert texts(apart, "A.Q1", "batch 128 trains the most images per second")
    close = findings(tmp_path / "c", [timed("single", 32, 1, 11.0, t, repeat=i) for i, t in enumerate([5.0, 10.0])]
                     + [timed("single", 128, 1, 6.0, t, repeat=i) for i, t in enumerate([5.0, 5.2])])
    assert texts(close, "A.Q1", "batches 128 and 32 train at rates not distinguishable within their spread")


def test_q1_where_the_train_time_stops_falling(tmp_path):
    falls = findings(tmp_path / "f", [timed("single", b, 1, t + 1, t) for b, t in [(32, 9.0), (128, 5.0), (512, 3.0)]])
    assert texts(falls, "A.Q1", "falls at every step of the sweep, from 9.00 s at batch 32 to 3.00 s at batch 512")
    flat = findings(tmp_path / "s", [timed("single", b, 1, t + 1, t) for b, t in [(32, 9.0), (128, 5.0), (512, 5.0)]])
    assert texts(flat, "A.Q1", "falls from 9.00 s at batch 32 to 5.00 s at batch 128 and stops falling there: batch 512 "
                               "takes 5.00 s, not distinguishable from it")
    rises = findings(tmp_path / "r", [timed("single", b, 1, t + 1, t) for b, t in [(32, 9.0), (128, 9.5)]])
    assert texts(rises, "A.Q1", "does not fall beyond batch 32, at 9.00 s: batch 128 takes 9.50 s, more")


def test_q1_the_whole_epoch_is_said_where_it_stops_falling_elsewhere(tmp_path):
    found = findings(tmp_path, [timed("single", 128, 1, 4.0, 3.0), timed("single", 512, 1, 5.0, 2.0)])
    assert texts(found, "A.Q1", "the whole epoch (data loading included) does not fall beyond batch 128, at 4.00 s: "
                                "batch 512 takes 5.00 s, more; the time waiting on data goes from 1.00 s to 3.00 s")


def test_q1_gpu_use_where_sampled_and_the_cpu_caveat(tmp_path):
    gpu = findings(tmp_path / "g", [timed("single", 32, 1, 10.0, gpu_util_pct=55.0, peak_mem_gib=2.5),
                                    timed("single", 128, 1, 5.0)])
    assert texts(gpu, "A.Q1", "median GPU utilization over the timed epoch 55% at batch 32; peak memory 2.50 GiB at "
                              "batch 32; utilization not sampled at batch 128")
    assert not [f for f in gpu if f.question == "caveat"]
    cpu = findings(tmp_path / "c", [timed("single", 32, 1, 10.0, gpu_model="cpu"), timed("single", 128, 1, 5.0, gpu_model="cpu")])
    assert texts(cpu, "A.Q1", "not sampled in any Q1 run on 1 GPU (a CPU, not a GPU) (no GPU to sample)")
    caveat = one(cpu, "caveat")
    assert cpu[0] is caveat and caveat.text.startswith("2 of the 2 configurations with a result ran on a CPU, not a GPU")


# Q2


def test_q2_faster_slower_or_not_distinguishable_from_one_gpu(tmp_path):
    ones = [timed("single", 32, 1, t, repeat=i) for i, t in enumerate([9.0, 10.0, 11.0])]
    faster = findings(tmp_path / "f", ones + [timed("ddp", 32, 2, 6.0)])
    assert texts(faster, "A.Q2", "1.67x at batch 32 (efficiency 0.83; 6.00 s against 10.00 s (9.00-11.00 s over 3 runs): "
                                 "faster than 1 GPU), some from one run")
    slower = findings(tmp_path / "s", ones + [timed("ddp", 32, 2, 13.0)])
    assert texts(slower, "A.Q2", "0.77x at batch 32 (efficiency 0.38; 13.00 s against 10.00 s (9.00-11.00 s over 3 runs): "
                                 "slower than 1 GPU)")
    same = findings(tmp_path / "n", ones + [timed("ddp", 32, 2, 11.5)])
    assert texts(same, "A.Q2", "not distinguishable from 1 GPU")


def test_q2_ddp_against_dataparallel_both_ways_and_what_has_no_speedup(tmp_path):
    base = [timed("single", 32, 1, 10.0)]
    ddp_first = findings(tmp_path / "d", base + [timed("ddp", 32, 2, 6.0), timed("dp", 32, 2, 8.0)])
    assert texts(ddp_first, "A.Q2", "at batch 32, 6.00 s against 8.00 s (DDP faster, 1.33x as fast)")
    dp_first = findings(tmp_path / "p", base + [timed("ddp", 32, 2, 8.0), timed("dp", 32, 2, 6.0),
                                                train_result(cell("ddp", 128, 2), status="timeout")])
    assert texts(dp_first, "A.Q2", "at batch 32, 8.00 s against 6.00 s (DDP slower, 1.33x the time)")
    assert texts(dp_first, "A.Q2", "none at batch 128 (timeout)")


def test_q2_strong_scaling_above_or_below_weak(tmp_path):
    below = findings(tmp_path / "b", [timed("single", 32, 1, 10.0), timed("single", 64, 1, 6.0), timed("ddp", 32, 2, 4.0)])
    assert texts(below, "A.Q2", "runs 1.50x as fast as 1 GPU at batch 64 (efficiency 0.75), below the weak-scaling 2.50x")
    above = findings(tmp_path / "a", [timed("single", 32, 1, 10.0), timed("single", 64, 1, 12.0), timed("ddp", 32, 2, 4.0)])
    assert texts(above, "A.Q2", "runs 3.00x as fast as 1 GPU at batch 64 (efficiency 1.50), above the weak-scaling 2.50x")
    none = findings(tmp_path / "n", [timed("single", 32, 1, 10.0), timed("ddp", 32, 2, 4.0)])
    assert texts(none, "A.Q2", "No strong-scaling data point")


# Q3


def comm_run(tmp_path, t1_train: float, tn_train: float, exposed: Optional[float], busbw: Optional[float] = 100.0):
    """1 GPU at batch 32 with train time t1_train, DDP on 2 GPUs with tn_train, `exposed` seconds of it
    measured as exposed all-reduce (h2d + compute = tn_train)."""
    return findings(tmp_path, [timed("single", 32, 1, t1_train + 1, t1_train),
                               timed("ddp", 32, 2, tn_train + 1, tn_train, h2d_s=0.0, compute_s=tn_train,
                                     comm_exposed_s=exposed, busbw_gbps=busbw)])


def test_q3_estimate_and_measurement_agree_or_disagree(tmp_path):
    agree = comm_run(tmp_path / "a", 10.0, 6.0, 1.2)  # estimate 1 / 6 = 17%, measured 1.2 / 6 = 20%
    assert texts(agree, "A.Q3.1", "communication is 17% of the 6.00 s train time by the estimate TN - T1/N (1.00 s); "
                                  "20% measured (1.20 s")
    assert texts(agree, "A.Q3.1", "the two agree within 10 points")
    disagree = comm_run(tmp_path / "d", 10.0, 8.0, 0.4)  # estimate 3 / 8 = 38%, measured 5%
    assert texts(disagree, "A.Q3.1", "the two disagree by 32 points")


def test_q3_communication_bound_or_not(tmp_path):
    bound = comm_run(tmp_path / "b", 10.0, 12.0, 7.0)  # measured 7 / 12 = 58%
    assert texts(bound, "A.Q3.1", "Communication-bound (communication at least 50% of the train time; measured where "
                                  "measured, else estimated): 2 GPUs, DDP, batch 32 per GPU (58%); computation-bound: none.")
    free = comm_run(tmp_path / "f", 10.0, 6.0, 1.2)
    assert texts(free, "A.Q3.1", "): none; computation-bound: 2 GPUs, DDP, batch 32 per GPU (20%).")


def test_q3_bandwidth_share_above_busbw_says_the_backward_pass_hides_it(tmp_path):
    # 782 steps x 44,695,848 bytes = 34.95 GB per GPU; measured 0.1 s -> 349.5 GB/s, 3.5x a busbw of 100
    hidden = comm_run(tmp_path / "h", 10.0, 6.0, 0.1)
    text = one(hidden, "A.Q3.2").text
    assert "each GPU all-reduces 34.95 GB per epoch (782 steps" in text
    assert "over the measured communication time (0.100 s) 349.52 GB/s, 349.5% of the 100.00 GB/s busbw the job measured " \
           "(above it: all-reduces of this size take longer than that time, so the backward pass hides part of them)" in text
    exposed = comm_run(tmp_path / "e", 10.0, 6.0, 1.2)  # 34.95 GB / 1.2 s = 29.13 GB/s: 29.1% of 100
    assert "29.13 GB/s, 29.1% of the 100.00 GB/s busbw the job measured;" in one(exposed, "A.Q3.2").text
    assert "above it" not in one(exposed, "A.Q3.2").text


# Q4


def q4_runs(plain_acc=(0.42,), remedy_acc=(0.52,), base_acc=(0.70,), test=True):
    """The baseline (1 GPU b128) and 4 GPUs b2048 with no remedy and with linear LR scaling, each at
    the given 5th-epoch training accuracies (a repeat per value)."""
    def runs(c, accs):
        return [train_result(c.__class__(**{**c.to_dict(), "repeat": i}), accuracies=[0.1, 0.2, 0.3, 0.35, a],
                       test_accuracies=[0.1, 0.2, 0.3, 0.35, a - 0.02] if test else None)
                for i, a in enumerate(accs)]
    return (runs(cell("single", 128, epochs=5, timed_epoch=5), base_acc) + runs(q4(2048), plain_acc)
            + runs(q4(2048, lr_scaling="linear"), remedy_acc))


def test_q4_gap_and_a_remedy_that_leaves_a_gap(tmp_path):
    found = findings(tmp_path, q4_runs())
    plain = one(found, "A.Q4", "(global batch 8192, no remedy, LR 0.1 at epoch 5)")
    assert "training accuracy 42.00%, loss 0.4000; 28.00 points below the baseline's 70.00%" in plain.text
    assert "test accuracy after its last epoch 40.00%, 28.00 points below the baseline's 68.00%" in plain.text
    linear = one(found, "A.Q4", "linear LR scaling, LR")
    assert "linear LR scaling raises it 10.00 points against no remedy (42.00%)" in linear.text
    assert "it leaves a gap of 18.00 points to the baseline's 70.00%" in linear.text


def test_q4_a_remedy_that_closes_the_gap_or_goes_beyond(tmp_path):
    closes = findings(tmp_path / "c", q4_runs(base_acc=(0.66, 0.70, 0.74), remedy_acc=(0.69,)))
    assert texts(closes, "A.Q4", "it closes the gap: not distinguishable from the baseline's 70.00% (66.00%-74.00% over 3 runs)")
    beyond = findings(tmp_path / "b", q4_runs(remedy_acc=(0.75,)))
    assert texts(beyond, "A.Q4", "it goes 5.00 points beyond the baseline's 70.00%")


def test_q4_a_remedy_that_does_not_help_or_hurts(tmp_path):
    same = findings(tmp_path / "s", q4_runs(plain_acc=(0.40, 0.42, 0.46), remedy_acc=(0.43,)))
    assert texts(same, "A.Q4", "linear LR scaling leaves it not distinguishable against no remedy")
    worse = findings(tmp_path / "w", q4_runs(remedy_acc=(0.30,)))
    assert texts(worse, "A.Q4", "linear LR scaling lowers it 12.00 points against no remedy")


def test_q4_large_batch_within_the_baseline_spread_is_not_called_a_gap(tmp_path):
    found = findings(tmp_path, q4_runs(base_acc=(0.60, 0.70, 0.75), plain_acc=(0.66,)))
    assert texts(found, "A.Q4", "training accuracy 66.00%, loss 0.4000; not distinguishable from the baseline's 70.00%")


def test_q4_without_baseline_says_the_gap_cannot_be_computed(tmp_path):
    found = findings(tmp_path, [r for r in q4_runs() if r.cell["engine"] != "single"])
    assert texts(found, "A.Q4", "No baseline (batch 128 on 1 GPU, no remedy, 5+ epochs) has a result (not in study): "
                                "the large-batch gap cannot be computed.")
    assert not texts(found, "A.Q4", "points below the baseline")


# The lab


def lab_runs(one_gpu=(20.0,), two_gpu=(12.0,), acc_one=(0.60,), acc_two=(0.58,), nodes=1, util=None):
    runs = [train_result(cell("single", 128, repeat=i, **LIN), epoch_s=t, test_accuracies=[0.3, a], gpu_util_pct=util)
            for i, (t, a) in enumerate(zip(one_gpu, acc_one * len(one_gpu)))]
    runs += [train_result(cell("ddp", 128, 2 * nodes, nodes=nodes, repeat=i, **LIN), epoch_s=t, test_accuracies=[0.3, a],
                    gpu_util_pct=util)
             for i, (t, a) in enumerate(zip(two_gpu, acc_two * len(two_gpu)))]
    return runs


def test_lab_one_run_per_setup_with_its_lr_rule_speedup_and_utilization(tmp_path):
    found = findings(tmp_path, lab_runs(util=93.0))
    two = one(found, "lab", "2 GPUs, DDP, batch 128 per GPU (NVIDIA")
    assert two.text == ("2 GPUs, DDP, batch 128 per GPU (NVIDIA H200), 2 epochs, global batch 256, LR linear: 0.1 x "
                        "256/128 = 0.2: test accuracy 58.00%, 30.00 s to train; 1.67x as fast as 1 GPU's 50.00 s (faster), "
                        "efficiency 0.83; test accuracy 2.00 points below 1 GPU's 60.00% (LR 0.2 against 0.1); GPU "
                        "utilization 93% (median, timed epoch), one run each: no spread measured.")
    assert two.numbers["efficiency"] == pytest.approx(50 / 30 / 2)


def test_lab_slower_or_not_distinguishable_and_accuracy_within_spread(tmp_path):
    slower = findings(tmp_path / "s", lab_runs(two_gpu=(24.0,)))
    assert texts(slower, "lab", "0.83x as fast as 1 GPU's 50.00 s (slower)")
    same = findings(tmp_path / "n", lab_runs(one_gpu=(10.0, 20.0, 30.0), two_gpu=(18.0,), acc_one=(0.55, 0.60, 0.65)))
    assert texts(same, "lab", "(a difference within the runs' spread: not distinguishable)")


def test_lab_two_nodes_say_the_lr_counts_every_gpu_of_both(tmp_path):
    two_nodes = findings(tmp_path / "t", lab_runs(nodes=2))
    assert texts(two_nodes, "lab", "the LR rule counts all 4 GPUs of the 2 nodes in the global batch (the world size, "
                                   "not one node's GPUs)")
    one_node = findings(tmp_path / "o", lab_runs())
    assert not texts(one_node, "lab", "the LR rule counts all")


def test_lab_best_accuracy_against_the_next(tmp_path):
    apart = findings(tmp_path / "a", lab_runs(acc_one=(0.60,), acc_two=(0.50,)))
    assert texts(apart, "lab", "Best test accuracy: 60.00% by 1 GPU, batch 128 per GPU")
    assert texts(apart, "lab", "is 10.00 points lower")
    close = findings(tmp_path / "c", lab_runs(one_gpu=(20.0, 20.0, 20.0), acc_one=(0.58,), acc_two=(0.57,))
                     + [train_result(cell("single", 128, repeat=3, **LIN), epoch_s=20.0, test_accuracies=[0.3, 0.50])])
    assert texts(close, "lab", "is not distinguishable from it")


def test_lab_without_test_accuracy_says_so_once(tmp_path):
    found = findings(tmp_path, [timed("single", 32, 1, 10.0), timed("ddp", 32, 2, 6.0)])
    assert texts(found, "lab") == ["No run recorded test accuracy (results written before the job evaluated the test "
                                   "set, or cells with test_images = 0): the lab's questions have no answer here."]


def test_a_large_grid_describes_a_screenful_and_counts_the_rest(tmp_path):
    runs = [train_result(cell(engine, 32, gpus, lr=0.01 * (k + 1)), epoch_s=10.0 / gpus, test_accuracies=[0.1, 0.5])
            for k in range(15) for engine, gpus in (("single", 1), ("ddp", 2))]
    found = findings(tmp_path, runs)
    assert len(texts(found, "A.Q1", "The sweep did not reach OOM")) == 12
    assert texts(found, "A.Q1")[-1] == "3 more batch sweeps on 1 GPU are not described one by one: they are in table q1 " \
                                        "(from row 12)."
    assert texts(found, "A.Q2", "3 more multi-GPU setups") and texts(found, "A.Q3.1", "3 more multi-GPU runs")
    assert texts(found, "lab", "18 more runs are not described one by one")
    for question in {f.question for f in found}:  # at most 12 described, each in two findings at most
        assert len(texts(found, question)) <= 2 * 12 + 2, question
