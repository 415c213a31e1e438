"""DataParallel's speed on this box: a bare DataParallel ResNet-18 loop with cuDNN
benchmarking on and off, then the DP cell through the job; tracebacks are dumped if it stalls.
python benchmarks/dp_check.py OUT_DIR   (a box of 2+ GPUs)"""
import faulthandler
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn

from jobs.train.cell import Cell
from jobs.train.model import ResNet18
from jobs.train.run import run

faulthandler.dump_traceback_later(60, exit=False, repeat=True)
out = Path(sys.argv[1])
x = torch.randn(256, 3, 32, 32, device="cuda")
y = torch.zeros(256, dtype=torch.long, device="cuda")
for benchmark in (True, False):
    torch.backends.cudnn.benchmark = benchmark
    model = nn.DataParallel(ResNet18().cuda(), device_ids=[0, 1])
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for i in range(6):
        start = time.perf_counter()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        opt.zero_grad()
        torch.cuda.synchronize()
        print(f"bare DP step {i}, cudnn.benchmark={benchmark}: {time.perf_counter() - start:.4f} s", flush=True)
    del model, opt
cell = Cell(engine="dp", gpus_per_node=2, batch_per_gpu=128, dataset="synthetic", train_images=50000, epochs=2, timed_epoch=2)
start = time.perf_counter()
print("job:", run(cell, out, Path("data")), f"{time.perf_counter() - start:.1f} s", flush=True)
