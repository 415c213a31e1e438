"""ms per step of the compiled, graph-replayed fast step under variants, and the kernel
table of one: python benchmarks/profile_variants.py [BATCH]   (one GPU)"""
import sys
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

import jobs.fast as fast
from jobs.cell import Cell
from jobs.launch import detect
from profile_step import ms_per_step  # this folder is on sys.path when run as a script

BATCH = int(sys.argv[1]) if len(sys.argv) > 1 else 512


def build(precision="bf16"):
    torch._dynamo.reset()
    torch.backends.cudnn.benchmark = True
    cell = Cell(engine="single", batch_per_gpu=BATCH, dataset="synthetic", train_images=4096, pipeline="fast", precision=precision)
    t = fast.FastTrainer(cell, detect({}), torch.device("cuda", 0), Path("data"))
    images, labels, weights = t.data.epoch(1, t.dtype)
    t.x.copy_(images[0]); t.y.copy_(labels[0]); t.w.copy_(weights[0])
    start = time.perf_counter()
    t.probe()
    return t, time.perf_counter() - start


def report(name, t, seconds):
    print(f"{name}: {ms_per_step(lambda: t._run_step()):.2f} ms/step graph={bool(t.graphs)} (probe+compile {seconds:.0f} s)", flush=True)


if __name__ == "__main__":
    t, s = build()
    report("channels_last compiled", t, s)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            t._body()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=22, max_name_column_width=60), flush=True)
    import torch._inductor.config as ic
    ic.coordinate_descent_tuning = True
    t, s = build()
    report("channels_last compiled + coordinate descent tuning", t, s)
    ic.coordinate_descent_tuning = False
    fast.MEMORY_FORMAT = torch.contiguous_format
    t, s = build()
    report("NCHW compiled", t, s)
    fast.MEMORY_FORMAT = torch.channels_last
    ic.freezing = False
    ic.shape_padding = True
    ic.split_reductions = False
    t, s = build()
    report("channels_last compiled, no split reductions", t, s)
