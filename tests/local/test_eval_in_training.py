"""The test set in training runs: evaluated after each epoch, outside its timed window, each DDP
rank its own shard, and every rank with the figures of one model over the whole test set."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, Subset

import jobs.train.faithful
from jobs.__main__ import free_port
from jobs.core.phases import PhaseClock
from jobs.train import run as train
from jobs.train.cell import Cell
from jobs.runtime.data import open_test_set, open_train_set
from jobs.runtime.evaluate import evaluate
from jobs.train.faithful import FaithfulTrainer
from jobs.train.fast import FastTrainer
from jobs.runtime.launch import Placement
from jobs.train.model import build_model
from jobs.train.pipeline import eval_transform

TINY = dict(model="tiny", dataset="synthetic", train_images=48, loader_workers=0, batch_per_gpu=8)
ODD = 7  # test images: the two ranks' shards differ in size


def _rank(rank: int, cell: Cell, data: Path, port: int, out: Path) -> None:
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        place = Placement(rank=rank, world_size=2, local_rank=rank, master_addr="127.0.0.1", master_port=port,
                          launcher="test", local_world_size=2)
        trainer_class = FastTrainer if cell.pipeline == "fast" else FaithfulTrainer
        trainer = trainer_class(cell, place, torch.device("cpu"), data)
        trainer.train_epoch(1)  # each rank's BatchNorm statistics now differ
        found = trainer.evaluate_test()
        model = trainer.model if cell.pipeline == "fast" else trainer.plain_model
        torch.save({"found": (found.images, found.correct, found.loss), "model": model.state_dict()},
                   out / f"rank{rank}.pt")
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("pipeline", ["faithful", "fast"])
def test_two_ranks_evaluate_each_test_image_once_as_one_process_would(tmp_path, pipeline):
    cell = Cell(engine="ddp", gpus_per_node=2, pipeline=pipeline, test_images=ODD, **TINY)
    data = tmp_path / "data"
    open_train_set(cell, data)  # the synthetic set, written once before the ranks start
    mp.spawn(_rank, args=(cell, data, free_port(), tmp_path), nprocs=2)
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in range(2)]
    assert ranks[0]["found"] == ranks[1]["found"], "every rank has the whole test set's figures"
    images, correct, loss = ranks[0]["found"]
    assert images == ODD

    model = build_model("tiny")
    model.load_state_dict(ranks[0]["model"])  # rank 0's weights: what its checkpoint saves
    test_set = Subset(open_test_set(cell, data, eval_transform()), range(ODD))
    alone = evaluate(model, DataLoader(test_set, batch_size=3), "cpu")
    assert (alone.images, alone.correct) == (ODD, correct)
    assert loss == pytest.approx(alone.loss, abs=1e-5)


SLOW_EVAL_S = 2.5


def test_evaluation_is_outside_the_timed_epoch_and_the_gpu_monitor(tmp_path, monkeypatch):
    """A slow evaluation (2.5 s, far above a tiny epoch even on a busy machine) changes no epoch
    time, is not sampled with the timed epoch, and is timed itself."""
    events: list[str] = []
    real = jobs.train.faithful.evaluate

    def slow(*args, **kwargs):
        events.append("evaluate")
        time.sleep(SLOW_EVAL_S)
        return real(*args, **kwargs)

    class Monitor:
        def __enter__(self):
            events.append("monitor on")

        def __exit__(self, *exc):
            events.append("monitor off")

    monkeypatch.setattr(jobs.train.faithful, "evaluate", slow)
    cell = Cell(engine="single", epochs=2, timed_epoch=2, **TINY)
    place = Placement(rank=0, world_size=1, local_rank=0, master_addr="127.0.0.1", master_port=0, launcher="none")
    trainer = FaithfulTrainer(cell, place, torch.device("cpu"), tmp_path / "data")
    clock = PhaseClock("body")
    epochs = train.fit(trainer, tmp_path / "ckpt.pt", lambda line: None, Monitor(), clock)  # type: ignore[arg-type]
    assert events == ["evaluate", "monitor on", "monitor off", "evaluate"]
    assert all(e.epoch_s < SLOW_EVAL_S <= e.eval_s for e in epochs), [(e.epoch_s, e.eval_s) for e in epochs]
    phases = clock.phases(None, None)
    assert phases.eval_s >= 2 * SLOW_EVAL_S > phases.epochs_s, "the job's phases put the evaluation where it was"
    assert all(e.test_images == 100 for e in epochs), "the synthetic set's 100 test images (fewer than asked)"


def test_a_cell_with_no_test_images_evaluates_nothing(tmp_path):
    cell = Cell(engine="single", epochs=1, timed_epoch=1, test_images=0, **TINY)
    place = Placement(rank=0, world_size=1, local_rank=0, master_addr="127.0.0.1", master_port=0, launcher="none")
    trainer = FaithfulTrainer(cell, place, torch.device("cpu"), tmp_path / "data")
    (stats,) = train.fit(trainer, tmp_path / "ckpt.pt", lambda line: None, train.GpuMonitor([]), PhaseClock("body"))
    assert (stats.test_loss, stats.test_accuracy, stats.test_images, stats.eval_s) == (None,) * 4
    assert "test acc" not in train.epoch_line(stats, 1)


def test_the_resident_test_set_is_the_eval_transforms_images_bit_for_bit(tmp_path):
    """Held on the device instead of loaded by workers after each epoch: the same pixels and labels,
    each rank its own part, every image in one part."""
    from jobs.train.pipeline import resident_test_set

    cell = Cell(engine="single", epochs=1, timed_epoch=1, test_images=ODD, **TINY)
    loaded = open_test_set(cell, tmp_path / "data", eval_transform())
    expected = torch.stack([loaded[k][0] for k in range(ODD)])
    parts = [resident_test_set(cell, tmp_path / "data", torch.device("cpu"), rank, 2) for rank in (0, 1)]
    assert all(part is not None for part in parts)
    images = torch.cat([part[0] for part in parts if part is not None])
    labels = torch.cat([part[1] for part in parts if part is not None])
    assert torch.equal(images, expected), "ToTensor and Normalize's numbers, to the bit"
    assert labels.tolist() == [loaded[k][1] for k in range(ODD)]
    assert [len(part[0]) for part in parts if part is not None] == [3, 4]
