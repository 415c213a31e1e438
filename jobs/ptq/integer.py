"""Integer-only execution of a quantized LeNet, and its agreement with the float simulation.

Inputs, weights and activations are integer tensors, on the CPU: torch has no integer
convolution, and cuBLASLt's int8 GEMM refused shapes this network needs on an H200
(K = 120 with N = 88, and M = 7,840,000 rows: CUBLAS_STATUS_NOT_SUPPORTED). So each
convolution is im2col (Tensor.unfold) followed by an integer GEMM on the CPU:
- b_a, b_w <= 8: torch._int_mm, int8 x int8 with int32 accumulation. int32 cannot overflow
  here: |acc| <= 400 * 128 * 128 < 2^31. Shapes are zero-padded to what the kernel takes
  (K and N multiples of 8, M > 16).
- wider: int64 tensors and torch.mm.
The accumulator then gets the int32 bias (added in int64, so acc + bias cannot overflow),
and the rescale: y = clamp(round(float(acc) * n_out), qmin, qmax), with float(acc) exact (the
plan's dtype holds every accumulator exactly) and n_out the same float as the simulation's.
The float simulation it is checked against runs on the study's device.
"""
from __future__ import annotations

from collections.abc import Iterable

import torch
import torch.nn.functional as F

from jobs.ptq.lenet import forward_layers
from jobs.ptq.result import IntegerAgreement
from jobs.ptq.simulate import QuantPlan, SimulatedNet, quantize_input
from jobs.ptq.quantize import qmax, qmin


def _narrow(p: QuantPlan) -> bool:
    bits = p.spec.activation_bits
    return bits is not None and bits <= 8 and p.spec.weight_bits <= 8


def int_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a [M, K] @ b [K, N] exactly, as int64, on the CPU. int8 operands use _int_mm (int32
    accumulation); wider ones int64 torch.mm."""
    if a.dtype == torch.int8:
        m, k = a.shape
        n = b.shape[1]
        pad_k, pad_n, pad_m = -k % 8, -n % 8, max(0, 17 - m)
        a = F.pad(a, (0, pad_k, 0, pad_m)) if pad_k or pad_m else a
        b = F.pad(b, (0, pad_n, 0, pad_k)) if pad_k or pad_n else b
        return torch._int_mm(a.contiguous(), b.contiguous())[:m, :n].long()
    return torch.mm(a, b)


def _im2col(x: torch.Tensor, size: int) -> torch.Tensor:
    """[N, C, H, W] -> [N * H' * W', C * size * size], columns in the weight's (C, kh, kw) order."""
    n, c = x.shape[:2]
    patches = x.unfold(2, size, 1).unfold(3, size, 1)  # N, C, H', W', kh, kw
    return patches.permute(0, 2, 3, 1, 4, 5).reshape(-1, c * size * size)


def _pool2(x: torch.Tensor) -> torch.Tensor:
    n, c, h, w = x.shape
    return x.view(n, c, h // 2, 2, w // 2, 2).amax(dim=(3, 5))


class IntegerNet:
    """Callable images -> int64 logits (y_5), with integer tensors from the input on."""

    def __init__(self, p: QuantPlan) -> None:
        if p.spec.activation_bits is None:
            raise ValueError("an integer-only run needs quantized activations (activation_bits)")
        self.bits: int = p.spec.activation_bits
        if p.spec.bias != "int32" and any(lp.bias is not None for lp in p.layers):
            raise ValueError("an integer-only run needs an int32 bias (bias = 'int32')")
        self.plan, self.device = p, torch.device("cpu")
        self.int_dtype = torch.int8 if _narrow(p) else torch.int64
        self.accumulator = "int32" if _narrow(p) else "int64"
        self.weights = {lp.name: lp.weight.reshape(lp.weight.shape[0], -1).t().to(self.device, self.int_dtype)
                        for lp in p.layers}
        self.mults = {lp.name: lp.multiplier.to(self.device, p.dtype) for lp in p.layers}
        self.biases = {lp.name: lp.bias.to(self.device, torch.int64) for lp in p.layers if lp.bias is not None}
        self.kernel = {lp.name: lp.weight.shape[-1] for lp in p.layers}

    @torch.no_grad()
    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        x = quantize_input(self.plan, images.to(self.device), self.plan.dtype).to(self.int_dtype)
        return forward_layers(x, self._layer, relu=lambda t: t.clamp_min(0), pool=_pool2).long()

    def _layer(self, name: str, x: torch.Tensor) -> torch.Tensor:
        if name.startswith("conv"):
            n, _, h, w = x.shape
            k = self.kernel[name]
            acc = int_matmul(_im2col(x, k), self.weights[name])
            acc = acc.view(n, h - k + 1, w - k + 1, -1).permute(0, 3, 1, 2)
            shape: tuple[int, ...] = (1, -1, 1, 1)
        else:
            acc = int_matmul(x, self.weights[name])
            shape = (1, -1)
        if name in self.biases:
            acc = acc + self.biases[name].view(shape)
        y = torch.round(acc.to(self.plan.dtype) * self.mults[name].view(shape))
        return torch.clamp(y, qmin(self.bits), qmax(self.bits)).to(self.int_dtype).contiguous()


@torch.no_grad()
def compare_with_simulation(p: QuantPlan, data: Iterable[tuple[torch.Tensor, torch.Tensor]],
                            device: torch.device | str) -> IntegerAgreement:
    """Run the integer-only network and the float simulation on every image of `data` and count
    the images where they differ. Expected: 0 of both counts. Both compute the same integers:
    their accumulators are exact (integer GEMM; float sums of integers, each below 2^24 in
    float32 or 2^53 in float64, are exact in any order), the rescale multiplies the same float
    by the same multiplier in the same dtype and rounds half to even, and argmax takes the first
    maximum in both. A count above 0 would mean an inexact float convolution in the simulation:
    e.g. a GPU's FFT or Winograd algorithm, or TF32 (the simulation turns TF32 and cuDNN
    autotuning off)."""
    sim, net = SimulatedNet(p, device), IntegerNet(p)
    totals = torch.zeros(3, dtype=torch.long)
    for images, _ in data:
        a = sim.forward(images).long().cpu()
        b = net(images)
        totals += torch.stack([a.new_full((), a.shape[0]), (a.argmax(1) != b.argmax(1)).sum(), (a != b).any(1).sum()])
    images, predictions, logits = totals.tolist()
    return IntegerAgreement(images, predictions, logits, net.accumulator)
