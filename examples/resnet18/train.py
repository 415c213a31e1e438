"""The homework's ResNet-18 on CIFAR-10 as a plain script, for the `command` kind.

One file, torch and torchvision only: the CIFAR variant of ResNet-18 (3x3 stem, no max-pool),
RandomCrop(32, 4) + RandomHorizontalFlip + Normalize, a DataLoader with 2 workers, SGD (lr 0.1,
momentum 0.9, weight decay 5e-4). Under torchrun's environment with WORLD_SIZE > 1 it is DDP with
a DistributedSampler (set_epoch each epoch). Each epoch appends one JSON line to the file
$ORCHESTRATOR_METRICS names (rank 0's are the cell's metrics):

    epoch      1-based
    epoch_s    the epoch's wall time: the GPU synchronised before and after, never inside
    train_s    the steps' copies and compute on the GPU (CUDA events, read after the epoch)
    loss       mean training loss over the epoch's images (every rank's)
    accuracy   training accuracy over them, as a fraction

Nothing in the timed loop makes the CPU wait for the GPU: loss and hits are summed on the GPU
and read once the epoch is over. --data DIR holds cifar-10-batches-py/ (torchvision's files, or
the project's synthetic set in the same format: `python -m jobs.data --synthetic DIR`).

    python train.py --data DIR --batch 128 --epochs 2
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, Subset
from torchvision import datasets, transforms

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)
        self.conv2, self.bn2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(out + self.shortcut(x))


class ResNet18(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64)
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [Block(cin, cout, stride), Block(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*blocks)
        self.linear = nn.Linear(512, classes)

    def forward(self, x):
        out = self.layers(F.relu(self.bn1(self.conv1(x))))
        return self.linear(F.adaptive_avg_pool2d(out, 1).flatten(1))


class CIFAR10Files(datasets.CIFAR10):
    """torchvision's CIFAR-10 reader without its md5 check: synthetic files in the same format
    have other checksums (the real files still read the same)."""

    train_list = [[name, None] for name, _ in datasets.CIFAR10.train_list]
    test_list = [[name, None] for name, _ in datasets.CIFAR10.test_list]
    meta = {**datasets.CIFAR10.meta, "md5": None}


def loader(args, rank, world, pin):
    augment = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.RandomHorizontalFlip(),
                                  transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
    data = CIFAR10Files(args.data, train=True, download=False, transform=augment)
    if args.images < len(data):
        data = Subset(data, range(args.images))
    sampler = DistributedSampler(data, world, rank, shuffle=True, seed=args.seed) if world > 1 else None
    return DataLoader(data, batch_size=args.batch, shuffle=sampler is None, sampler=sampler,
                      num_workers=args.workers, persistent_workers=args.workers > 0, pin_memory=pin)


def train_epoch(model, data, optimizer, device):
    """One epoch; returns (epoch_s, train_s, [loss sum, hits, images] on the device)."""
    model.train()
    cuda = device.type == "cuda"
    sums = torch.zeros(3, dtype=torch.float64, device=device)
    marks = []  # (start, end) of each step's copies and compute: CUDA events, or host times on a CPU
    if cuda:
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    for images, labels in data:
        begin = torch.cuda.Event(enable_timing=True) if cuda else time.perf_counter()
        if cuda:
            begin.record()
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        with torch.no_grad():  # summed on the device: no .item() inside the loop
            sums += torch.stack([loss.detach().double() * labels.numel(), (logits.argmax(1) == labels).sum().double(),
                                 torch.ones((), dtype=torch.float64, device=device) * labels.numel()])
        end = torch.cuda.Event(enable_timing=True) if cuda else time.perf_counter()
        if cuda:
            end.record()
        marks.append((begin, end))
    if cuda:
        torch.cuda.synchronize(device)
    epoch_s = time.perf_counter() - start
    train_s = sum(b.elapsed_time(e) / 1000 if cuda else e - b for b, e in marks)
    return epoch_s, train_s, sums


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="the folder holding cifar-10-batches-py/")
    parser.add_argument("--batch", type=int, default=128, help="images per GPU per step")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--images", type=int, default=50_000, help="the first IMAGES of the training set")
    parser.add_argument("--workers", type=int, default=2, help="loader worker processes")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rank, world, local = (int(os.environ.get(k, "0")) for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))
    world = max(world, 1)
    cuda = torch.cuda.is_available()
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
        torch.backends.cudnn.benchmark = True  # the first epoch times cuDNN's kernels; the last is timed
    if world > 1:
        dist.init_process_group("nccl" if cuda else "gloo", device_id=device if cuda else None)
    torch.manual_seed(args.seed)
    model = ResNet18().to(device)
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[local] if cuda else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    data = loader(args, rank, world, pin=cuda)
    for epoch in range(1, args.epochs + 1):
        if world > 1:
            data.sampler.set_epoch(epoch)  # else every epoch repeats the first one's order
        epoch_s, train_s, sums = train_epoch(model, data, optimizer, device)
        if world > 1:
            dist.all_reduce(sums)
        loss_sum, hits, images = sums.tolist()  # after the epoch: the one read of the GPU's sums
        line = {"epoch": epoch, "epoch_s": epoch_s, "train_s": train_s, "loss": loss_sum / images,
                "accuracy": hits / images}
        if rank == 0:
            print(json.dumps(line), flush=True)
        with open(os.environ.get("ORCHESTRATOR_METRICS", os.devnull), "a") as f:
            f.write(json.dumps(line) + "\n")
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
