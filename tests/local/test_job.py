"""The training job end to end with no SLURM: `python -m jobs` on a tiny model."""
from __future__ import annotations

import subprocess
import sys

from jobs.train.cell import Cell
from jobs.runtime.oom import SIMULATE_ENV
from jobs.core.result import read_result
from tests.helpers import TINY_JOB as TINY, run_job


def test_single_cell_writes_every_epoch_and_the_timed_one(tmp_path):
    cell = Cell(engine="single", batch_per_gpu=16, **TINY)
    job = run_job(tmp_path, cell)
    assert job.code == 0
    result = read_result(job.path)
    assert result.status == "ok" and result.cell == cell.to_dict()
    assert [e.epoch for e in result.body.epochs] == [1, 2]
    assert all(e.images == 48 for e in result.body.epochs)
    assert result.body.timed.epoch == 2 and result.body.timed.epoch_s == result.body.epochs[1].epoch_s
    second = result.body.epochs[1]
    assert 0 < second.train_s <= second.epoch_s
    assert second.train_s == second.h2d_s + second.compute_s, "the steps' time, without waiting on data"
    assert second.train_s <= second.epoch_s - second.data_wait_s
    assert result.env["world_size"] == 1 and result.env["gpu_model"] == "cpu"
    assert result.env["compiled"] is False and result.env["cuda_graph"] is False, "the faithful step is eager"
    for e in result.body.epochs:  # the synthetic set's whole test batch (100 images), after every epoch
        assert e.test_images == 100 and 0 <= e.test_accuracy <= 1 and e.test_loss > 0 and e.eval_s > 0
    assert not list(job.path.parent.glob(".*.tmp")), "no temporary file left behind"


def test_ddp_cell_spawns_its_ranks_and_measures_allreduce(tmp_path):
    cell = Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=8, **TINY)
    job = run_job(tmp_path, cell)
    assert job.code == 0
    result = read_result(job.path)
    assert result.status == "ok" and result.env["world_size"] == 2
    assert result.body.epochs[1].images == 48  # both ranks' shards together
    assert [e.test_images for e in result.body.epochs] == [100, 100], "each test image once, over both ranks"
    assert result.body.comm.world_size == 2 and result.body.comm.backend == "gloo"
    assert result.body.comm.grad_bytes == 1586 * 4  # the tiny CNN's parameters, fp32
    assert abs(result.body.comm.busbw_gbps - result.body.comm.algbw_gbps * 2 * (2 - 1) / 2) < 1e-12
    steps = 3  # 48 images, 8 per rank and step, 2 ranks
    assert result.body.comm.exposed_per_step_s is not None
    assert all(abs(e.comm_exposed_s - result.body.comm.exposed_per_step_s * steps) < 1e-12 for e in result.body.epochs)


def test_batch_that_does_not_fit_is_an_oom_result_and_no_rank_hangs(tmp_path):
    cell = Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=32, **TINY)
    job = run_job(tmp_path, cell, {SIMULATE_ENV: "16"}, timeout=120)
    assert job.code == 0
    result = read_result(job.path)
    assert result.status == "oom" and "does not fit" in result.error
    assert result.body is None, "an oom run records no findings"


def test_a_good_result_is_never_redone(tmp_path):
    cell = Cell(engine="single", batch_per_gpu=16, **TINY)
    first = run_job(tmp_path, cell)
    assert first.code == 0
    before = first.path.read_bytes()
    assert run_job(tmp_path, cell).code == 0
    assert first.path.read_bytes() == before


def test_unreadable_cell_file_is_exit_2_without_traceback(tmp_path):
    bad = tmp_path / "cell.json"
    bad.write_text('{"engine": "single", "batch_per_gpu": 0}')
    proc = subprocess.run([sys.executable, "-m", "jobs", "--cell", str(bad), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "batch_per_gpu must be > 0" in proc.stderr and "Traceback" not in proc.stderr
