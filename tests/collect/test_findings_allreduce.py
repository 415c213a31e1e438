"""The all-reduce study's findings from result files written by hand (tests/collect/dirs.py's
numbers): the peak and whether the sweep reached it, the gradient's busbw, the regimes, what has no
result, and the caveat for CPU ranks.

4 GPUs (3 repeats): busbw bucket 15 (12-18), gradient 16.5 (15-18) = the peak at the largest size;
  16.5 - 15 = 1.5 is within the spread (6): not "still rising"; latency-bound 8 B and 16 B,
  bandwidth-bound from the bucket (25 MiB).
2 nodes x 2 GPUs (1 ok of 3: 1 failed, 1 not submitted): bucket 7.5, gradient 9 (one run: any rise counts):
  still rising at the largest size swept.
"""
from __future__ import annotations

import pytest

from collect.report import collect
from jobs.allreduce.cell import AllreduceCell
from tests.collect.dirs import ALLREDUCE_NOT_SUBMITTED, allreduce_results, seconds, write_allreduce
from tests.factories import allreduce_result


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    never = AllreduceCell(gpus_per_node=2, min_bytes=8, max_bytes=32)  # a setup planned, never run
    path = write_allreduce(tmp_path_factory.mktemp("ar"), allreduce_results(), planned=ALLREDUCE_NOT_SUBMITTED + (never,))
    return {f.text.split(":")[0]: f for f in collect(path).findings}


def test_peak_gradient_and_regimes_by_hand(found):
    text = found["4 GPUs, nccl"].text
    assert text == ("4 GPUs, nccl: busbw peaks at 16.5 GB/s (15-18 GB/s over 3 runs) at 42.6 MiB; at ResNet-18's "
                    "gradient (42.6 MiB, what DDP all-reduces per step) 16.5 GB/s (15-18 GB/s over 3 runs), 100% of the "
                    "peak; latency-bound (time within 2x the least) up to 16 B; bandwidth-bound (80% of the peak or "
                    "more) from 25 MiB.")
    assert found["4 GPUs, nccl"].numbers["peak_busbw_gbps"] == pytest.approx(16.5)


def test_a_rise_beyond_the_spread_at_the_largest_size_says_the_peak_may_lie_beyond(found):
    two = found["2 nodes x 2 GPUs, nccl"].text
    assert "busbw peaks at 9 GB/s at 42.6 MiB; still rising at the largest size swept" in two
    assert "from 1 of its 3 cells (1 failed, 1 not submitted)" in two and two.endswith(", one run: no spread measured.")
    assert "still rising" not in found["4 GPUs, nccl"].text


def test_a_setup_without_result_is_said(found):
    assert found["2 GPUs, nccl"].text == "2 GPUs, nccl: no result (1 not submitted)."
    assert [e.table for e in found["2 GPUs, nccl"].evidence] == ["allreduce_cells"]


def test_cpu_ranks_carry_the_caveat(tmp_path):
    cpu = AllreduceCell(backend="gloo", gpus_per_node=0, cpu_ranks_per_node=2, min_bytes=8, max_bytes=32)
    only = collect(write_allreduce(tmp_path, [allreduce_result(cpu, seconds((20e-6,) * 3, (1.0, 1.0)))], ())).findings
    assert [f.text.split(":")[0] for f in only] == ["2 CPU ranks, gloo (CPU ranks"]
    assert "(CPU ranks: the copies go through this machine's memory, not a GPU link)" in only[0].text
    assert only[0].evidence
