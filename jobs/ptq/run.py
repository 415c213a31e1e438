"""Run one PTQ cell: train the notebook's two networks (or reuse them), quantize them every way
the cell asks, and write the result (the shared envelope, with the findings under "ptq").

A trained network is kept under <results>/nets/<training_id>.pt, so cells that differ only in
their quantization axes, and a rerun after a failure, train nothing again.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import torch

from jobs.runtime import checkpoint
import jobs.ptq.lenet as lenet
from jobs.runtime.data import open_test_set, open_train_set
from jobs.core.layout import net_path
from jobs.ptq.train import TrainSettings, train
from jobs.ptq.experiment import run_ptq
from jobs.ptq.listing import listings
from jobs.ptq.cell import PTQCell
from jobs.ptq.result import PTQFindings, TrainedNet
from jobs.runtime.envelope import run_job

MODELS = (("Net", False), ("NetWithBias", True))


def pick_device(cell: PTQCell) -> torch.device:
    """The GPU a 1-GPU cell was given (SLURM makes it device 0), else the CPU."""
    return torch.device("cuda:0" if cell.gpus_per_node and torch.cuda.is_available() else "cpu")


def trained(cell: PTQCell, with_bias: bool, images: torch.Tensor, labels: torch.Tensor,
            out_dir: Path) -> tuple[lenet.Net, TrainedNet]:
    """The network trained as the cell says: from nets/ when a run already trained it, else
    trained now and kept there (atomically: a file there that did not load is replaced)."""
    name = MODELS[with_bias][0]
    training_id = cell.training_id(with_bias)
    path = net_path(out_dir, training_id)
    net = lenet.build(with_bias, seed=cell.training_seed).to(images.device)
    kept = _kept(cell, path, net, name, training_id)
    if kept is not None:
        return net, kept
    net = lenet.build(with_bias, seed=cell.training_seed).to(images.device)  # a failed load may have half-filled it
    settings = TrainSettings(epochs=cell.epochs, batch_size=cell.batch_size, lr=cell.lr, momentum=cell.momentum,
                             seed=cell.training_seed)
    report = train(net, images, labels, settings)
    facts: dict[str, Any] = dict(train_s=report.train_s, epoch_losses=tuple(report.epoch_losses),
                                 cuda_graph=report.cuda_graph, device=images.device.type)
    checkpoint.save(path, {"state": net.state_dict(), "report": facts})
    return net, TrainedNet(name, training_id, False, **facts)


def _kept(cell: PTQCell, path: Path, net: lenet.Net, name: str, training_id: str) -> Optional[TrainedNet]:
    """The network saved at `path`, loaded into `net`; None when there is none, or when it does not
    load (cut short, corrupt, another network's weights): that is said, naming the file."""
    try:
        saved = checkpoint.load(path, next(net.parameters()).device)
        if saved is None:
            return None
        net.load_state_dict(saved["state"])
        return TrainedNet(name, training_id, True, **saved["report"])
    except checkpoint.CheckpointError as exc:
        reason = exc.reason
    except (KeyError, TypeError, RuntimeError) as exc:  # other keys, or weights of another shape
        reason = f"not a trained {name}: {(str(exc).splitlines() or [type(exc).__name__])[0]}"
    print(f"[{cell.cell_id}] {path} is unreadable ({reason}); training the network again and replacing it",
          flush=True)
    return None


def quantize(cell: PTQCell, device: torch.device, data_dir: Path, out_dir: Path) -> PTQFindings:
    train_set, test_set = open_train_set(cell, data_dir), open_test_set(cell, data_dir)
    images, labels = lenet.resident(train_set, device, limit=cell.train_images)
    test = lenet.resident(test_set, device, limit=cell.test_images)
    nets, facts = zip(*(trained(cell, with_bias, images, labels, out_dir) for _, with_bias in MODELS), strict=True)
    outcome = run_ptq(nets[0], nets[1], (images, labels), test, cell.config(), device)
    return PTQFindings(tuple(facts), outcome, listings())


def run(cell: PTQCell, out_dir: Path, data_dir: Path) -> str:
    """Quantize the cell and write its result. Returns the status. Idempotent: a good result
    already on disk is kept and nothing runs."""
    return run_job(cell, out_dir, data_dir, lambda job: quantize(cell, job.device, job.data_dir, job.out_dir),
                   lambda place: pick_device(cell), run_seed=cell.training_seed)
