"""A job stopped mid-training and started again resumes from its last finished epoch, and
its result has every epoch exactly once (what a SLURM requeue does)."""
from __future__ import annotations

import subprocess

from jobs.train.cell import Cell
from jobs.core.layout import checkpoint_path, result_path
from jobs.core.result import read_result
from tests.helpers import job_command, run_job


def test_killed_job_resumes_after_its_last_epoch(tmp_path):
    cell = Cell(engine="single", batch_per_gpu=16, model="tiny", dataset="synthetic", train_images=1200,
                loader_workers=0, epochs=4, timed_epoch=4)
    first = subprocess.Popen(job_command(tmp_path, cell), stdout=subprocess.PIPE, text=True)
    for line in first.stdout:
        if "epoch 2/4" in line:
            break
    first.kill()  # the checkpoint is written before the epoch's line
    first.wait()
    out = tmp_path / "results"
    assert not result_path(out, cell.cell_id).exists()
    assert checkpoint_path(out, cell.cell_id).exists()

    second = run_job(tmp_path, cell, timeout=120)
    assert second.code == 0, second.stderr
    assert "resumed from" in second.stdout and "after epoch 2" in second.stdout
    assert "epoch 1/4" not in second.stdout
    result = read_result(second.path)
    assert [e.epoch for e in result.body.epochs] == [1, 2, 3, 4]
    assert all(e.test_accuracy is not None for e in result.body.epochs), "the checkpoint keeps the test figures"
    assert result.body.timed.epoch == 4
    assert not checkpoint_path(out, cell.cell_id).exists(), "checkpoint removed once the result is written"


def test_a_corrupt_checkpoint_is_named_and_the_cell_trains_from_its_first_epoch(tmp_path):
    cell = Cell(engine="single", batch_per_gpu=16, model="tiny", dataset="synthetic", train_images=64,
                loader_workers=0, epochs=2, timed_epoch=2, test_images=0)
    ckpt = checkpoint_path(tmp_path / "results", cell.cell_id)
    ckpt.parent.mkdir(parents=True)
    ckpt.write_bytes(b"PK\x03\x04 cut short")  # a zip header and nothing after it
    run = run_job(tmp_path, cell, timeout=120)
    assert run.code == 0, run.stderr
    assert f"checkpoint {ckpt} is unreadable" in run.stdout and "training from epoch 1" in run.stdout
    result = read_result(run.path)
    assert [e.epoch for e in result.body.epochs] == [1, 2]
    assert not ckpt.exists()
