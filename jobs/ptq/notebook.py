"""The notebook's functions of B.Q2, B.Q4 and B.Q5, with its names and signatures, filled in: the
notebook's variants (W8, W8A8, W8A8B32 and the float-bias one) take every scale from them, and the
hand-in prints their source (jobs.ptq.listing). They hard-code the notebook's choices: 8 bits,
symmetric, one scale per tensor, the range max |x|, each scale multiplying (q = round(x n)).
The sweep's other choices go through jobs.ptq.quantize and jobs.ptq.simulate.plan; for the
notebook's choices both give the same integers (tests/unit/test_ptq_notebook.py).

`ns` is the notebook's list of (weight scale, output scale) of every earlier layer, so the scale a
layer's input integers carry is n_initial_input x the product of those pairs.
"""
from __future__ import annotations

import torch

from jobs.ptq.lenet import LAYERS, Net
from jobs.ptq.profile import ActivationProfile
from jobs.ptq.simulate import LayerPlan, QuantPlan
from jobs.ptq.config import QuantSpec


def quantized_weights(weights: torch.Tensor) -> tuple[torch.Tensor, float]:
    """B.Q2: the weights as 8-bit integers and the scale they were multiplied by (127 / max|w|)."""
    scale = 127 / float(weights.abs().max())  # codes -127..127: -128 is never used
    return torch.clamp(torch.round(weights * scale), -128, 127), scale


def quantize_initial_input(pixels: torch.Tensor) -> float:
    """B.Q4: the scale the network's input is multiplied by (127 / max|pixel| over the calibration images)."""
    return 127 / float(pixels.abs().max())


def quantize_activations(activations: torch.Tensor, n_w: float, n_initial_input: float,
                         ns: list[tuple[float, float]]) -> float:
    """B.Q4: the scale n_out a layer's output is multiplied by. The layer's integer sum carries n_w times
    its input's scale; n_out brings it to 127 / max|out|, so the output's integers span -127..127."""
    return 127 / float(activations.abs().max()) / (n_w * input_scale(n_initial_input, ns))


def quantized_bias(bias: torch.Tensor, n_w: float, n_initial_input: float,
                   ns: list[tuple[float, float]]) -> torch.Tensor:
    """B.Q5: the bias as int32 at the scale of the integer sum it is added to (n_w times its input's
    scale), before the output scale."""
    return torch.clamp(torch.round(bias * (n_w * input_scale(n_initial_input, ns))), -2 ** 31, 2 ** 31 - 1)


def input_scale(n_initial_input: float, ns: list[tuple[float, float]]) -> float:
    """The scale a layer's input integers carry: the network input's, times every earlier layer's n_w n_out."""
    scale = n_initial_input
    for weight_scale, output_scale in ns:
        scale *= weight_scale * output_scale
    return scale


def notebook_plan(net: Net, spec: QuantSpec, profile: ActivationProfile) -> QuantPlan:
    """The notebook's variant `spec` of `net` as a QuantPlan (its forward: jobs.ptq.simulate.SimulatedNet),
    every scale from the functions above, called as the notebook's NetQuantized and NetQuantizedWithBias
    do. Weights only (activation_bits None): n_in = n_out = 1, so the integers carry every weight scale."""
    n = spec.calibration_images
    acts = spec.quantizes_activations
    pixels = profile.flat(0, n) if acts else None  # each profiled tensor flattened once: its scale and its range
    n_in = quantize_initial_input(pixels) if pixels is not None else 1.0
    ns: list[tuple[float, float]] = []
    layers = []
    for k, name in enumerate(LAYERS):
        layer = net.layer(name)
        values, n_w = quantized_weights(layer.weight.detach().float())
        out = profile.flat(k + 1, n) if acts else None
        n_out = quantize_activations(out, n_w, n_in, ns) if out is not None else 1.0
        bias = None if layer.bias is None else layer.bias.detach().double().cpu()
        if bias is not None and spec.bias == "int32":
            bias = quantized_bias(bias, n_w, n_in, ns)
        carried, channels = input_scale(n_in, ns), values.shape[0]
        layers.append(LayerPlan(name, values.double().cpu(), torch.full((channels,), n_w, dtype=torch.float64),
                                carried, torch.full((channels,), n_out, dtype=torch.float64), bias,
                                carried * n_w * n_out, max_abs(out)))
        ns.append((n_w, n_out))
    return QuantPlan(spec, n_in, max_abs(pixels), tuple(layers))


def max_abs(profiled: torch.Tensor | None) -> float | None:
    """max |x| of a profiled tensor, recorded beside the scales; None for weights only."""
    return None if profiled is None else float(profiled.abs().max())


def is_notebooks(spec: QuantSpec) -> bool:
    """The choices the functions above hard-code: the notebook's (the bias int32 or as trained, either)."""
    return (spec.weight_bits, spec.activation_bits in (None, 8), spec.granularity, spec.weight_method,
            spec.activation_method, spec.cumulative_scales) == (8, True, "tensor", "max", "max", True)
