"""Post-training quantization of the notebook's LeNet: its six variants, and a sweep beyond it.

run_ptq evaluates, each on the whole test set:
    Net float | Net W8 (weights only) | Net W8A8 (weights and activations)
    NetWithBias float | NetWithBias W8 float-bias (the bias left as trained) | NetWithBias W8A8B32 (int32 bias)
with the bits and choices of config.notebook (their scales from the notebook's own functions,
jobs.ptq.notebook), then every QuantSpec of config.sweep on Net.
Work is shared: activations are profiled once per network (the largest calibration asked; a
smaller one is its prefix), weights are quantized once per (bits, granularity, method), and
ranges once per (calibration, method, bits); test images stay on the device in large batches.
Under torch.distributed, give each rank its shard of the test set: accuracies and losses are
then summed over ranks by evaluate; the integer checks and integer-agreement counts are this rank's.
"""
from __future__ import annotations

import dataclasses
import time
from functools import lru_cache
from typing import Optional, Union

import torch

import jobs.ptq.simulate as ptq_sim
from jobs.runtime.evaluate import batches, evaluate
from jobs.ptq.lenet import LAYERS, Net, resident
from jobs.ptq.choices import PERCENTILE
from jobs.ptq.config import PTQConfig, QuantSpec
from jobs.ptq.integer import compare_with_simulation
from jobs.ptq.notebook import is_notebooks, notebook_plan
from jobs.ptq.profile import ACTIVATIONS, ActivationProfile, activation_ranges, calibration_indices, profile_activations
from jobs.ptq.result import ActivationLayerStats, IntegerCheck, LayerScales, PTQOutcome, VariantResult
from jobs.ptq.simulate import QuantPlan, SimulatedNet
from jobs.ptq.stats import tensor_stats, weight_layer_stats
from jobs.ptq.quantize import QuantizedWeight, quantize_weight, scale_for

DataSet = Union[object, tuple[torch.Tensor, torch.Tensor]]  # a torchvision CIFAR10, or (normalised images, labels)


class _Network:
    """One trained network with its caches: quantized weights and activation ranges."""

    def __init__(self, name: str, net: Net, calibration: torch.Tensor) -> None:
        self.name, self.net = name, net
        start = time.perf_counter()
        self.profile: ActivationProfile = profile_activations(net, calibration)
        self.profile_s = time.perf_counter() - start
        self._weights = lru_cache(maxsize=None)(self._quantize_weights)
        self._ranges = lru_cache(maxsize=None)(self._activation_ranges)

    def weights(self, bits: int, granularity: str, method: str, percentile: float) -> dict[str, QuantizedWeight]:
        """Cached per (bits, granularity, method[, percentile])."""
        return self._weights(bits, granularity, method, percentile if method == "percentile" else None)

    def ranges(self, n: int, method: str, bits: int, percentile: float) -> tuple[float, ...]:
        """Cached per (calibration, method, and the bits or percentile where the method uses them)."""
        return self._ranges(n, method, bits if method == "mse" else None,
                            percentile if method == "percentile" else None)

    def _quantize_weights(self, bits, granularity, method, percentile) -> dict[str, QuantizedWeight]:
        return {n: quantize_weight(self.net.layer(n).weight, bits, method, granularity, percentile or PERCENTILE)
                for n in LAYERS}

    def _activation_ranges(self, n, method, bits, percentile) -> tuple[float, ...]:
        return activation_ranges(self.profile, n, method, bits or 8, percentile or PERCENTILE)

    def plan(self, spec: QuantSpec, role: str) -> QuantPlan:
        """The notebook's variants take their scales from the notebook's functions (jobs.ptq.notebook)."""
        if role == "notebook" and is_notebooks(spec):
            return notebook_plan(self.net, spec, self.profile)
        weights = self.weights(spec.weight_bits, spec.granularity, spec.weight_method, spec.percentile)
        ranges = None
        if spec.activation_bits is not None:
            ranges = self.ranges(spec.calibration_images, spec.activation_method, spec.activation_bits,
                                 spec.percentile)
        return ptq_sim.plan(self.net, spec, weights, ranges)


def _as_tensors(data: DataSet, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    if isinstance(data, tuple):
        return data[0].to(device), data[1].to(device)
    return resident(data, device)


def run_ptq(float_net: Net, bias_net: Net, train_set: DataSet, test_set: DataSet,
            config: PTQConfig | None = None, device: torch.device | str = "cpu") -> PTQOutcome:
    """Quantize the two trained networks (already on `device`) as config says and evaluate every
    variant on test_set. Calibration images come from train_set. Raises ptq_sim.IntegerRangeError
    if any quantized layer's input was not an integer in range (a bug, never expected)."""
    start, device, config = time.perf_counter(), torch.device(device), config or PTQConfig()
    train_images, _ = _as_tensors(train_set, device)
    test = _as_tensors(test_set, device)
    index = calibration_indices(train_images.shape[0], config.most_calibration_images, config.calibration_seed)
    calibration = train_images[index.to(device)]
    nets = {"Net": _Network("Net", float_net, calibration),
            "NetWithBias": _Network("NetWithBias", bias_net, calibration[:config.notebook.calibration_images])}
    run = _Runner(config, device, test)
    variants = list(_notebook_variants(run, nets, config.notebook))
    variants += [run.quantized_variant(f"Net {s.label()}", "sweep", nets["Net"], s, _integer_run(config, "sweep", s))
                 for s in config.sweep]
    bad = [(v.name, c.name) for v in variants for c in v.integer_checks if c.non_integer or c.out_of_range]
    if bad:
        raise ptq_sim.IntegerRangeError(f"quantized layer inputs not integers in range: {bad}")
    return PTQOutcome(config, tuple(variants), _weight_stats(nets["Net"], config),
                      _activation_stats(nets["Net"], config), calibration.shape[0],
                      sum(n.profile_s for n in nets.values()), time.perf_counter() - start)


def _integer_run(config: PTQConfig, role: str, spec: QuantSpec) -> bool:
    wanted = config.integer_run == "all" or (config.integer_run == "notebook" and role == "notebook")
    return wanted and spec.quantizes_activations and spec.bias == "int32"


def _notebook_variants(run: _Runner, nets: dict[str, _Network], spec: QuantSpec):
    weights_only = dataclasses.replace(spec, activation_bits=None)
    w, wa = f"W{spec.weight_bits}", f"W{spec.weight_bits}A{spec.activation_bits}"
    yield run.float_variant("Net float", nets["Net"])
    yield run.quantized_variant(f"Net {w}", "notebook", nets["Net"], weights_only, False)
    yield run.quantized_variant(f"Net {wa}", "notebook", nets["Net"], spec, _integer_run(run.config, "notebook", spec))
    yield run.float_variant("NetWithBias float", nets["NetWithBias"])
    yield run.quantized_variant(f"NetWithBias {w} float-bias", "notebook", nets["NetWithBias"],
                        dataclasses.replace(weights_only, bias="float"), False)
    int32 = dataclasses.replace(spec, bias="int32")
    yield run.quantized_variant(f"NetWithBias {wa}B32", "notebook", nets["NetWithBias"], int32,
                        _integer_run(run.config, "notebook", int32))


class _Runner:
    def __init__(self, config: PTQConfig, device: torch.device, test: tuple[torch.Tensor, torch.Tensor]) -> None:
        self.config, self.device, self.test = config, device, test
        self.baselines: dict[str, float] = {}

    def _data(self):
        return batches(*self.test, size=self.config.eval_batch)

    def float_variant(self, name: str, network: _Network) -> VariantResult:
        start = time.perf_counter()
        e = evaluate(network.net, self._data(), self.device)
        self.baselines[network.name] = e.accuracy
        return VariantResult(name, "notebook", network.name, None, e.accuracy, e.loss, e.images, name, 0.0,
                             None, None, (), (), None, time.perf_counter() - start)

    def quantized_variant(self, name: str, role: str, network: _Network, spec: QuantSpec,
                          integer: bool) -> VariantResult:
        start = time.perf_counter()
        p = network.plan(spec, role)
        sim = SimulatedNet(p, self.device)
        e = evaluate(sim, self._data(), self.device)
        checks = tuple(IntegerCheck(*row) for row in sim.check_counts()) if spec.quantizes_activations else ()
        eval_s, agreement = time.perf_counter() - start, None
        if integer:
            agreement = compare_with_simulation(p, self._data(), self.device)
        return VariantResult(
            name, role, network.name, spec, e.accuracy, e.loss, e.images, f"{network.name} float",
            e.accuracy - self.baselines[network.name], p.input_scale if spec.quantizes_activations else None,
            str(p.dtype).replace("torch.", ""), _scales(p), checks, agreement, eval_s,
            time.perf_counter() - start - eval_s)


def _scales(p: QuantPlan) -> tuple[LayerScales, ...]:
    return tuple(LayerScales(
        lp.name, tuple(lp.weight_scale.tolist()), lp.input_scale, tuple(lp.multiplier.tolist()), lp.output_scale,
        tuple((lp.weight_scale * lp.input_scale).tolist()) if lp.bias is not None else None, lp.activation_range)
        for lp in p.layers)


def _weight_stats(network: _Network, config: PTQConfig):
    spec = config.notebook
    per_tensor = network.weights(spec.weight_bits, "tensor", spec.weight_method, spec.percentile)
    return tuple(weight_layer_stats(n, network.net.layer(n).weight, per_tensor[n], config.histogram_bins)
                 for n in LAYERS)


def _activation_stats(network: _Network, config: PTQConfig):
    spec = config.notebook
    n = spec.calibration_images
    bits: Optional[int] = spec.activation_bits
    ranges = network.ranges(n, spec.activation_method, bits, spec.percentile) if bits else None
    return tuple(ActivationLayerStats(
        tensor_stats(name, network.profile.flat(k, n), config.histogram_bins), bits,
        ranges[k] if ranges else None, float(scale_for(ranges[k], bits)) if ranges and bits else None)
        for k, name in enumerate(ACTIVATIONS))
