"""One cell's training run: run(cell, out_dir, data_dir) in 1 process, DP, or as a DDP rank."""
from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Optional

import torch
import torch.distributed as dist

from jobs.runtime import checkpoint, comm, launch
from jobs.train.cell import Cell
from jobs.train.evidence import ddp_evidence, gathered_spread
from jobs.train.faithful import FaithfulTrainer
from jobs.train.fast import FastTrainer
from jobs.runtime.gpu_monitor import GpuMonitor
from jobs.core.layout import checkpoint_path
from jobs.core.phases import PhaseClock
from jobs.runtime.oom import check_fits
from jobs.train.result import CommStats, DDPEvidence, EpochStats, Timed, TrainBody
from jobs.runtime.envelope import Job, Log, run_job
from jobs.train.trainer import Trainer



def cudnn_benchmark(cell: Cell) -> bool:
    """Let cuDNN time its convolution kernels in the first (untimed) epoch and keep the best,
    except under DataParallel: it runs each replica's forward on a new thread every step, and
    cuDNN's benchmark cache is per thread (pytorch/pytorch#191744), so every step re-timed
    every convolution: 0.6-0.9 s per step on 2 H200s instead of 0.04 s."""
    return cell.engine != "dp"


def cudnn_engines_timed(cell: Cell) -> int:
    """How many of cuDNN's engines the benchmark times per convolution (0: all). All, for the
    fast pipeline: its step at batch 512 on an H200 went from 5.81-5.95 to 5.72-5.73 ms
    (benchmarks/RESULTS-h200.md). The faithful pipeline keeps torch's default, 10."""
    return 0 if cell.pipeline == "fast" else 10


def gpus_needed_here(place: launch.Placement, cell: Cell) -> int:
    """One GPU per rank on this node; DataParallel's one process drives gpus_per_node."""
    return cell.gpus_per_node if cell.engine == "dp" else place.local_world_size


def pick_device(place: launch.Placement, cell: Cell) -> torch.device:
    if not torch.cuda.is_available():
        return torch.device("cpu")
    visible, needed = torch.cuda.device_count(), gpus_needed_here(place, cell)
    if visible < needed:  # ranks would share a GPU (NCCL refuses it) or DP would lack one
        raise RuntimeError(f"cell {cell.label} needs {needed} GPUs on this node, which shows {visible}; "
                           f"run it where {needed} are visible")
    index = place.local_rank
    torch.cuda.set_device(index)
    torch.backends.cudnn.benchmark = cudnn_benchmark(cell)
    torch.backends.cudnn.benchmark_limit = cudnn_engines_timed(cell)
    return torch.device("cuda", index)


def physical_gpus(device: torch.device, cell: Cell) -> list[int]:
    """The GPUs this process drives (all of the node's under DataParallel), numbered as NVML
    numbers them: physically, where CUDA_VISIBLE_DEVICES may renumber them."""
    visible = [int(v) for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip().isdigit()]
    mine = list(range(cell.gpus_per_node)) if cell.engine == "dp" else [device.index or 0]
    return [visible[i] if i < len(visible) else i for i in mine]


def intra_op_threads(cell: Cell, place: launch.Placement, slurm_cpus: str, machine_cpus: int) -> int:
    """torch's intra-op threads for this rank: the CPUs SLURM gave the task (off SLURM, an even
    share of this machine among the ranks on it), less one per loader worker. torch would take
    every core, and ranks and loader workers sharing them would thrash."""
    cpus = int(slurm_cpus) if slurm_cpus.isdigit() else machine_cpus // max(1, place.local_world_size)
    workers = cell.loader_workers if cell.pipeline == "faithful" else 0
    return max(1, cpus - workers)


def make_trainer(cell: Cell, place: launch.Placement, device: torch.device, data_dir: Path) -> Trainer:
    trainer_class = FastTrainer if cell.pipeline == "fast" else FaithfulTrainer
    return trainer_class(cell, place, device, data_dir)


def evaluate_after(trainer: Trainer, stats: EpochStats) -> None:
    """The test set after an epoch, into its stats; run outside the epoch's timed window and the
    GPU monitor's, so neither the epoch time nor the utilisation counts it."""
    start = time.perf_counter()
    found = trainer.evaluate_test()  # reads its sums back: the evaluation has ended when it returns
    if found is not None:
        stats.test_loss, stats.test_accuracy, stats.test_images = found.loss, found.accuracy, found.images
        stats.eval_s = time.perf_counter() - start


def epoch_line(stats: EpochStats, epochs: int) -> str:
    test = "" if stats.test_accuracy is None else f", test acc {stats.test_accuracy:.3f}"
    return (f"epoch {stats.epoch}/{epochs}: {stats.epoch_s:.3f} s, train {stats.train_s:.3f} s, "
            f"loss {stats.loss:.4f}, acc {stats.accuracy:.3f}{test}, {stats.images_per_s:.0f} img/s")


def resume(trainer: Trainer, ckpt: Path, log: Log) -> list[EpochStats]:
    """The epochs a checkpoint holds, the trainer loaded from it; none (from epoch 1) when there
    is none, or when it is unreadable (named: the next epoch's save replaces it atomically)."""
    try:
        state = checkpoint.load(ckpt, trainer.device)
    except checkpoint.CheckpointError as exc:
        log(f"checkpoint {exc.path} is unreadable ({exc.reason}): training from epoch 1")
        return []
    if state is None:
        return []
    trainer.load(state["trainer"])
    log(f"resumed from {ckpt} after epoch {len(state['epochs'])}")
    return [EpochStats(**e) for e in state["epochs"]]


def fit(trainer: Trainer, ckpt: Path, log: Log, monitor: GpuMonitor, clock: PhaseClock,
        after_training: Callable[[], None] = lambda: None) -> list[EpochStats]:
    """Train the remaining epochs; after each, rank 0 checkpoints (weights, optimizer,
    the epochs so far). A restarted job picks up after the last finished epoch. The test set is
    evaluated after each epoch, before the checkpoint. Each step's time goes to its phase.
    after_training runs once, after the last epoch and before its evaluation (which gives every
    rank rank 0's BatchNorm statistics)."""
    cell, place = trainer.cell, trainer.place
    with clock.phase("setup"):
        check_fits(trainer)
        epochs = resume(trainer, ckpt, log)
    for epoch in range(len(epochs) + 1, cell.epochs + 1):
        with clock.phase("epochs"), (monitor if epoch == cell.timed_epoch else contextlib.nullcontext()):
            stats = trainer.train_epoch(epoch)  # NVML samples while the timed epoch runs
        if epoch == cell.epochs:
            with clock.phase("measure"):
                after_training()
        with clock.phase("eval"):
            evaluate_after(trainer, stats)
        epochs.append(stats)
        if place.rank == 0 and epoch < cell.epochs:  # saved before the line that announces the epoch
            with clock.phase("write"):
                checkpoint.save(ckpt, {"trainer": trainer.state(), "epochs": [dataclasses.asdict(e) for e in epochs]})
        log(epoch_line(stats, cell.epochs))
    return epochs


def is_ddp(trainer: Trainer) -> bool:
    """DDP on 2+ ranks: the runs that exchange gradients."""
    return trainer.cell.engine == "ddp" and trainer.place.world_size > 1


def measure_comm(trainer: Trainer, epochs: list[EpochStats]) -> Optional[CommStats]:
    """All-reduce bandwidth and exposed communication, for DDP on 2+ ranks (after training)."""
    place, device = trainer.place, trainer.device
    if not is_ddp(trainer):
        return None
    exposed = trainer.exposed_comm_per_step()
    grad_bytes = comm.gradient_bytes(trainer.model)
    sizes = comm.measure(grad_bytes, device, place.world_size)
    if exposed is not None:
        for stats in epochs:
            stats.comm_exposed_s = exposed * trainer.steps
    full = sizes[0]
    return CommStats(
        world_size=place.world_size, grad_bytes=grad_bytes, allreduce_s=full["seconds"],
        algbw_gbps=full["algbw_gbps"], busbw_gbps=full["busbw_gbps"], backend=dist.get_backend(),
        exposed_per_step_s=exposed, sizes=sizes,
    )


def train(cell: Cell, job: Job) -> TrainBody:
    """The training kind's body: the epochs, the timed figure, the GPUs sampled, communication,
    and under DDP the evidence for Q5-Q7 (the BatchNorm spread taken before the last evaluation)."""
    with job.clock.phase("setup"):
        trainer = make_trainer(cell, job.place, job.device, job.data_dir)
        on_gpu = job.device.type == "cuda" and job.place.rank == 0
        monitor = GpuMonitor(physical_gpus(job.device, cell) if on_gpu else [])
    spread: list[float] = []  # the BatchNorm spread across ranks, once trained

    def measure_spread() -> None:
        if is_ddp(trainer):
            spread.append(gathered_spread(trainer.model, job.place.world_size))

    epochs = fit(trainer, checkpoint_path(job.out_dir, cell.cell_id), job.log, monitor, job.clock, measure_spread)
    timed = epochs[cell.timed_epoch - 1]
    gpu_util = monitor.summary()
    with job.clock.phase("measure"):
        comm_stats = measure_comm(trainer, epochs)
        evidence: Optional[DDPEvidence] = ddp_evidence(trainer, spread[-1] if spread else None) if is_ddp(trainer) else None
    if trainer.graph_error:
        job.env["cuda_graph_error"] = trainer.graph_error
    job.env["cuda_graph"] = trainer.cuda_graph
    job.env["compiled"] = trainer.compiled
    return TrainBody(epochs, Timed(epoch=timed.epoch, epoch_s=timed.epoch_s, train_s=timed.train_s), comm_stats, gpu_util,
                     evidence)


def device_for(cell: Cell, place: launch.Placement) -> torch.device:
    """This rank's device, with the process's CPU threads set for it."""
    device = pick_device(place, cell)
    torch.set_num_threads(intra_op_threads(cell, place, os.environ.get("SLURM_CPUS_PER_TASK", ""),
                                           len(os.sched_getaffinity(0))))
    return device


def run(cell: Cell, out_dir: Path, data_dir: Path) -> str:
    """Train the cell and write its result (rank 0). Returns the status. Idempotent: a good
    result already on disk is kept and nothing is trained."""
    return run_job(cell, out_dir, data_dir, lambda job: train(cell, job), lambda place: device_for(cell, place),
                   run_seed=cell.run_seed)
