"""The homework's arithmetic, one pure function per formula (scalars in, a float out).

A value that cannot be computed (an input missing, or a time that is zero or negative where
the formula divides by it) comes back as NaN, which the tables print as "-" or say why.
The same formulas are printed beside each table (FORMULAS), so a reviewer can redo every number.
"""
from __future__ import annotations

import math
from typing import Optional

from jobs.core.bandwidth import FP32_BYTES, RESNET18_GRADIENTS

GB = 1e9  # bandwidth in GB/s means 1e9 bytes per second, as nccl-tests report it

Number = Optional[float]

DIVERGED_LOSS = 10 * math.log(10)  # a training loss above 10x chance (ln 10 for CIFAR-10's classes): diverged

FORMULAS = {
    "speedup": "speedup = T1 / TN, with the batch per GPU b fixed (each of N GPUs does 1/N of the epoch)",
    "efficiency": "efficiency = speedup / N",
    "strong": "strong-scaling speedup = T1(batch B on 1 GPU) / TN(batch B/N per GPU on N GPUs), global batch B fixed",
    "compute": "compute (estimate) = T1 / N",
    "comm": "communication (estimate) = TN - T1 / N",
    "measured": "measured compute = rank 0's host-to-device copies and its forward, backward and optimizer step, "
                "timed on CUDA events (the host's clock on a CPU) over the epoch's steps, less the exposed all-reduce; "
                "measured communication = that exposed all-reduce: a step's time with the gradients' all-reduce less "
                "its time without it (DDP's no_sync), timed on one batch after training, times the epoch's steps (the "
                "all-reduce time the backward pass did not hide)",
    "steps": "steps = ceil(images / (b x N))",
    "bytes": "bytes per GPU per epoch = steps x 2(N-1)/N x P x 4 (ring all-reduce of P fp32 gradients)",
    "bandwidth": "utilization (GB/s) = bytes per GPU per epoch / communication time / 1e9",
    "share": "share of busbw = utilization / busbw, where busbw = algbw x 2(N-1)/N of a measured all-reduce",
    "time_to_train": "time to train = the sum of every epoch's epoch_s (whole epochs, data loading and the "
                     "first, warm-up epoch included; the test evaluation after each epoch is not in epoch_s)",
    "train_speedup": "speedup = time to train on 1 GPU / time to train on N GPUs, with the batch per GPU b fixed "
                     "and every other field the same (global batch b x N: the LR rule scales the LR with it)",
    "scaled_lr": "LR rule: none = lr; linear = lr x global batch / lr_ref_batch (Goyal et al.); sqrt = lr x "
                 "sqrt(global batch / lr_ref_batch); reached after the warmup epochs when there are any",
    "diverged": "diverged = a training loss above 10 ln 10 = 23.03 (10 x chance: ln 10 for 10 classes)",
    "spread": "with repeats: median (min-max) over them; * marks a spread (max - min) / median above 5%: "
              "a difference smaller than the spread is noise",
}


def _value(v: Number) -> float:
    """A missing value (None) as NaN, so every formula has one test for it."""
    return math.nan if v is None else float(v)


def _bad(*values: float) -> bool:
    return any(math.isnan(v) for v in values)


def scaled_lr(lr: Number, global_batch: int, ref_batch: int, scaling: str) -> float:
    """The LR a run trains at (after any warmup): lr under "none"; lr x global_batch / ref_batch
    under "linear"; lr x sqrt(global_batch / ref_batch) under "sqrt".
    Example: lr 0.1, 4 GPUs x 128 = 512, ref 128: linear -> 0.4, sqrt -> 0.2."""
    value = _value(lr)
    if scaling not in ("linear", "sqrt"):
        return value
    if ref_batch <= 0:
        return math.nan
    k = global_batch / ref_batch
    return value * (k if scaling == "linear" else math.sqrt(k))


def speedup(t1_s: Number, tn_s: Number) -> float:
    """speedup = T1 / TN.

    T1: the 1-GPU epoch time; TN: the N-GPU epoch time, same batch per GPU (weak scaling per
    step: each GPU's step is the same size, the epoch is fixed, so each GPU does 1/N of it).
    Example: T1 = 30 s, T2 = 20 s -> 1.5. NaN when either is missing or TN <= 0.
    """
    t1, tn = _value(t1_s), _value(tn_s)
    if _bad(t1, tn) or tn <= 0:
        return math.nan
    return t1 / tn


def efficiency(speedup_x: Number, gpus: int) -> float:
    """efficiency = speedup / N. Example: speedup 1.5 on 2 GPUs -> 0.75; N = 1 -> the speedup itself."""
    x = _value(speedup_x)
    if _bad(x) or gpus <= 0:
        return math.nan
    return x / gpus


def compute_estimate_s(t1_s: Number, gpus: int) -> float:
    """compute = T1 / N: the 1-GPU time split evenly over N GPUs (the homework's estimate).
    Example: T1 = 30 s, N = 4 -> 7.5 s; N = 1 -> T1."""
    t1 = _value(t1_s)
    if _bad(t1) or gpus <= 0:
        return math.nan
    return t1 / gpus


BREAKS = 1.5  # compute measured past this factor of T1/N, either way: the homework's T1/N model does not hold


def t1n_breaks(measured_s: Number, t1n_s: Number) -> bool:
    """The compute a run measured is over BREAKS x T1/N or under T1/N / BREAKS: the model (compute = T1/N) does not
    hold for it, so TN - T1/N is no communication time. The one rule of Table 2's comm share and of Q3.1, Q3.2.
    Example: T1/N 1.03 s: measured 2.01 s -> True; 1.45 s -> False; T1/N 9.13 s, measured 4.82 s -> True."""
    m, e = _value(measured_s), _value(t1n_s)
    if _bad(m, e) or e <= 0:
        return False
    return m > BREAKS * e or m < e / BREAKS


def comm_estimate_s(t1_s: Number, tn_s: Number, gpus: int) -> float:
    """communication = TN - T1 / N: whatever the N-GPU epoch spends beyond its share of compute.
    Example: T1 = 30 s, T4 = 10 s -> 10 - 7.5 = 2.5 s; N = 1 -> TN - T1 (0 for the same run).
    Negative when N GPUs beat the even split (the estimate then says nothing about communication)."""
    compute, tn = compute_estimate_s(t1_s, gpus), _value(tn_s)
    if _bad(compute, tn):
        return math.nan
    return tn - compute


def steps_per_epoch(images: int, batch_per_gpu: int, gpus: int) -> int:
    """steps = ceil(images / (b x N)): each step takes b images on each of N GPUs; the last
    step may be short. Example: 50,000 images, b = 32, N = 2 -> ceil(781.25) = 782."""
    return math.ceil(images / (batch_per_gpu * gpus))


def ring_allreduce_bytes(gradients: int, gpus: int) -> float:
    """Bytes each GPU sends (and receives) in one ring all-reduce of P fp32 gradients
    (Patarasuk and Yuan 2009): 2(N-1)/N x P x 4. A reduce-scatter then an all-gather, each
    N-1 steps of P/N values. Example: P = 11,173,962, N = 2 -> 44,695,848 bytes; N = 1 -> 0."""
    return 2 * (gpus - 1) / gpus * gradients * FP32_BYTES


def epoch_comm_bytes(images: int, batch_per_gpu: int, gpus: int, gradients: int = RESNET18_GRADIENTS) -> float:
    """bytes per GPU per epoch = steps x 2(N-1)/N x P x 4, one all-reduce per step.
    Example: 50,000 images, b = 32, N = 2: 782 x 44,695,848 = 34,952,153,136 bytes (34.95 GB)."""
    return steps_per_epoch(images, batch_per_gpu, gpus) * ring_allreduce_bytes(gradients, gpus)


def bandwidth_gbps(nbytes: Number, seconds: Number) -> float:
    """utilization = bytes / time / 1e9, in GB/s. NaN when the time is missing, zero or negative
    (no communication to measure, or an estimate below zero).
    Example: 34,952,153,136 bytes in 10 s -> 3.495 GB/s."""
    b, t = _value(nbytes), _value(seconds)
    if _bad(b, t) or t <= 0:
        return math.nan
    return b / t / GB


def busbw_share(utilization_gbps: Number, busbw_gbps: Number) -> float:
    """share = utilization / busbw (0..1, may exceed 1 when the timing is below one all-reduce).
    Example: 3.5 GB/s used of a measured busbw of 14 GB/s -> 0.25."""
    used, bus = _value(utilization_gbps), _value(busbw_gbps)
    if _bad(used, bus) or bus <= 0:
        return math.nan
    return used / bus


def gradients_of(grad_bytes: Number) -> int:
    """P = the all-reduced bytes / 4 when the job measured them, else ResNet-18's 11,173,962."""
    b = _value(grad_bytes)
    if _bad(b) or b <= 0:
        return RESNET18_GRADIENTS
    return int(b) // FP32_BYTES


def diverged(loss: Number) -> bool:
    """loss > DIVERGED_LOSS (10 ln 10: ten times the loss of a uniform guess over CIFAR-10's 10
    classes), the one rule of the answers, tables and plots (an infinite loss too; a missing one not)."""
    return _value(loss) > DIVERGED_LOSS
