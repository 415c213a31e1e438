"""ms per step of the compiled, graph-replayed fast step under variants, and where the GPU
time of the current one goes, by kind of kernel.
python benchmarks/profile_variants.py [BATCH] [KERNEL_TABLE_FILE]   (one GPU)"""
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import jobs.fast as fast
from jobs.cell import Cell
from jobs.launch import detect
from profile_step import ms_per_step  # this folder is on sys.path when run as a script

BATCH = int(sys.argv[1]) if len(sys.argv) > 1 else 512
TABLE = Path(sys.argv[2]) if len(sys.argv) > 2 else None
KINDS = (("fprop", "conv forward"), ("dgrad", "conv data grad"), ("wgrad", "conv weight grad"),
         ("cudnn", "other cuDNN"), ("cutlass", "other cuDNN"), ("triton_red", "inductor reductions (BatchNorm statistics)"),
         ("triton_per", "inductor reductions (BatchNorm statistics)"), ("triton_poi", "inductor pointwise (BatchNorm, ReLU, add)"),
         ("sgd", "optimizer"), ("multi_tensor", "optimizer"), ("nccl", "all-reduce"))


def foreach_sgd(params, grads, bufs, lr, momentum, weight_decay):
    """The update as run 2 had it: four foreach passes."""
    d = torch._foreach_add(grads, params, alpha=weight_decay)
    torch._foreach_mul_(bufs, momentum)
    torch._foreach_add_(bufs, d)
    torch._foreach_sub_(params, torch._foreach_mul(bufs, lr))


class FlatGrads(fast.FastTrainer):
    """Run 2's step: gradients accumulated into a zeroed flat buffer, SGD as four foreach passes."""

    def _body(self, sync=True):
        for p, view in zip(self.params, self.flat_grads):
            p.grad = view
        self.flat.zero_()
        with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
            logits = self.step_model(self.x)
            losses = F.cross_entropy(logits, self.y, reduction="none")
        n = self.w.sum()
        loss = (losses.float() * self.w).sum() / n
        loss.backward()
        with torch.no_grad():
            foreach_sgd(self.params, self.flat_grads, self.bufs, self.lr, 0.9, 5e-4)
            hits = ((logits.argmax(1) == self.y).float() * self.w).sum()
            self.totals += torch.stack([loss.detach() * n, hits, n]).double()


def build(kind=fast.FastTrainer):
    torch._dynamo.reset()
    torch.backends.cudnn.benchmark = True
    cell = Cell(engine="single", batch_per_gpu=BATCH, dataset="synthetic", train_images=4096, pipeline="fast", precision="bf16")
    t = kind(cell, detect({}), torch.device("cuda", 0), Path("data"))
    images, labels, weights = t.data.epoch(1, t.dtype)
    t.x.copy_(images[0]); t.y.copy_(labels[0]); t.w.copy_(weights[0])
    start = time.perf_counter()
    t.probe()
    return t, time.perf_counter() - start


def report(name, t, seconds):
    ms = min(ms_per_step(lambda: t._run_step()) for _ in range(3))
    print(f"{name}: {ms:.2f} ms/step, {ms * 98 / 1e3:.3f} s per 98-step epoch, graph={bool(t.graphs)} "
          f"(probe+compile {seconds:.0f} s)", flush=True)


def by_kind(t, steps=5):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            t._run_step()
        torch.cuda.synchronize()
    events = prof.key_averages()
    total = defaultdict(float)
    for e in events:
        us = getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
        kind = next((label for key, label in KINDS if key in e.key.lower()), "other")
        total[kind] += us / steps / 1e3
    print("GPU time per step by kind of kernel:")
    for kind, ms in sorted(total.items(), key=lambda kv: -kv[1]):
        print(f"  {ms:6.3f} ms  {kind}")
    print(f"  {sum(total.values()):6.3f} ms  total", flush=True)
    if TABLE:
        TABLE.write_text(events.table(sort_by="self_cuda_time_total", row_limit=-1, max_name_column_width=90))


if __name__ == "__main__":
    import torch._inductor.config as inductor
    report("run 2's step (gradients accumulated into a zeroed flat buffer, foreach SGD)", *build(FlatGrads))
    t, s = build()
    report("current step (fresh gradients, fused SGD)", t, s)
    by_kind(t)
    for name, value in (("combo_kernels", True), ("aggressive_fusion", True), ("triton.multi_kernel", 1),
                        ("triton.cooperative_reductions", True), ("max_autotune_pointwise", True)):
        *path, attr = name.split(".")
        section = inductor.triton if path else inductor
        before = getattr(section, attr)
        setattr(section, attr, value)
        report(f"current step, inductor {name} = {value}", *build())
        setattr(section, attr, before)
