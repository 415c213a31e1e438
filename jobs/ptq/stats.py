"""Per-layer statistics for the report: ranges, 3-sigma ranges, scales, histograms, KL divergence.

Plain numbers and lists only (the dataclasses of jobs.ptq.result), so a result file holds them as they are.
"""
from __future__ import annotations

import torch

from jobs.ptq.result import Histogram, TensorStats, WeightLayerStats
from jobs.ptq.quantize import QuantizedWeight, kl_divergence, qmax


def histogram(x: torch.Tensor, bins: int) -> Histogram:
    x = x.detach().double().flatten()
    lo, hi = float(x.min()), float(x.max())
    if hi <= lo:
        hi = lo + 1.0  # one value: all of it in the first bin
    counts = torch.histc(x, bins, lo, hi)
    edges = torch.linspace(lo, hi, bins + 1, dtype=torch.float64)
    return Histogram(tuple(edges.tolist()), tuple(int(c) for c in counts.tolist()))


def tensor_stats(name: str, x: torch.Tensor, bins: int) -> TensorStats:
    x = x.detach().double().flatten()
    mean, std = float(x.mean()), float(x.std(correction=0))
    return TensorStats(name, x.numel(), float(x.min()), float(x.max()), mean, std,
                       mean - 3 * std, mean + 3 * std, histogram(x, bins))


def weight_layer_stats(name: str, w: torch.Tensor, q: QuantizedWeight, bins: int) -> WeightLayerStats:
    """`q` quantizes `w` per tensor (the notebook's choice)."""
    scale = float(q.scale[0])
    return WeightLayerStats(tensor_stats(name, w, bins), q.bits, qmax(q.bits) / scale, scale,
                            kl_divergence(w, q.dequantized(), bins))
