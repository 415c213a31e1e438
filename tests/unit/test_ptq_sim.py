"""jobs.ptq.simulate: the notebook's scales, worked by hand, and the integer check on layer inputs.

Every layer's weights are set to max |w| = 0.5, so n_w = 127 / 0.5 = 254 at 8 bits; the
input range is 1 (n_in = 127) and the layer output ranges are 2, 4, 8, 16, 10.
"""
from __future__ import annotations

import dataclasses

import pytest
import torch

from jobs.ptq import lenet
from jobs.ptq.lenet import LAYERS
from jobs.ptq.config import QuantSpec
from jobs.ptq.simulate import IntegerRangeError, SimulatedNet, plan
from jobs.ptq.quantize import quantize_weight

RANGES = (1.0, 2.0, 4.0, 8.0, 16.0, 10.0)


def _net(with_bias: bool = True) -> lenet.Net:
    net = lenet.build(with_bias, seed=0)
    with torch.no_grad():
        for name in LAYERS:
            w = net.layer(name).weight
            w.clamp_(-0.4, 0.4)
            w.view(-1)[0] = 0.5  # max |w| = 0.5 in every layer and in output channel 0
        if with_bias:
            net.fc3.bias.copy_(torch.tensor([0.1, -0.0025] + [0.0] * 8))
    return net


def _plan(net, spec=QuantSpec(), ranges=RANGES):
    weights = {n: quantize_weight(net.layer(n).weight, spec.weight_bits, spec.weight_method, spec.granularity)
               for n in LAYERS}
    return plan(net, spec, weights, ranges if spec.quantizes_activations else None)


def test_output_scales_absorb_every_earlier_scale():
    """n_out_k = 127 / (r_k C_{k-1} n_w_k), and then C_k = 127 / r_k:
    conv1: 127 / (2 * 127 * 254) = 1/508, C_1 = 63.5; conv2: 127 / (4 * 63.5 * 254) = 1/508, C_2 = 31.75."""
    p = _plan(_net())
    assert p.input_scale == 127.0
    conv1, conv2, fc1, fc2, fc3 = p.layers
    assert conv1.weight_scale[0].item() == 254.0
    assert conv1.multiplier[0].item() == pytest.approx(1 / 508)
    assert conv1.output_scale == 63.5
    assert conv2.input_scale == 63.5 and conv2.multiplier[0].item() == pytest.approx(1 / 508)
    assert conv2.output_scale == 31.75
    assert fc3.input_scale == 127 / 16 and fc3.output_scale == 12.7
    assert p.output_scale == 12.7


def test_int32_bias_has_the_scale_of_the_accumulator():
    """fc3's accumulator scale S_5 = n_w C_4 = 254 * 127/16 = 2016.125:
    0.1 -> round(201.6125) = 202; -0.0025 -> round(-5.04) = -5."""
    fc3 = _plan(_net()).layers[-1]
    assert (fc3.weight_scale * fc3.input_scale)[0].item() == 2016.125
    assert fc3.bias[:3].tolist() == [202.0, -5.0, 0.0]


def test_float_bias_is_added_as_trained():
    fc3 = _plan(_net(), QuantSpec(activation_bits=None, bias="float")).layers[-1]
    assert fc3.bias[:2].tolist() == pytest.approx([0.1, -0.0025])


def test_the_classic_bug_leaves_the_earlier_scales_out():
    """n_out_1 = 127 / (r_1 n_w_1) = 127 / (2 * 254) = 0.25: 127 (= C_0) times too large."""
    good, bad = _plan(_net()), _plan(_net(), QuantSpec(cumulative_scales=False))
    assert bad.layers[0].multiplier[0].item() == 0.25
    assert bad.layers[0].multiplier[0].item() == pytest.approx(127 * good.layers[0].multiplier[0].item())


def test_weights_only_carries_the_product_of_weight_scales_as_the_notebook():
    """No rescale between layers (multiplier 1); C_k = 254^k; the logits are y_5 / 254^5."""
    p = _plan(_net(), QuantSpec(activation_bits=None))
    assert p.input_scale == 1.0
    assert all(lp.multiplier.tolist() == [1.0] * lp.multiplier.numel() for lp in p.layers)
    assert [lp.output_scale for lp in p.layers] == [254.0 ** k for k in range(1, 6)]


def test_weights_only_per_channel_brings_every_channel_to_the_largest_scale():
    p = _plan(_net(), QuantSpec(activation_bits=None, granularity="channel"))
    conv1 = p.layers[0]
    assert conv1.weight_scale[0].item() == 254.0  # channel 0 holds the 0.5
    ratio = conv1.weight_scale.max() / conv1.weight_scale
    assert torch.allclose(conv1.multiplier, ratio)
    assert conv1.output_scale == conv1.weight_scale.max().item()


def test_weights_only_simulation_matches_dequantized_weights():
    net = _net(with_bias=False)
    spec = QuantSpec(activation_bits=None, weight_bits=4, granularity="channel")
    images = torch.rand(8, 3, 32, 32) * 2 - 1
    fake = lenet.Net()
    with torch.no_grad():
        for name in LAYERS:
            fake.layer(name).weight.copy_(quantize_weight(net.layer(name).weight, 4, granularity="channel").dequantized())
    torch.testing.assert_close(SimulatedNet(_plan(net, spec), "cpu")(images), fake(images), rtol=1e-4, atol=1e-5)


def test_the_accumulator_type_is_float32_only_where_it_is_exact():
    """8/8 bits: |acc| <= 400 * 128 * 128 = 6,553,600 < 2^24; 16/16 bits or a huge bias: float64."""
    net = _net()
    assert _plan(net).accumulator_bound() == 400 * 128 * 128
    assert _plan(net).dtype == torch.float32
    assert _plan(net, QuantSpec(weight_bits=16, activation_bits=16)).dtype == torch.float64
    with torch.no_grad():
        net.fc3.bias[0] = 5e4  # x S_5 = 2016.125 -> about 1e8 > 2^24
    assert _plan(net).dtype == torch.float64


def test_every_quantized_layer_input_is_counted_and_in_range():
    net = _net()
    sim = SimulatedNet(_plan(net), "cpu", strict=True)
    sim(torch.rand(5, 3, 32, 32) * 2 - 1)
    counts = sim.check_counts()
    assert [c[0] for c in counts] == list(LAYERS)
    assert [c[1] for c in counts] == [5 * 3072, 5 * 1176, 5 * 400, 5 * 120, 5 * 84]
    assert all(c[2] == 0 and c[3] == 0 for c in counts)


@pytest.mark.parametrize("broken_input, message", [
    (lambda p, images, dtype: images.to(dtype), "conv1: its input holds .* non-integers"),
    (lambda p, images, dtype: torch.round(images.to(dtype) * 1000), r"outside \[-128, 127\]"),
])
def test_the_check_fires_when_an_input_is_not_an_integer_in_range(monkeypatch, broken_input, message):
    monkeypatch.setattr("jobs.ptq.simulate.quantize_input", broken_input)
    with pytest.raises(IntegerRangeError, match=message):
        SimulatedNet(_plan(_net()), "cpu", strict=True)(torch.rand(2, 3, 32, 32) * 2 - 1)
    counting = SimulatedNet(_plan(_net()), "cpu")  # the default counts instead of raising
    counting(torch.rand(2, 3, 32, 32) * 2 - 1)
    assert sum(c[2] + c[3] for c in counting.check_counts()) > 0


def test_quantized_activations_are_integers_at_the_layer_scale():
    net = _net(with_bias=False)
    p = _plan(net, dataclasses.replace(QuantSpec(), activation_bits=4))
    logits = SimulatedNet(p, "cpu").forward(torch.rand(3, 3, 32, 32) * 2 - 1)
    assert torch.equal(logits, logits.round()) and logits.min() >= -8 and logits.max() <= 7
