"""The all-reduce study's questions (collect/allreduce/questions.py) from result files written by hand
(tests/collect/dirs.py's numbers): the peak and whether the sweep reached it (a verdict), where the
gradient sits, the regimes by share of the peak, what has no result, and the caveat for CPU ranks.

4 GPUs (3 repeats): busbw bucket 15 (12-18), gradient 16.5 (15-18) = the peak at the largest size;
  16.5 / 15 = 1.10x with a spread of 20% a side: inconclusive, so not "still rising";
  8-32 B far below half the peak: latency-bound; both big sizes >= 80%: bandwidth-bound.
2 nodes x 2 GPUs (1 ok of 3: 1 failed, 1 not submitted): bucket 7.5, gradient 9 = 1.2x, one run each:
  "still rising" as that one run went, with the one-run note.
"""
from __future__ import annotations

import pytest

from collect.questions import ONE_RUN
from collect.report import collect
from jobs.allreduce.cell import AllreduceCell
from tests.collect.dirs import (ALLREDUCE_NOT_SUBMITTED, ONE_NODE, SMALL, allreduce_results, seconds,
                               write_allreduce)
from tests.factories import allreduce_result


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    never = AllreduceCell(gpus_per_node=2, min_bytes=8, max_bytes=32)  # a setup planned, never run
    path = write_allreduce(tmp_path_factory.mktemp("ar"), allreduce_results(), planned=ALLREDUCE_NOT_SUBMITTED + (never,))
    return {a.id: a for a in collect(path).answers}


def test_the_peak_by_hand_and_still_rising_only_where_the_verdict_says_so(answers):
    peak = answers["allreduce.peak"]
    one, two = peak.record.peaks
    assert (one.setup, one.busbw_gbps.value, one.peak_bytes) == ("4 GPUs, nccl", pytest.approx(16.5), 44_695_848)
    assert one.rising.ratio == pytest.approx(1.1) and one.rising.outcome == "inconclusive" and not one.rising.one_run
    assert "4 GPUs, nccl: 16.5 GB/s (15-18 GB/s over 3 runs) at 42.6 MiB, the largest size swept (not clearly " \
           "rising against the size before)" in peak.text
    assert not one.beyond and two.beyond
    assert "2 nodes x 2 GPUs, nccl: 9 GB/s at 42.6 MiB, the highest measured: still rising from 7.5 GB/s at 25 MiB, " \
           "so the peak lies beyond the sweep and shares of it are upper bounds" in peak.text
    assert two.rising.one_run and ONE_RUN in peak.text
    assert [e.table for e in peak.record.evidence] == ["allreduce_sizes"] * 4


def test_the_gradient_sits_at_the_peak_and_its_regime_is_a_record_field(answers):
    g = answers["allreduce.gradient"]
    assert g.record.gradients == 11_173_962 and g.record.gradient_bytes == 11_173_962 * 4
    four = g.record.setups[0]
    assert (four.share_of_peak, four.regime) == (pytest.approx(1.0), "bandwidth-bound")
    assert four.bucket_share == pytest.approx(15 / 16.5)
    assert "4 GPUs, nccl: 16.5 GB/s (15-18 GB/s over 3 runs) at the whole gradient, 100% of its peak (bandwidth-bound); " \
           "15 GB/s (12-18 GB/s over 3 runs) at one bucket (90%)" in g.text


def test_the_regimes_by_share_of_the_peak(answers):
    r = answers["allreduce.regimes"]
    four = r.record.setups[0]
    assert (four.latency_bytes, four.between_bytes, four.bandwidth_bytes) == ((8, 16, 32), (), (26_214_400, 44_695_848))
    assert "4 GPUs, nccl: latency-bound 3 sizes, 8 B to 32 B, bandwidth-bound 25 MiB and 42.6 MiB" in r.text


def test_a_setup_without_result_is_said(answers):
    text = answers["allreduce.peak"].text
    assert "2 GPUs, nccl: no result (1 never submitted)" in text
    assert "2 nodes x 2 GPUs, nccl: 1 of 3 runs have a result (1 failed, 1 never submitted)" in text


def test_disjoint_ranges_at_the_largest_size_make_it_the_highest_measured_and_its_shares_upper_bounds(tmp_path):
    """The largest size above every run of the size before by under the 5% threshold: the verdict cannot tell
    (not "beyond"), yet the ranges do not overlap, so the peak is not reached (as the TA read 302-315 vs 325 GB/s):
    "not clearly rising" would be wrong, and every share of that busbw is an upper bound."""
    cells = [AllreduceCell(**ONE_NODE, repeat=r) for r in range(3)]
    bucket, gradient = (10.0, 10.1, 10.2), (10.35, 10.4, 10.45)  # 2.0% apart, no overlap
    runs = [allreduce_result(c, seconds(SMALL[c.repeat], (bucket[c.repeat], gradient[c.repeat]))) for c in cells]
    got = {a.id: a for a in collect(write_allreduce(tmp_path, runs, ())).answers}
    peak = got["allreduce.peak"]
    (p,) = peak.record.peaks
    assert p.rising.outcome == "inconclusive" and p.beyond
    assert "not clearly rising" not in peak.text and "the highest measured: still rising" in peak.text
    g = got["allreduce.gradient"].record.setups[0]
    assert g.beyond and "of the highest measured, an upper bound (bandwidth-bound)" in got["allreduce.gradient"].text
    assert "the peak lies beyond the sweep: the shares are upper bounds" in got["allreduce.regimes"].text


def test_cpu_ranks_carry_the_caveat(tmp_path):
    cpu = AllreduceCell(backend="gloo", gpus_per_node=0, cpu_ranks_per_node=2, min_bytes=8, max_bytes=32)
    only = collect(write_allreduce(tmp_path, [allreduce_result(cpu, seconds((20e-6,) * 3, (1.0, 1.0)))], ())).answers
    assert [a.id for a in only] == ["allreduce.peak", "allreduce.gradient", "allreduce.regimes"]
    assert all("CPU ranks: the copies go through this machine's memory, not a GPU link" in a.text for a in only)
