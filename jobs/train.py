"""One cell's training run: run(cell, out_dir, data_dir) in 1 process, DP, or as a DDP rank."""
from __future__ import annotations

import datetime as dt
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import torch
import torch.distributed as dist
from torch import nn

from jobs import comm, environment, launch
from jobs.cell import Cell
from jobs.model import build_model
from jobs.pipeline import FaithfulPipeline
from jobs.result import EpochStats, Result, Timed, read_good_result, write_result
from jobs.schedule import lr_at
from jobs.timing import PhaseTimer
from jobs.oom import OutOfMemory, check_fits, is_oom


@dataclass
class Run:
    """What the loop needs, built once per cell."""

    cell: Cell
    place: launch.Placement
    device: torch.device
    model: nn.Module
    optimizer: torch.optim.Optimizer
    pipeline: FaithfulPipeline
    batch_size: int  # images per process per step

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def pick_device(place: launch.Placement) -> torch.device:
    if not torch.cuda.is_available():
        return torch.device("cpu")
    index = place.local_rank % torch.cuda.device_count()
    torch.cuda.set_device(index)
    return torch.device("cuda", index)


def build(cell: Cell, place: launch.Placement, device: torch.device, data_dir: Path) -> Run:
    torch.manual_seed(cell.seed)
    model = build_model(cell.model)
    if cell.sync_bn and cell.engine == "ddp":
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.to(device)
    batch_size = cell.batch_per_gpu
    if cell.engine == "dp":
        batch_size = cell.batch_per_gpu * cell.gpus_per_node
        if device.type == "cuda":
            if torch.cuda.device_count() < cell.gpus_per_node:
                raise RuntimeError(f"cell asks {cell.gpus_per_node} GPUs; this node shows {torch.cuda.device_count()}")
            model = nn.DataParallel(model, device_ids=list(range(cell.gpus_per_node)))
    elif cell.engine == "ddp" and place.world_size > 1:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    optimizer = torch.optim.SGD(
        model.parameters(), lr=cell.lr, momentum=cell.momentum, weight_decay=cell.weight_decay
    )
    pipeline = FaithfulPipeline(
        cell, data_dir, batch_size, place.rank, place.world_size, pin=device.type == "cuda"
    )
    return Run(cell, place, device, model, optimizer, pipeline, batch_size)


def train_epoch(run: Run, epoch: int) -> EpochStats:
    """One epoch; `epoch` is 1-based. Loss and accuracy are summed over all ranks."""
    run.model.train()
    run.pipeline.set_epoch(epoch)
    steps = len(run.pipeline)
    totals = torch.zeros(3, dtype=torch.float64, device=run.device)  # loss sum, correct, images
    criterion = nn.CrossEntropyLoss()
    timer = PhaseTimer(run.sync)
    batches = iter(run.pipeline)
    start = time.perf_counter()
    timer.restart()
    for step in range(steps):
        images, labels = next(batches)
        timer.lap("data_wait")
        images = images.to(run.device, non_blocking=True)
        labels = labels.to(run.device, non_blocking=True)
        timer.lap("h2d")
        lr = lr_at(run.cell, epoch - 1 + step / steps)
        for group in run.optimizer.param_groups:
            group["lr"] = lr
        with torch.autocast(run.device.type, dtype=torch.bfloat16, enabled=run.cell.precision == "bf16"):
            logits = run.model(images)
            loss = criterion(logits, labels)
        run.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        run.optimizer.step()
        with torch.no_grad():
            totals += torch.stack([
                loss.detach().double() * labels.numel(),
                (logits.argmax(1) == labels).sum().double(),
                torch.tensor(labels.numel(), dtype=torch.float64, device=run.device),
            ])
        timer.lap("compute")
    run.sync()
    epoch_s = time.perf_counter() - start
    if run.place.world_size > 1:
        dist.all_reduce(totals)
    loss_sum, correct, images_seen = totals.tolist()
    wait = timer.totals["data_wait"]
    return EpochStats(
        epoch=epoch, epoch_s=epoch_s, train_s=epoch_s - wait, images=int(images_seen),
        images_per_s=images_seen / epoch_s, loss=loss_sum / images_seen, accuracy=correct / images_seen,
        lr=lr, data_wait_s=wait, h2d_s=timer.totals["h2d"], compute_s=timer.totals["compute"],
    )


def fit(run: Run, log) -> list[EpochStats]:
    check_fits(run)
    epochs = []
    for epoch in range(1, run.cell.epochs + 1):
        stats = train_epoch(run, epoch)
        epochs.append(stats)
        log(f"epoch {epoch}/{run.cell.epochs}: {stats.epoch_s:.2f} s, train {stats.train_s:.2f} s, "
            f"loss {stats.loss:.4f}, acc {stats.accuracy:.3f}, {stats.images_per_s:.0f} img/s")
    return epochs


def _gather_hosts(place: launch.Placement, env: dict) -> None:
    mine = (env["hostname"], place.node_name)
    everyone = [mine]
    if place.world_size > 1:
        everyone = [None] * place.world_size
        dist.all_gather_object(everyone, mine)
    env["hostnames"] = sorted({h for h, _ in everyone})
    env["nodes"] = sorted({n for _, n in everyone if n})


def run(cell: Cell, out_dir: Path, data_dir: Path) -> str:
    """Train the cell and write its result (rank 0). Returns the status. Idempotent: a good
    result already on disk is kept and nothing is trained."""
    out_dir, data_dir = Path(out_dir), Path(data_dir)
    done = read_good_result(out_dir, cell.cell_id)
    if done is not None:
        return done.status
    place = launch.detect()
    device = pick_device(place)
    log = (lambda msg: print(f"[{cell.cell_id}] {msg}", flush=True)) if place.rank == 0 else (lambda msg: None)
    started = dt.datetime.now(dt.timezone.utc).isoformat()
    if place.world_size > 1:
        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(
            backend, init_method=f"tcp://{place.master_addr}:{place.master_port}",
            rank=place.rank, world_size=place.world_size, timeout=dt.timedelta(minutes=10),
        )
    env = environment.describe(device)
    result = Result(cell_id=cell.cell_id, cell=cell.to_dict(), status="ok", env=env)
    failure: Optional[BaseException] = None
    try:
        _gather_hosts(place, env)
        log(f"{cell.label} on {env['gpu_model']} x{place.world_size} ({place.launcher})")
        training = build(cell, place, device, data_dir)
        result.epochs = fit(training, log)
        timed = result.epochs[cell.timed_epoch - 1]
        result.timed = Timed(epoch=timed.epoch, epoch_s=timed.epoch_s, train_s=timed.train_s)
        result.comm = comm.measure(training)
    except OutOfMemory as exc:
        result.status, result.error = "oom", str(exc)
        log(f"oom: {exc}")
    except Exception as exc:  # the result records it; the job still fails
        if is_oom(exc):
            result.status, result.error = "oom", str(exc).splitlines()[0]
        else:
            result.status, result.error = "failed", "".join(traceback.format_exception(exc))[-4000:]
            failure = exc
    if device.type == "cuda":
        result.peak_mem_gib = torch.cuda.max_memory_allocated(device) / 2**30
    env.update(
        world_size=place.world_size, launcher=place.launcher, job_id=place.job_id,
        array_task_id=place.array_task_id, started_at=started,
        ended_at=dt.datetime.now(dt.timezone.utc).isoformat(),
    )
    if place.rank == 0:
        write_result(out_dir, result)
        log(f"result {result.status}: {out_dir / (cell.cell_id + '.json')}")
    if place.world_size > 1 and failure is None:
        dist.destroy_process_group()
    if failure is not None:
        raise failure
    return result.status
