"""The all-reduce cell: every field checked with a line naming it and the fix, ids that do not
change, the size list (sweep + ResNet-18's gradient + DDP's bucket), and no torch on import."""
from __future__ import annotations

import subprocess
import sys

import pytest

from jobs.allreduce.cell import DDP_BUCKET_BYTES, GRADIENT_BYTES, AllreduceCell, bytes_text, ranks_text
from jobs.core.cell import CellError
from jobs.core.kinds import cell_from_dict

TINY = dict(backend="gloo", gpus_per_node=0, cpu_ranks_per_node=2, min_bytes=8, max_bytes=65536, factor=4,
            warmup=1, iters=3)


def test_ids_are_pinned():
    """Pinned: a change to these ids orphans every result written before (add fields with care)."""
    assert AllreduceCell().cell_id == "ab625ed525d2"
    assert AllreduceCell(**TINY).cell_id == "89f93275fa00"
    assert AllreduceCell(nodes=2, gpus_per_node=2, repeat=1).cell_id == "630660f983ba"


def test_round_trip_through_json_and_the_kinds_registry():
    cell = AllreduceCell(**TINY)
    data = cell.to_dict()
    assert data["kind"] == "allreduce" and data["min_bytes"] == 8
    assert cell_from_dict(data) == cell and cell_from_dict(data).cell_id == cell.cell_id


def test_the_greene_sweep_is_every_power_of_two_from_8_bytes_to_1_gib_and_the_two_marked_sizes():
    sizes = AllreduceCell(min_bytes=8, max_bytes=2**30, factor=2).sizes()
    assert sizes == tuple(sorted([2**k for k in range(3, 31)] + [GRADIENT_BYTES, DDP_BUCKET_BYTES]))
    assert GRADIENT_BYTES == 44_695_848 and DDP_BUCKET_BYTES == 26_214_400 and len(sizes) == 30


def test_the_tiny_sweep_steps_by_four_and_stops_at_or_below_max_bytes():
    assert AllreduceCell(**TINY).sizes() == (8, 32, 128, 512, 2048, 8192, 32768, DDP_BUCKET_BYTES, GRADIENT_BYTES)


def test_sizes_are_rounded_up_to_whole_fp32_elements_and_so_is_the_id():
    odd = AllreduceCell(min_bytes=7, max_bytes=65535)
    assert (odd.min_bytes, odd.max_bytes) == (8, 65536)
    assert odd == AllreduceCell(min_bytes=8, max_bytes=65536) and odd.cell_id == AllreduceCell(min_bytes=8, max_bytes=65536).cell_id
    assert all(n % 4 == 0 for n in AllreduceCell(min_bytes=1, max_bytes=100).sizes())


def test_resources_and_names():
    gpu, cpu = AllreduceCell(nodes=2, gpus_per_node=2), AllreduceCell(**TINY)
    assert (gpu.tasks_per_node, gpu.gpus, gpu.ranks, gpu.device, gpu.label) == (2, 4, 4, "cuda", "allreduce-nccl-2x2g-r0")
    assert (cpu.tasks_per_node, cpu.gpus, cpu.ranks, cpu.device, cpu.label) == (2, 0, 2, "cpu", "allreduce-gloo-2cpu-r0")
    assert cpu.plan_columns() == {"ranks": "2 CPU ranks, gloo", "sizes": "8 B .. 64 KiB x4 + gradient + bucket: 9",
                                  "iterations": "1 warm-up + 3 timed per size"}
    assert ranks_text(2, 2, 2) == "2 nodes x 2 GPUs" and ranks_text(2, 0, 1) == "2 nodes x 1 CPU rank"
    assert [bytes_text(n) for n in (8, 1024, 65536, 2**30, GRADIENT_BYTES)] == ["8 B", "1 KiB", "64 KiB", "1 GiB", "42.6 MiB"]


def test_the_estimate_is_its_formula_worked_by_hand():
    """sizes 8, 25 MiB, 42.6 MiB on the CPU's nominal link (100 us, 1e9 B/s), 25 calls each:
    10 + 25 x (3 x 1e-4 + 2 x (8 + 26,214,400 + 44,695,848) / 1e9) = 10 + 25 x 0.142120512."""
    cell = AllreduceCell(backend="gloo", gpus_per_node=0, cpu_ranks_per_node=2, min_bytes=8, max_bytes=8)
    assert cell.estimate_s(8000.0) == pytest.approx(10 + 25 * 0.142120512)


@pytest.mark.parametrize("fields, expected", [
    (dict(gpus_per_node=0), "backend 'nccl' runs on GPUs, but gpus_per_node = 0; give gpus_per_node >= 1"),
    (dict(gpus_per_node=0, cpu_ranks_per_node=2), "backend 'nccl' runs on GPUs"),
    (dict(backend="gloo", gpus_per_node=0), "no ranks: give gpus_per_node >= 1, or cpu_ranks_per_node >= 1"),
    (dict(cpu_ranks_per_node=2), "give gpus_per_node (a rank per GPU) or cpu_ranks_per_node"),
    (dict(gpus_per_node=1), "an all-reduce over 1 rank moves nothing"),
    (dict(min_bytes=1024, max_bytes=512), "min_bytes (1024) must be <= max_bytes (512); swap them"),
    (dict(factor=3), "factor must be one of [2, 4]"),
    (dict(min_bytes=0), "min_bytes must be >= 1"),
    (dict(max_bytes=2**35), "max_bytes must be <= 17179869184"),
    (dict(iters=0), "iters must be >= 1"),
    (dict(warmup=-1), "warmup must be >= 0"),
    (dict(nodes=0), "nodes must be >= 1"),
    (dict(backend="mpi"), "backend must be one of ['nccl', 'gloo'], got 'mpi'"),
    (dict(iters=True), "iters must be a whole number, got True"),
    (dict(max_bytes="1GiB"), "max_bytes must be a whole number, got '1GiB'"),
    (dict(min_bytes=8.0), "min_bytes must be a whole number, got 8.0"),
])
def test_a_bad_field_is_named_with_its_fix(fields, expected):
    with pytest.raises(CellError, match=None) as info:
        AllreduceCell(**fields)
    assert expected in str(info.value)


def test_from_dict_refuses_unknown_fields_and_other_kinds():
    with pytest.raises(CellError, match=r"unknown allreduce cell field\(s\) \['bytes'\]; valid fields"):
        AllreduceCell.from_dict({"kind": "allreduce", "bytes": 8})
    with pytest.raises(CellError, match="not a allreduce cell: kind = 'ptq'"):
        AllreduceCell.from_dict({"kind": "ptq"})


def test_the_bucket_is_ddps_as_the_job_knows_it():
    from jobs.runtime import comm  # torch: only here

    assert DDP_BUCKET_BYTES == comm.DDP_BUCKET_BYTES


def test_the_cell_and_its_result_import_no_torch():
    code = ("import sys, jobs.allreduce, jobs.allreduce.cell, jobs.allreduce.result, jobs.core.kinds; "
            "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))[:3]")
    subprocess.run([sys.executable, "-c", code], check=True)
