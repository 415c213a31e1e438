"""The quantized LeNet simulated in float tensors that hold integers: the notebook's scheme.

Scales (multiply convention, quant.py), for layer k = 1..5 with weight scale n_w_k (one per
output channel when per-channel):
    C_0 = n_in = qmax_a / r_input                      the input's scale (1 when activations stay float)
    S_k = n_w_k C_{k-1}                                 the accumulator's scale: acc_k ~ S_k (W_k x + 0)
    bias (int32)   q_b = clamp(round(b S_k), -2^31, 2^31 - 1)          (Jacob et al.: S_bias = S_in S_w)
    bias (float)   b added to acc_k as trained, so it acts as b / S_k  (the notebook's "bias left float")
With activations quantized to b_a bits and layer k's output range r_k:
    n_out_k = qmax_a / (r_k S_k) = qmax_a / (r_k C_{k-1} n_w_k)
    y_k = clamp(round((acc_k + q_b) n_out_k), qmin_a, qmax_a),   C_k = S_k n_out_k = qmax_a / r_k
    so the integers are never converted back to float between layers. With cumulative_scales
    off (the classic bug) n_out_k = qmax_a / (r_k n_w_k): y_k is C_{k-1} times too large and saturates.
With activations float (weights only): no rounding; channel c is multiplied by m_k = max(n_w_k) / n_w_k[c]
    (1 per-tensor: exactly the notebook, which carries the integer weights' product along), C_k = C_{k-1} max(n_w_k).
The logits are y_5 / C_5. ReLU and max-pool act on the integers (they commute with positive scales).

Exactness: the simulation's accumulators are float32 when every |acc + q_b| is below 2^24, which
holds for b_a, b_w <= 8 (fan-in 400: 400 * 128 * 128 = 6,553,600 < 16,777,216): every partial sum
is then an integer float32 holds exactly, in any summation order. Otherwise float64 (exact below 2^53).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F

from jobs.ptq.lenet import LAYERS, Net, forward_layers
from jobs.ptq.config import QuantSpec
from jobs.ptq.quantize import QuantizedWeight, qmax, qmin, quantize, scale_for

INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1
FLOAT32_EXACT = 2 ** 24


class IntegerRangeError(AssertionError):
    """A quantized layer's input held a non-integer or a value outside the signed range."""


@dataclass(frozen=True)
class LayerPlan:
    name: str
    weight: torch.Tensor  # integer-valued, float64, on the CPU (the simulation copies it to its device)
    weight_scale: torch.Tensor  # n_w [C_out] float64
    input_scale: float  # C_{k-1}
    multiplier: torch.Tensor  # n_out_k (or m_k, weights only) [C_out] float64
    bias: Optional[torch.Tensor]  # in accumulator units [C_out] float64; None when the layer has none
    output_scale: float  # C_k
    activation_range: Optional[float]  # r_k, when activations are quantized

    @property
    def fan_in(self) -> int:
        return self.weight[0].numel()


@dataclass(frozen=True)
class QuantPlan:
    spec: QuantSpec
    input_scale: float  # n_in; 1.0 when activations stay float
    input_range: Optional[float]
    layers: tuple[LayerPlan, ...]

    @property
    def output_scale(self) -> float:
        return self.layers[-1].output_scale

    def accumulator_bound(self) -> float:
        """The largest |acc_k + bias| any input can produce, when activations are integers."""
        bits = self.spec.activation_bits
        if bits is None:
            return float("inf")
        a = 2 ** (bits - 1)
        w = 2 ** (self.spec.weight_bits - 1)
        return max(p.fan_in * a * w + (float(p.bias.abs().max()) if p.bias is not None else 0.0) for p in self.layers)

    @property
    def dtype(self) -> torch.dtype:
        """float32 where it computes the integers exactly (or activations are float), else float64."""
        bound = self.accumulator_bound()
        return torch.float32 if bound == float("inf") or bound < FLOAT32_EXACT else torch.float64


def plan(net: Net, spec: QuantSpec, weights: dict[str, QuantizedWeight],
         ranges: Optional[tuple[float, ...]]) -> QuantPlan:
    """Every scale of the quantized network (formulas in the module doc). `ranges`: the input's
    and each layer's output range (ptq_profile.activation_ranges), or None for weights only."""
    bits = spec.activation_bits
    if bits is not None and ranges is None:
        raise ValueError("activation ranges are needed when activations are quantized")
    n_in = float(scale_for(ranges[0], bits)) if bits is not None and ranges is not None else 1.0
    c_prev, layers = n_in, []
    for k, name in enumerate(LAYERS):
        qw = weights[name]
        n_w = qw.scale.double().cpu()
        s = n_w * c_prev
        bias = net.layer(name).bias
        q_b = None if bias is None else quantize_bias(bias.detach().double().cpu(), s, spec.bias)
        if bits is not None and ranges is not None:
            r: Optional[float] = ranges[k + 1]
            n_act = scale_for(ranges[k + 1], bits)
            m = n_act / (s if spec.cumulative_scales else n_w)
            c_out = float(n_act)
        else:
            r, m = None, n_w.max() / n_w
            c_out = c_prev * float(n_w.max())
        layers.append(LayerPlan(name, qw.values.double().cpu(), n_w, c_prev, m, q_b, c_out, r))
        c_prev = c_out
    return QuantPlan(spec, n_in, ranges[0] if bits is not None and ranges is not None else None, tuple(layers))


def quantize_bias(bias: torch.Tensor, s: torch.Tensor, mode: str) -> torch.Tensor:
    """The bias in accumulator units: int32 at the accumulator's scale S_k = n_w C_{k-1} (the input's
    scale times the weights', not the output's: the bias is added before the output scale), or the
    float bias as trained (mode "float": the notebook's "bias left unquantized")."""
    if mode != "int32":
        return bias
    return torch.clamp(torch.round(bias * s), INT32_MIN, INT32_MAX)


def quantize_input(p: QuantPlan, images: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The boundary from real to integer: clamp(round(x n_in)); unchanged when activations stay float."""
    x, bits = images.to(dtype), p.spec.activation_bits
    return quantize(x, p.input_scale, bits) if bits is not None else x


def _channels(t: torch.Tensor, conv: bool) -> torch.Tensor:
    return t.view(1, -1, 1, 1) if conv else t.view(1, -1)


class SimulatedNet:
    """Callable images -> logits (float, y_5 / C_5) of a QuantPlan; `forward` gives y_5 itself.
    Every quantized layer's input is checked: integers within [qmin_a, qmax_a]. The counts add up
    on the device (read them with check_counts()); strict=True raises at once instead."""

    def __init__(self, p: QuantPlan, device: torch.device | str, strict: bool = False) -> None:
        self.plan, self.device, self.strict, self.dtype = p, torch.device(device), strict, p.dtype
        device, dtype = self.device, self.dtype
        self.weights = {lp.name: lp.weight.to(device, dtype) for lp in p.layers}
        self.mults = {lp.name: lp.multiplier.to(device, dtype) for lp in p.layers}
        self.biases = {lp.name: lp.bias.to(device, dtype) for lp in p.layers if lp.bias is not None}
        self.counts = torch.zeros(len(LAYERS), 3, dtype=torch.long, device=self.device)  # values, non-int, out of range
        self.bits = p.spec.activation_bits

    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        return (self.forward(images) / self.plan.output_scale).float()

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """The notebook's NetQuantized.forward: the images to integers at the input's scale, then each layer
        on integers (the integer sum, plus the int32 bias, times n_out, rounded and clamped): y_5."""
        with torch.no_grad(), _exact_gpu_math(self.device):
            x = quantize_input(self.plan, images.to(self.device), self.dtype)
            return forward_layers(x, self._layer)

    def _layer(self, name: str, x: torch.Tensor) -> torch.Tensor:
        conv, bits = name.startswith("conv"), self.bits
        if bits is not None:
            self._check(LAYERS.index(name), x, bits)
        acc = F.conv2d(x, self.weights[name]) if conv else F.linear(x, self.weights[name])
        if name in self.biases:
            acc = acc + _channels(self.biases[name], conv)
        acc = acc * _channels(self.mults[name], conv)
        return torch.clamp(torch.round(acc), qmin(bits), qmax(bits)) if bits is not None else acc

    def _check(self, k: int, x: torch.Tensor, bits: int) -> None:
        non_integer = (x != torch.round(x)).sum()
        out_of_range = ((x < qmin(bits)) | (x > qmax(bits))).sum()
        if self.strict and bool(non_integer + out_of_range):
            raise IntegerRangeError(f"{LAYERS[k]}: its input holds {int(non_integer)} non-integers and "
                                    f"{int(out_of_range)} values outside [{qmin(bits)}, {qmax(bits)}]")
        self.counts[k] += torch.stack([non_integer.new_full((), x.numel()), non_integer, out_of_range])

    def check_counts(self) -> list[tuple[str, int, int, int]]:
        """(layer, values checked, non-integers, out of range) per layer; one device sync."""
        return [(name, *row) for name, row in zip(LAYERS, self.counts.tolist(), strict=True)]


class _exact_gpu_math:
    """On a GPU: no TF32 and no cuDNN autotuning, so convolutions of integers sum exact products."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"

    def __enter__(self) -> None:
        if self.cuda:
            self.saved = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32,
                          torch.backends.cudnn.benchmark)
            torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.benchmark = False

    def __exit__(self, *exc) -> None:
        if self.cuda:
            (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32,
             torch.backends.cudnn.benchmark) = self.saved
