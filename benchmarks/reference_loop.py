"""The homework's training loop written plainly, to hold the faithful pipeline against.

torchvision's CIFAR10 with RandomCrop(32, 4), RandomHorizontalFlip, ToTensor, Normalize;
a DataLoader with 2 workers (persistent, pinned: the plain loop's best form); cudnn.benchmark;
SGD lr 0.1, momentum 0.9, weight decay 5e-4; loss and accuracy summed on the GPU (no .item()
per step). Only the model class and the data files come from the project; nothing of its
loop, timing or bookkeeping. Under torchrun it is DDP with a DistributedSampler and set_epoch;
with --dp N, one process drives N GPUs through nn.DataParallel (global batch N x --batch).

    python benchmarks/reference_loop.py --batch 128 --data DIR --out OUT.json [--epochs 2] [--dp 4]
    torchrun --standalone --nproc_per_node=2 benchmarks/reference_loop.py --batch 128 ...

Each epoch: epoch_s (synchronize, then wall time of the whole epoch), data_wait_s (time in
the loader's __next__), train_s = epoch_s - data_wait_s (host clock; the jobs time their
steps on the GPU instead, which this plain loop does not).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, Subset
from torchvision import transforms

from jobs.runtime.data import CIFAR10Files, ensure_synthetic
from jobs.train.model import ResNet18


def loader(data_root: Path, images: int, batch: int, rank: int, world: int) -> DataLoader:
    transform = transforms.Compose([
        transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(), transforms.ToTensor(),
        transforms.Normalize((0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)),
    ])
    dataset = CIFAR10Files(str(data_root), train=True, download=False, transform=transform)
    dataset = Subset(dataset, range(min(images, len(dataset))))
    sampler = DistributedSampler(dataset, world, rank) if world > 1 else None
    return DataLoader(dataset, batch_size=batch, shuffle=sampler is None, sampler=sampler, num_workers=2,
                      persistent_workers=True, pin_memory=torch.cuda.is_available())


def sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train_epoch(model, data: DataLoader, optimizer, device) -> dict:
    model.train()
    sums = torch.zeros(2, device=device)
    wait = 0.0
    sync(device)
    start = time.perf_counter()
    batches = iter(data)
    while True:
        before = time.perf_counter()
        try:
            images, labels = next(batches)
        except StopIteration:
            break
        wait += time.perf_counter() - before
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        outputs = model(images)
        loss = nn.functional.cross_entropy(outputs, labels)
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            sums += torch.stack([loss.detach() * labels.numel(), (outputs.argmax(1) == labels).sum().float()])
    sync(device)
    epoch_s = time.perf_counter() - start
    return {"epoch_s": epoch_s, "data_wait_s": wait, "train_s": epoch_s - wait, "loss_sum": sums[0].item()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, required=True, help="images per GPU per step")
    parser.add_argument("--data", type=Path, default=Path("data"))
    parser.add_argument("--images", type=int, default=50_000, help="synthetic CIFAR-10 of this many images")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dp", type=int, default=1, help="DataParallel over this many GPUs")
    args = parser.parse_args()
    world, rank, local = (int(os.environ.get(k, d)) for k, d in (("WORLD_SIZE", 1), ("RANK", 0), ("LOCAL_RANK", 0)))
    cuda = torch.cuda.is_available()  # the CPU only for the tests
    if world > 1:
        dist.init_process_group("nccl" if cuda else "gloo")
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(local)
    torch.backends.cudnn.benchmark = True
    root = args.data / f"synthetic-cifar10-{args.images}-s0"  # where the jobs write the same set
    if rank == 0:
        ensure_synthetic(root, args.images, 0)
    if world > 1:
        dist.barrier()
    data = loader(root, args.images, args.batch * args.dp, rank, world)
    torch.manual_seed(0)
    model = ResNet18().to(device)
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local] if cuda else None)
    elif args.dp > 1:
        model = nn.DataParallel(model, device_ids=list(range(args.dp)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    epochs = []
    for epoch in range(args.epochs):
        if world > 1:
            data.sampler.set_epoch(epoch)
        epochs.append(train_epoch(model, data, optimizer, device))
        if rank == 0:
            print(f"reference gpus={max(world, args.dp)} batch={args.batch} epoch {epoch + 1}: {epochs[-1]['epoch_s']:.3f} s, "
                  f"train {epochs[-1]['train_s']:.3f} s, data wait {epochs[-1]['data_wait_s']:.3f} s", flush=True)
    if rank == 0:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        engine = "dp" if args.dp > 1 else "ddp" if world > 1 else "single"
        args.out.write_text(json.dumps({"gpus": max(world, args.dp), "engine": engine, "batch_per_gpu": args.batch,
                                        "images": args.images,
                                        "gpu": torch.cuda.get_device_name(device) if cuda else "cpu",
                                        "epochs": epochs}, indent=1))
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
