"""The all-reduce findings read back from JSON: a round trip, and a hostile block refused with
TypeError or ValueError naming the field (never a string or bool taken as a number)."""
from __future__ import annotations

import copy
import math

import pytest

from jobs.allreduce.cell import DDP_BUCKET_BYTES as BUCKET, GRADIENT_BYTES as GRADIENT, AllreduceCell
from jobs.allreduce.result import AllreduceFindings
from jobs.core.bandwidth import bandwidth_gbps
from tests.factories import allreduce_result


def findings() -> AllreduceFindings:
    """4 GPUs, nccl: 8 B in 20 us, 32 B in 40 us, DDP's bucket in 3 ms and ResNet-18's gradient in 5 ms."""
    cell = AllreduceCell(gpus_per_node=4, min_bytes=8, max_bytes=32, factor=4)
    return allreduce_result(cell, {8: 2e-5, 32: 4e-5, BUCKET: 3e-3, GRADIENT: 5e-3}).body


def test_bandwidth_is_nccl_tests_formula_by_hand():
    """1e9 bytes in 0.1 s: algbw 10 GB/s; over 4 ranks busbw = 10 x 2 x 3 / 4 = 15; over 2 ranks = 10."""
    assert bandwidth_gbps(10**9, 0.1, 4) == pytest.approx((10.0, 15.0))
    assert bandwidth_gbps(10**9, 0.1, 2) == pytest.approx((10.0, 10.0))


def test_the_job_and_the_reader_share_the_formula():
    from jobs.runtime import comm  # torch: only here

    figures = comm.bandwidth(44_695_848, 0.0123, 8)
    assert (figures["algbw_gbps"], figures["busbw_gbps"]) == pytest.approx(bandwidth_gbps(44_695_848, 0.0123, 8))


def test_round_trip():
    data = findings().to_dict()
    assert data["sizes"][1] == {"bytes": 32, "seconds": 4e-5, "algbw_gbps": pytest.approx(0.0008),
                                "busbw_gbps": pytest.approx(0.0012)}  # 32 B / 40 us; x 2 x 3 / 4
    assert AllreduceFindings.from_dict(data) == findings()


def edit(path: str, value):
    data = findings().to_dict()
    where: dict = data
    *parents, name = path.split(".")
    for key in parents:
        where = where[int(key)] if isinstance(where, list) else where[key]
    last = int(name) if isinstance(where, list) else name
    if value is KeyError:
        del where[last]
    else:
        where[last] = value
    return data


@pytest.mark.parametrize("path, value, error, words", [
    ("sizes.1.seconds", "4e-5", TypeError, "allreduce.sizes[1].seconds must be a number, got '4e-5'"),
    ("sizes.0.bytes", True, TypeError, "allreduce.sizes[0].bytes must be a whole number, got True"),
    ("sizes.0.bytes", 10, ValueError, "allreduce.sizes[0].bytes must be a multiple of 4"),
    ("sizes.2.seconds", -1.0, ValueError, "allreduce.sizes[2].seconds must be a finite number > 0"),
    ("sizes.2.seconds", math.nan, ValueError, "allreduce.sizes[2].seconds must be a finite number > 0"),
    ("sizes.2.busbw_gbps", 99.0, ValueError, "allreduce.sizes[2].busbw_gbps = 99.0 disagrees with bytes / seconds"),
    ("sizes.1.algbw_gbps", "Infinity", TypeError, "allreduce.sizes[1].algbw_gbps must be a number"),
    ("sizes.1.extra", 1, ValueError, "allreduce.sizes[1]: unknown ['extra']"),
    ("sizes.1.seconds", KeyError, ValueError, "allreduce.sizes[1]: missing ['seconds']"),
    ("sizes.1", [1], TypeError, "allreduce.sizes[1] must be an object, got list"),
    ("sizes", {}, TypeError, "allreduce.sizes must be a list, got dict"),
    ("sizes", [], ValueError, "allreduce.sizes is empty"),
    ("world_size", "4", TypeError, "allreduce.world_size must be a whole number, got '4'"),
    ("world_size", 1, ValueError, "allreduce.world_size must be >= 2, got 1"),
    ("backend", "mpi", ValueError, "allreduce.backend must be one of ['nccl', 'gloo'], got 'mpi'"),
    ("device", 0, TypeError, "allreduce.device must be a string, got 0"),
    ("iters", 0, ValueError, "allreduce.iters must be >= 1, got 0"),
])
def test_a_hostile_block_is_refused_naming_the_field(path, value, error, words):
    with pytest.raises(error) as info:
        AllreduceFindings.from_dict(edit(path, value))
    assert words in str(info.value)


@pytest.mark.parametrize("data", [None, [], "x", 3])
def test_a_block_that_is_not_an_object_is_refused(data):
    with pytest.raises(TypeError, match="allreduce must be an object"):
        AllreduceFindings.from_dict(copy.deepcopy(data))


def test_sizes_out_of_order_or_twice_are_refused():
    data = findings().to_dict()
    for sizes in (data["sizes"][::-1], data["sizes"][:1] * 2):
        with pytest.raises(ValueError, match="allreduce.sizes must be in ascending bytes, each once"):
            AllreduceFindings.from_dict(dict(data, sizes=sizes))
