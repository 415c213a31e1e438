"""The all-reduce study through the same verbs as training, on this machine: plan -> submit
--wait -> status -> collect over 2 gloo CPU ranks; the job alone through `python -m jobs`
(idempotent, and a GPU cell without GPUs fails saying why); its mistakes exit 2 at plan time; and
the Greene study on a 1-GPU machine: every cell skipped with why."""
from __future__ import annotations

import pytest

from jobs.allreduce.cell import AllreduceCell
from jobs.core.result import read_result
from orchestrator.cli import main
from tests.helpers import assert_plan_refuses, ALLREDUCE_TINY, cell_states, cli_json, one_gpu_machine, run_job

TINY = str(ALLREDUCE_TINY)


def test_plan_submit_status_collect_locally(in_tmp, capsys):
    assert main(["plan", "--study", TINY]) == 0
    assert main(["submit", "--study", TINY, "--executor", "local", "--wait", "--interval", "0.5"]) == 0
    cells = cell_states(capsys, TINY)
    assert [(c["label"], c["state"]) for c in cells] == [("allreduce-gloo-2cpu-r0", "done"),
                                                          ("allreduce-gloo-2cpu-r1", "done")]
    for c in cells:
        result = read_result(in_tmp / "runs" / "allreduce-tiny" / f"{c['cell_id']}.json")
        cell = AllreduceCell.from_dict(result.cell)
        found = result.body
        assert (result.status, result.env["world_size"], found.world_size, found.backend, found.device) == (
            "ok", 2, 2, "gloo", "cpu")
        assert tuple(s.bytes for s in found.sizes) == cell.sizes() and len(found.sizes) == 9
        assert (found.warmup, found.iters) == (1, 3)

    tables = cli_json(capsys, "collect", "--study", TINY)
    assert {r["setup"] for r in tables["allreduce_sizes"]} == {"2 CPU ranks, gloo"}
    assert [r["repeats"] for r in tables["allreduce_sizes"]] == [2] * 9
    assert [r["what"] for r in tables["allreduce_marked"]] == ["ResNet-18 gradient", "DDP bucket"]
    assert all(r["busbw_gbps"] > 0 for r in tables["allreduce_sizes"])

    assert main(["submit", "--study", TINY, "--executor", "local"]) == 0
    assert "submitted 0 cell(s)" in capsys.readouterr().out


def test_the_job_alone_is_idempotent(tmp_path):
    cell = AllreduceCell(backend="gloo", gpus_per_node=0, cpu_ranks_per_node=2, min_bytes=8, max_bytes=8, iters=1,
                         warmup=0)
    first = run_job(tmp_path, cell, timeout=120)
    assert first.code == 0, first.stderr
    assert "busbw (GB/s)" in first.stdout and "42.6 MiB" in first.stdout  # rank 0's one line per size
    written = first.path.stat().st_mtime_ns
    from jobs.allreduce.run import run  # in this process, as one rank: a good result is kept, nothing runs

    assert run(cell, first.path.parent, tmp_path / "data") == "ok" and first.path.stat().st_mtime_ns == written


def test_a_gpu_cell_where_there_are_no_gpus_fails_saying_why(tmp_path, monkeypatch):
    import torch

    from jobs.allreduce.run import run

    if torch.cuda.is_available():
        pytest.skip("this machine has GPUs")
    for name, value in dict(RANK="0", WORLD_SIZE="2", LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1").items():
        monkeypatch.setenv(name, value)  # rank 0 of 2, as torchrun starts it
    cell = AllreduceCell(gpus_per_node=2, min_bytes=8, max_bytes=8)
    with pytest.raises(RuntimeError, match="needs 2 GPUs on this node, which shows 0"):
        run(cell, tmp_path, tmp_path)
    result = read_result(tmp_path / f"{cell.cell_id}.json")
    assert result.status == "failed" and result.body is None
    assert "needs 2 GPUs on this node, which shows 0; run it where they are visible" in result.error


@pytest.mark.parametrize("edit, expected", [
    (lambda s: s.replace('backend = "gloo"', 'backend = "nccl"'), "backend 'nccl' runs on GPUs, but gpus_per_node = 0"),
    (lambda s: s.replace("factor = 4", "factor = 3"), "factor must be one of [2, 4] (the sweep's step), got 3"),
    (lambda s: s.replace("max_bytes = 65536", "max_bytes = 4"), "min_bytes (8) must be <= max_bytes (4); swap them"),
    (lambda s: s.replace("max_bytes = 65536", 'max_bytes = "64KiB"'), "max_bytes must be a whole number, got '64KiB'"),
    (lambda s: s.replace("cpu_ranks_per_node = 2", "cpu_ranks_per_node = 1"), "an all-reduce over 1 rank moves nothing"),
    (lambda s: s.replace("iters = 3", "iterations = 3"), "iterations"),
])
def test_a_bad_allreduce_study_is_one_line_exit_2_at_plan(in_tmp, capsys, edit, expected):
    assert_plan_refuses(in_tmp, capsys, edit(ALLREDUCE_TINY.read_text()), expected)


def test_the_greene_study_on_a_one_gpu_machine_is_planned_and_every_cell_skipped_with_why(in_tmp, monkeypatch, capsys):
    one_gpu_machine(in_tmp, monkeypatch)
    assert main(["plan", "--study", "allreduce", "--profile", "greene"]) == 0
    out = capsys.readouterr().out
    assert "9 cells in 3 arrays" in out  # plan does not ask the machine: the plan is for the cluster
    assert main(["submit", "--study", "allreduce", "--executor", "local"]) == 0
    out = capsys.readouterr().out
    assert "local: submitted 0 cell(s)" in out and "needs 2 GPUs, this machine has 1" in out
    assert "needs 4 GPUs, this machine has 1" in out
    cells = cell_states(capsys, "allreduce")
    assert [c["state"] for c in cells] == ["skipped"] * 9
    assert {c["detail"].split(";")[0] for c in cells} == {"needs 2 GPUs, this machine has 1",
                                                          "needs 4 GPUs, this machine has 1"}
    assert main(["collect", "--study", "allreduce"]) == 2  # nothing ran: collect says so, writes no answers
    assert "no results yet in runs/allreduce" in capsys.readouterr().err
