"""Where a fast-pipeline step's GPU time goes: kernel table, and ms per step for variants.
python benchmarks/profile_step.py [BATCH]   (one GPU; synthetic data)"""
import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from jobs.train.cell import Cell
from jobs.train.fast import FastTrainer
from jobs.runtime.launch import detect

BATCH = int(sys.argv[1]) if len(sys.argv) > 1 else 512


def ms_per_step(run, steps=30):
    for _ in range(5):
        run()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        run()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / steps * 1e3


def device_us(event):
    """A profiler row's own GPU time in us (the attribute's name depends on torch's version)."""
    return getattr(event, "self_device_time_total", None) or getattr(event, "self_cuda_time_total", 0)


def trainer(cell):
    torch.backends.cudnn.benchmark = True
    t = FastTrainer(cell, detect({}), torch.device("cuda", 0), Path("data"))
    images, labels, weights = t.data.epoch(1, t.dtype)
    t.x.copy_(images[0]); t.y.copy_(labels[0]); t.w.copy_(weights[0])
    return t


if __name__ == "__main__":
    cell = Cell(engine="single", batch_per_gpu=BATCH, dataset="synthetic", train_images=4096, pipeline="fast", precision="bf16")
    t = trainer(cell)
    print(f"eager body: {ms_per_step(t._body):.2f} ms/step")
    t.probe()
    print(f"graph replay: {ms_per_step(lambda: t._run_step()):.2f} ms/step ({'graph' if t.graphs else t.graph_error})")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            t._body()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=70))
    for mode in sys.argv[2:]:
        torch._dynamo.reset()
        t = trainer(cell)
        t.model = torch.compile(t.model, mode=mode)
        start = time.perf_counter()
        t._body()
        torch.cuda.synchronize()
        print(f"compile {mode}: first step {time.perf_counter() - start:.1f} s")
        print(f"compiled {mode} eager: {ms_per_step(t._body):.2f} ms/step")
        t.probe()
        print(f"compiled {mode} graph: {ms_per_step(lambda: t._run_step()):.2f} ms/step ({'graph' if t.graphs else t.graph_error})")
