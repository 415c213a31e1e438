"""A job stopped mid-training and started again resumes from its last finished epoch, and
its result has every epoch exactly once (what a SLURM requeue does)."""
from __future__ import annotations

import json
import subprocess
import sys

from jobs.train.cell import Cell
from jobs.core.layout import checkpoint_path, result_path
from jobs.core.result import read_result


def test_killed_job_resumes_after_its_last_epoch(tmp_path):
    cell = Cell(engine="single", batch_per_gpu=16, model="tiny", dataset="synthetic", train_images=1200,
                loader_workers=0, epochs=4, timed_epoch=4)
    (tmp_path / "cell.json").write_text(json.dumps(cell.to_dict()))
    command = [sys.executable, "-m", "jobs", "--cell", str(tmp_path / "cell.json"), "--out", str(tmp_path / "out"),
               "--data", str(tmp_path / "data")]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    for line in first.stdout:
        if "epoch 2/4" in line:
            break
    first.kill()  # the checkpoint is written before the epoch's line
    first.wait()
    assert not result_path(tmp_path / "out", cell.cell_id).exists()
    assert checkpoint_path(tmp_path / "out", cell.cell_id).exists()

    second = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert "resumed from" in second.stdout and "after epoch 2" in second.stdout
    assert "epoch 1/4" not in second.stdout
    result = read_result(result_path(tmp_path / "out", cell.cell_id))
    assert [e.epoch for e in result.body.epochs] == [1, 2, 3, 4]
    assert all(e.test_accuracy is not None for e in result.body.epochs), "the checkpoint keeps the test figures"
    assert result.body.timed.epoch == 4
    assert not checkpoint_path(tmp_path / "out", cell.cell_id).exists(), "checkpoint removed once the result is written"


def test_a_corrupt_checkpoint_is_named_and_the_cell_trains_from_its_first_epoch(tmp_path):
    cell = Cell(engine="single", batch_per_gpu=16, model="tiny", dataset="synthetic", train_images=64,
                loader_workers=0, epochs=2, timed_epoch=2, test_images=0)
    (tmp_path / "cell.json").write_text(json.dumps(cell.to_dict()))
    ckpt = checkpoint_path(tmp_path / "out", cell.cell_id)
    ckpt.parent.mkdir(parents=True)
    ckpt.write_bytes(b"PK\x03\x04 cut short")  # a zip header and nothing after it
    run = subprocess.run([sys.executable, "-m", "jobs", "--cell", str(tmp_path / "cell.json"), "--out",
                          str(tmp_path / "out"), "--data", str(tmp_path / "data")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert f"checkpoint {ckpt} is unreadable" in run.stdout and "training from epoch 1" in run.stdout
    result = read_result(result_path(tmp_path / "out", cell.cell_id))
    assert [e.epoch for e in result.body.epochs] == [1, 2]
    assert not ckpt.exists()
