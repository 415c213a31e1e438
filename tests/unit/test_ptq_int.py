"""jobs.ptq.integer: integer-only execution agrees with the float simulation, integer for integer."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from jobs.ptq import lenet
from jobs.ptq.lenet import LAYERS
from jobs.ptq.config import QuantSpec
from jobs.ptq.integer import IntegerNet, compare_with_simulation, int_matmul
from jobs.ptq.simulate import SimulatedNet, plan
from jobs.ptq.quantize import quantize_weight
from tests.factories import calibrated_plan


@pytest.mark.parametrize("m, k, n", [(5, 75, 6), (40, 400, 120), (17, 8, 8)])
def test_int8_matmul_is_exact_with_shapes_padded(m, k, n):
    g = torch.Generator().manual_seed(m)
    a = torch.randint(-128, 128, (m, k), generator=g, dtype=torch.int8)
    b = torch.randint(-128, 128, (k, n), generator=g, dtype=torch.int8)
    assert torch.equal(int_matmul(a, b), a.long() @ b.long())


def test_int64_matmul_for_wider_integers():
    a = torch.tensor([[40000, -3], [2, 1]])
    b = torch.tensor([[30000], [5]])
    assert int_matmul(a, b).tolist() == [[1_199_999_985], [60_005]]


@pytest.mark.parametrize("spec", [
    QuantSpec(),
    QuantSpec(weight_bits=4, activation_bits=3, granularity="channel", activation_method="mse"),
    QuantSpec(weight_bits=2, activation_bits=2, weight_method="3sigma", activation_method="percentile"),
    QuantSpec(weight_bits=12, activation_bits=10),  # int64 accumulation, float64 simulation
], ids=["W8A8", "W4A3-channel-mse", "W2A2", "W12A10"])
def test_integer_only_run_gives_the_simulations_integers_on_every_image(spec):
    p, images = calibrated_plan(spec)
    data = [(images[:40], torch.zeros(40, dtype=torch.long)), (images[40:], torch.zeros(24, dtype=torch.long))]
    agreement = compare_with_simulation(p, data, "cpu")
    assert (agreement.images, agreement.prediction_mismatches, agreement.logit_mismatches) == (64, 0, 0)
    assert agreement.accumulator == ("int32" if spec.weight_bits <= 8 and spec.activation_bits <= 8 else "int64")
    logits = IntegerNet(p)(images)
    assert logits.dtype == torch.int64
    assert torch.equal(logits, SimulatedNet(p, "cpu").forward(images).long())


def test_the_integer_net_holds_integer_tensors_only():
    p, images = calibrated_plan(QuantSpec())
    net = IntegerNet(p)
    assert all(w.dtype == torch.int8 for w in net.weights.values())
    assert all(b.dtype == torch.int64 for b in net.biases.values())


def test_the_im2col_convolution_is_the_convolution():
    p, images = calibrated_plan(QuantSpec())
    net = IntegerNet(p)
    x = torch.randint(-128, 128, (3, 3, 32, 32), dtype=torch.int8)
    w = p.layers[0].weight.long()
    expected = F.conv2d(x.long(), w)  # torch's (slow) int64 convolution on the CPU
    acc = int_matmul(x.unfold(2, 5, 1).unfold(3, 5, 1).permute(0, 2, 3, 1, 4, 5).reshape(-1, 75), net.weights["conv1"])
    assert torch.equal(acc.view(3, 28, 28, 6).permute(0, 3, 1, 2), expected)


def test_an_integer_run_needs_quantized_activations_and_an_int32_bias():
    p, _ = calibrated_plan(QuantSpec())
    weights_only = plan(lenet.build(False, 0), QuantSpec(activation_bits=None),
                        {n: quantize_weight(lenet.build(False, 0).layer(n).weight, 8) for n in LAYERS}, None)
    with pytest.raises(ValueError, match="needs quantized activations"):
        IntegerNet(weights_only)
    float_bias, _ = calibrated_plan(QuantSpec(bias="float"))
    with pytest.raises(ValueError, match="needs an int32 bias"):
        IntegerNet(float_bias)
