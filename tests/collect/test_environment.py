"""The report's environment: what every kind's results ran on, each kind adding its own entries
(collect.kinds.KindTables.environment): the all-reduce backend of training and all-reduce runs."""
from __future__ import annotations

from collect.report import collect, environment
from jobs.allreduce.cell import AllreduceCell
from jobs.allreduce.result import AllreduceFindings, SizeTiming
from jobs.core.result import Result
from tests.factories import cell, train_result, write_results


def gloo_result(repeat: int) -> Result:
    c = AllreduceCell(backend="gloo", gpus_per_node=0, cpu_ranks_per_node=2, min_bytes=8, max_bytes=8, repeat=repeat)
    sizes = tuple(SizeTiming(n, 1e-3, n / 1e-3 / 1e9, n / 1e-3 / 1e9) for n in c.sizes())
    return Result(cell_id=c.cell_id, cell=c.to_dict(), status="ok", env={"hostnames": ["n1", "n1"]},
                  body=AllreduceFindings(2, "gloo", "cpu", c.warmup, c.iters, sizes))


def test_the_backend_row_counts_the_training_and_allreduce_runs(tmp_path):
    results = write_results(tmp_path, [train_result(cell("ddp", 32, 2), busbw_gbps=40.0), train_result(cell("single", 32)),
                                       *(gloo_result(repeat) for repeat in range(2))])
    rows = dict(environment(collect(results).cells))
    assert rows["all-reduce backend"] == "gloo (2 runs); nccl (1 runs)"


def test_a_dir_without_an_all_reduce_says_so(tmp_path):
    rows = dict(environment(collect(write_results(tmp_path, [train_result(cell("single", 32))])).cells))
    assert rows["all-reduce backend"] == "-" and rows["GPU model"] == "NVIDIA H200"
