"""ms per step of the compiled, graph-replayed fast step under variants, and where the GPU
time of the current one goes, by kind of kernel.
python benchmarks/profile_variants.py [BATCH] [KERNEL_TABLE_FILE] [VARIANT ...]   (one GPU)
VARIANT: flat, inductor, stem_matmul (default: all)
cuDNN's benchmark cache lives as long as the process: a comparison of cuDNN settings needs a
process for each (results/h200-variants-run4.log says how run 4 made one)."""
import sys
import time
from collections import defaultdict
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import jobs.train.fast as fast
from jobs.train.cell import Cell
from jobs.runtime.launch import detect
from jobs.train.run import cudnn_engines_timed
from profile_step import device_us, ms_per_step  # this folder is on sys.path when run as a script

BATCH = int(sys.argv[1]) if len(sys.argv) > 1 else 512
TABLE = Path(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else None
KINDS = (("fprop", "conv forward"), ("dgrad", "conv data grad"), ("wgrad", "conv weight grad"),
         ("cudnn", "other cuDNN"), ("cutlass", "other cuDNN"), ("triton_red", "inductor reductions (BatchNorm statistics)"),
         ("triton_per", "inductor reductions (BatchNorm statistics)"), ("triton_poi", "inductor pointwise (BatchNorm, ReLU, add)"),
         ("gemm", "matrix products"), ("nvjet", "matrix products"), ("sgd", "optimizer"), ("multi_tensor", "optimizer"), ("nccl", "all-reduce"))


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
    cell = Cell(engine="single", batch_per_gpu=BATCH, dataset="synthetic", train_images=4096, pipeline="fast", precision="bf16")
    torch.backends.cudnn.benchmark = True  # as the job sets cuDNN up for this cell
    torch.backends.cudnn.benchmark_limit = cudnn_engines_timed(cell)
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


def by_kind(t, table=None, steps=5):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            t._run_step()
        torch.cuda.synchronize()
    events = prof.key_averages()
    total = defaultdict(float)
    for e in events:
        us = device_us(e)
        kind = next((label for key, label in KINDS if key in e.key.lower()), "other")
        total[kind] += us / steps / 1e3
    print("GPU time per step by kind of kernel:")
    for kind, ms in sorted(total.items(), key=lambda kv: -kv[1]):
        print(f"  {ms:6.3f} ms  {kind}")
    print(f"  {sum(total.values()):6.3f} ms  total", flush=True)
    if table:
        table.write_text(events.table(sort_by="self_cuda_time_total", row_limit=-1, max_name_column_width=90))


def conv3x3_as_matmul(x, weight):
    """A 3x3, stride-1, pad-1 convolution as one matrix product over the 3x3 patches, the
    patch length padded to a multiple of 8 for the tensor cores."""
    n, c, h, w = x.shape
    k = 9 * c
    kp = -(-k // 8) * 8
    p = F.pad(x.permute(0, 2, 3, 1), (0, 0, 1, 1, 1, 1))
    patches = [p[:, i:i + h, j:j + w, :] for i in range(3) for j in range(3)]
    if kp > k:
        patches.append(x.new_zeros(n, h, w, kp - k))
    cols = torch.cat(patches, dim=3).reshape(n * h * w, kp)
    wm = F.pad(weight.permute(0, 2, 3, 1).reshape(weight.shape[0], k), (0, kp - k))
    return (cols @ wm.t()).view(n, h, w, -1).permute(0, 3, 1, 2)


class StemMatmul(fast.FastTrainer):
    """The current step with the 3-channel stem convolution as a matrix product."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        stem = self.model.conv1
        stem.forward = lambda x: conv3x3_as_matmul(x, stem.weight)


def inductor_variants():
    import torch._inductor.config as inductor
    for name, value in (("combo_kernels", False), ("aggressive_fusion", True), ("triton.multi_kernel", 1),
                        ("max_autotune_pointwise", True)):
        *path, attr = name.split(".")
        section = inductor.triton if path else inductor
        before = getattr(section, attr)
        setattr(section, attr, value)
        report(f"current step, inductor {name} = {value}", *build())
        setattr(section, attr, before)


if __name__ == "__main__":
    chosen = sys.argv[3:] or ["flat", "inductor", "stem_matmul"]
    if "flat" in chosen:
        report("run 2's step (gradients accumulated into a zeroed flat buffer, foreach SGD)", *build(FlatGrads))
    t, s = build()
    report("current step (fresh gradients, fused SGD, combo_kernels, every cuDNN engine timed)", t, s)
    by_kind(t, TABLE)
    if "inductor" in chosen:
        inductor_variants()
    if "stem_matmul" in chosen:
        t, s = build(StemMatmul)
        report("current step, stem convolution as a matrix product", t, s)
        by_kind(t, TABLE and TABLE.with_suffix(".stem.txt"))
