"""Symmetric signed b-bit quantization on tensors: ranges, scales, rounding, and a KL divergence.

The notebook's multiply convention, zero-point 0:
    qmax = 2^(b-1) - 1,  qmin = -2^(b-1)
    scale n = qmax / r                       (r: the clipping range, r > 0)
    q = clamp(round(x * n), qmin, qmax)      (round half to even, as torch.round)
    x ~ q / n
Example: weights [-0.5, 0.25] at 8 bits: r = 0.5, n = 127 / 0.5 = 254, q = [-127, 64]
(0.25 * 254 = 63.5 rounds to the even 64).

Ranges ("method"), each a non-negative number per tensor or per output channel (row):
    max         r = max |x|
    3sigma      r = |mean(x)| + 3 std(x)     (population std; the notebook's mean +/- 3 sigma interval
                                              made symmetric; it may exceed max |x|)
    percentile  r = the p-th percentile of |x| (nearest rank: the ceil(p/100 N)-th smallest |x|)
    mse         r = argmin over r_i = max|x| * i / K (i = 1..K) of mean((q(x; r_i) / n_i - x)^2)
A range of 0 (all zeros) gives scale 1: every value quantizes to 0 anyway.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from jobs.core.cell import check_choice
from jobs.ptq.choices import GRANULARITIES, PERCENTILE, RANGE_METHODS, check_bits, check_percentile

MSE_CANDIDATES = 100


def qmax(bits: int) -> int:
    return 2 ** (check_bits(bits) - 1) - 1


def qmin(bits: int) -> int:
    return -(2 ** (check_bits(bits) - 1))


def row_ranges(rows: torch.Tensor, method: str, bits: int, percentile: float = PERCENTILE) -> torch.Tensor:
    """The clipping range of each row of a 2-D tensor [rows, values] (formulas in the module doc)."""
    check_choice("method", method, RANGE_METHODS)
    check_bits(bits)
    rows = rows.detach().float()
    if method == "max":
        return rows.abs().amax(1)
    if method == "3sigma":
        return rows.mean(1).abs() + 3 * rows.std(1, correction=0)
    if method == "percentile":
        k = min(max(math.ceil(check_percentile(percentile) / 100 * rows.shape[1]), 1), rows.shape[1])
        return rows.abs().kthvalue(k, dim=1).values
    return _mse_ranges(rows, bits)


def _mse_ranges(rows: torch.Tensor, bits: int, candidates: int = MSE_CANDIDATES) -> torch.Tensor:
    top = rows.abs().amax(1)
    best_error = torch.full_like(top, math.inf)
    best = top.clone()
    for i in range(1, candidates + 1):
        r = top * (i / candidates)
        n = scale_for(r, bits).float().unsqueeze(1)
        error = ((quantize(rows, n, bits) / n - rows) ** 2).mean(1)
        better = error < best_error  # strict: among equal errors the smallest range wins
        best = torch.where(better, r, best)
        best_error = torch.where(better, error, best_error)
    return best


def tensor_range(x: torch.Tensor, method: str, bits: int, percentile: float = PERCENTILE) -> float:
    """One clipping range for the whole tensor."""
    return float(row_ranges(x.reshape(1, -1), method, bits, percentile)[0])


def channel_ranges(w: torch.Tensor, method: str, bits: int, percentile: float = PERCENTILE) -> torch.Tensor:
    """One clipping range per output channel (dim 0) of a weight tensor."""
    return row_ranges(w.reshape(w.shape[0], -1), method, bits, percentile)


def scale_for(r: torch.Tensor | float, bits: int) -> torch.Tensor:
    """n = qmax / r in float64, and 1 where r = 0."""
    r = torch.as_tensor(r).double()
    safe = torch.where(r > 0, r, torch.ones_like(r))
    n = torch.full_like(r, qmax(bits)) / safe  # tensor / tensor: correctly rounded (scalar / tensor is not)
    return torch.where(r > 0, n, torch.ones_like(r))


def quantize(x: torch.Tensor, scale: torch.Tensor | float, bits: int) -> torch.Tensor:
    """clamp(round(x * scale), qmin, qmax), in x's float dtype. A per-channel scale [C]
    applies along dim 0 of a weight tensor; pass it shaped to broadcast otherwise."""
    scale = torch.as_tensor(scale, dtype=x.dtype, device=x.device)
    if scale.dim() == 1 and x.dim() > 1 and scale.numel() == x.shape[0]:
        scale = scale.view(-1, *([1] * (x.dim() - 1)))
    return torch.clamp(torch.round(x * scale), qmin(bits), qmax(bits))


@dataclass(frozen=True)
class QuantizedWeight:
    values: torch.Tensor  # integers in [qmin, qmax], float dtype, the weight's shape
    scale: torch.Tensor  # [C_out] float64: the same value repeated when per-tensor
    bits: int
    granularity: str
    method: str

    def dequantized(self) -> torch.Tensor:
        return self.values / self.scale.to(self.values.device, self.values.dtype).view(-1, *([1] * (self.values.dim() - 1)))


def quantize_weight(w: torch.Tensor, bits: int, method: str = "max", granularity: str = "tensor",
                    percentile: float = PERCENTILE) -> QuantizedWeight:
    """A weight tensor's integers and scale(s): per tensor (one range) or per output channel."""
    check_choice("granularity", granularity, GRANULARITIES)
    w = w.detach().float()
    if granularity == "tensor":
        r = torch.full((w.shape[0],), tensor_range(w, method, bits, percentile), dtype=torch.float64)
    else:
        r = channel_ranges(w, method, bits, percentile).double()
    scale = scale_for(r, bits)
    return QuantizedWeight(quantize(w, scale.to(w.device), bits), scale, bits, granularity, method)


def kl_divergence(original: torch.Tensor, approximation: torch.Tensor, bins: int = 128) -> float:
    """D_KL(P || Q) = sum_i p_i ln(p_i / q_i), in nats, where P and Q are the normalised histograms
    of `original` and `approximation` (e.g. the dequantized weights) over the same `bins` equal
    bins spanning both. Bins with p_i = 0 add nothing; an empty q_i is taken as 1e-10."""
    a, b = original.detach().double().flatten(), approximation.detach().double().flatten()
    lo, hi = float(min(a.min(), b.min())), float(max(a.max(), b.max()))
    if hi <= lo:
        return 0.0
    p = torch.histc(a, bins, lo, hi)
    q = torch.histc(b, bins, lo, hi)
    p, q = p / p.sum(), (q / q.sum()).clamp_min(1e-10)
    mask = p > 0
    return float((p[mask] * (p[mask] / q[mask]).log()).sum())
