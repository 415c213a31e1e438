"""All-reduce bandwidth as nccl-tests defines it, with no torch: the training job's in-job
measurement (jobs.runtime.comm), the all-reduce kind (its cell, its result check) and the
training tables share it, with the two sizes training all-reduces."""
from __future__ import annotations

DDP_BUCKET_BYTES = 25 * 2**20  # DDP's default bucket_cap_mb
FP32_BYTES = 4
RESNET18_GRADIENTS = 11_173_962  # trainable parameters of the CIFAR-10 ResNet-18, one fp32 gradient each
RESNET18_GRADIENT_BYTES = RESNET18_GRADIENTS * FP32_BYTES  # what DDP all-reduces per step

# The training job's in-job measurement (jobs.runtime.comm): untimed and timed all-reduces per
# size, and steps per window of the exposed-communication measurement, on a GPU as nccl-tests.
WARMUP, ITERS, WINDOW_STEPS = 5, 20, 10
# On a CPU (gloo between processes sharing a few cores) the figures tell nothing about a network,
# and the GPU's counts took longer than the training: enough to fill the tables, said so in the
# plan (jobs.train.cell.CPU_NOTES).
CPU_WARMUP, CPU_ITERS, CPU_WINDOW_STEPS = 1, 3, 1


def bandwidth_gbps(nbytes: int, seconds: float, world_size: int) -> tuple[float, float]:
    """(algbw, busbw) in GB/s (1e9 bytes/s), as nccl-tests define them for all-reduce:
    algbw = bytes / seconds; busbw = algbw x 2(N-1)/N (each rank sends and receives 2(N-1)/N of
    the buffer in a ring). Example: 1e9 bytes in 0.1 s over 4 ranks: algbw 10, busbw 15."""
    algbw = nbytes / seconds / 1e9
    return algbw, algbw * 2 * (world_size - 1) / world_size


def bytes_text(n: float) -> str:
    """A size in binary units, the one unit system for bytes (as nccl-tests sizes and torch's memory
    are; rates stay in GB/s = 1e9 bytes/s, as nccl-tests report them): 8 -> "8 B", 65536 -> "64 KiB",
    44695848 -> "42.6 MiB"."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            value = n / scale
            return f"{value:.0f} {unit}" if float(value).is_integer() else f"{value:.3g} {unit}"
    return f"{n:.0f} B"
