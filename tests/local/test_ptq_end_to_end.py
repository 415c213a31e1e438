"""PTQ end to end on the CPU: train the notebook's networks on a synthetic CIFAR-10 whose classes
overlap (colour jitter 30: float accuracy about 64 %), quantize them, and check what the study
relies on: fewer bits cost accuracy, the missing-product bug is caught, every quantized layer
sees integers in range, the integer-only run agrees on every test image, and a float bias on
integer weights loses what an int32 bias keeps.
"""
from __future__ import annotations

import copy
import json

import pytest
import torch

from jobs.ptq import lenet
from jobs.runtime.data import CIFAR10Files, write_synthetic
from jobs.ptq.train import TrainSettings, train
from jobs.ptq.experiment import run_ptq
from jobs.ptq.config import PTQConfig, QuantSpec
from jobs.ptq.result import PTQOutcome

ELEMENTS = {"conv1": 3072, "conv2": 1176, "fc1": 400, "fc2": 120, "fc3": 84}
SWEEP = (
    QuantSpec(weight_bits=4, activation_bits=None),
    QuantSpec(weight_bits=2, activation_bits=None),
    QuantSpec(weight_bits=2, activation_bits=None, granularity="channel", weight_method="mse"),
    QuantSpec(activation_bits=4),
    QuantSpec(activation_bits=2),
    QuantSpec(activation_bits=4, activation_method="percentile", calibration_images=16),
    QuantSpec(activation_bits=4, activation_method="mse", granularity="channel"),
    QuantSpec(cumulative_scales=False),
)


def _imbalanced(images, labels, seed):
    """Class k kept with probability 0.6^k: the fc3 bias then carries the class priors."""
    keep = torch.rand(labels.shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) \
        < 0.6 ** labels.double()
    return images[keep], labels[keep]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("ptq")
    write_synthetic(root, 5000, seed=0, test_images=2000, colour_jitter=30.0)
    train_images, train_labels = lenet.resident(CIFAR10Files(str(root), train=True))
    test = lenet.resident(CIFAR10Files(str(root), train=False))
    net = lenet.build(False, seed=0)
    train(net, train_images[:2000], train_labels[:2000], TrainSettings())  # the notebook's settings
    bias_train, bias_test = _imbalanced(train_images, train_labels, 0), _imbalanced(*test, 1)
    bias_net = lenet.build(True, seed=0)
    train(bias_net, *bias_train, TrainSettings(epochs=3, lr=0.004))
    balanced = run_ptq(net, bias_net, (train_images, train_labels), test,
                       PTQConfig(sweep=SWEEP, integer_run="all"))
    imbalanced = run_ptq(net, bias_net, bias_train, bias_test, PTQConfig())
    return balanced, imbalanced, bias_net, bias_test


def _acc(outcome: PTQOutcome, name: str) -> float:
    return outcome.variant(name).accuracy


def test_float_accuracy_is_well_below_100_percent(study):
    balanced = study[0]
    assert 0.4 < _acc(balanced, "Net float") < 0.8


def test_8_bits_cost_next_to_nothing(study):
    balanced = study[0]
    float_acc = _acc(balanced, "Net float")
    assert abs(_acc(balanced, "Net W8") - float_acc) <= 0.01
    assert abs(_acc(balanced, "Net W8A8") - float_acc) <= 0.02


def test_accuracy_falls_as_weight_bits_drop(study):
    balanced = study[0]
    w8, w4, w2 = (_acc(balanced, name) for name in ("Net W8", "Net W4 tensor max", "Net W2 tensor max"))
    assert w8 >= w4 - 0.02
    assert w4 >= w2 + 0.05


def test_accuracy_falls_as_activation_bits_drop(study):
    balanced = study[0]
    a8 = _acc(balanced, "Net W8A8")
    a4 = _acc(balanced, "Net W8A4 tensor max a:max cal400")
    a2 = _acc(balanced, "Net W8A2 tensor max a:max cal400")
    assert a8 >= a4 - 0.02
    assert a4 >= a2 + 0.05


def test_the_missing_product_bug_collapses_accuracy(study):
    balanced = study[0]
    bug = _acc(balanced, "Net W8A8 tensor max a:max cal400 BUG:no-cumulative-scales")
    assert bug < 0.2 and bug < _acc(balanced, "Net W8A8") - 0.3


def test_every_quantized_layer_input_is_an_integer_in_range(study):
    balanced = study[0]
    quantized = [v for v in balanced.variants if v.spec is not None and v.spec.quantizes_activations]
    assert len(quantized) == 7  # W8A8, W8A8B32 and the sweep's five
    for v in quantized:
        assert [(c.name, c.values) for c in v.integer_checks] == [(n, e * v.images) for n, e in ELEMENTS.items()]
        assert [(c.non_integer, c.out_of_range) for c in v.integer_checks] == [(0, 0)] * len(ELEMENTS), v.name


def test_the_integer_only_run_agrees_on_every_test_image(study):
    balanced = study[0]
    checked = [v for v in balanced.variants if v.integer_agreement is not None]
    assert len(checked) == 7  # every activation-quantized variant (an int32 bias, or none)
    for v in checked:
        a = v.integer_agreement
        assert (a.images, a.prediction_mismatches, a.logit_mismatches, a.accumulator) == (2000, 0, 0, "int32"), v.name


def test_a_float_bias_on_integer_weights_acts_as_no_bias_and_int32_restores_it(study):
    _, imbalanced, bias_net, (images, labels) = study
    float_acc = _acc(imbalanced, "NetWithBias float")
    no_bias_net = copy.deepcopy(bias_net)  # the module's network stays as trained
    with torch.no_grad():
        no_bias_net.fc3.bias.zero_()
        no_bias = (no_bias_net(images).argmax(1) == labels).double().mean().item()
    assert float_acc - no_bias >= 0.02, "precondition: on this set the bias matters"
    float_bias = _acc(imbalanced, "NetWithBias W8 float-bias")
    assert float_bias <= float_acc - 0.02
    assert abs(float_bias - no_bias) <= 0.01
    assert abs(_acc(imbalanced, "NetWithBias W8A8B32") - float_acc) <= 0.015


def test_deltas_are_against_each_models_own_float_baseline(study):
    imbalanced = study[1]
    v = imbalanced.variant("NetWithBias W8A8B32")
    assert v.baseline == "NetWithBias float"
    assert v.delta_accuracy == pytest.approx(v.accuracy - _acc(imbalanced, "NetWithBias float"))


def test_per_layer_statistics_cover_every_weight_and_calibration_value(study):
    balanced = study[0]
    weights = {s.stats.name: s for s in balanced.weight_stats}
    assert sum(s.stats.values for s in weights.values()) == 61_770  # the notebook's Net
    assert all(sum(s.stats.histogram.counts) == s.stats.values for s in weights.values())
    assert all(s.scale == pytest.approx(127 / max(abs(s.stats.min), abs(s.stats.max))) for s in weights.values())
    activations = {s.stats.name: s for s in balanced.activation_stats}
    assert activations["input"].scale == pytest.approx(127 / max(-activations["input"].stats.min,
                                                                   activations["input"].stats.max))
    assert activations["conv1"].stats.values == 400 * 1176 and activations["conv1"].stats.min == 0.0
    assert activations["fc3"].stats.min < 0  # logits, no ReLU


def test_the_outcome_survives_json(study):
    balanced = study[0]
    back = PTQOutcome.from_dict(json.loads(json.dumps(balanced.to_dict())))
    assert back == balanced
