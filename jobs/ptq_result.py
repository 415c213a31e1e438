"""What a PTQ run found, as typed, JSON-friendly dataclasses (PTQOutcome.to_dict / from_dict).

Every field is a number, a string, a bool, None, a tuple or another of these dataclasses, so
to_dict gives plain JSON data and from_dict rebuilds the same objects (tuples for lists).
"""
from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any, Optional
from collections.abc import Mapping

from jobs.ptq_config import PTQConfig, QuantSpec
from jobs.ptq_stats import ActivationLayerStats, WeightLayerStats


@dataclass(frozen=True)
class LayerScales:
    name: str
    weight_scale: tuple[float, ...]  # n_w per output channel (all equal when per-tensor)
    input_scale: float  # C_{k-1}
    multiplier: tuple[float, ...]  # n_out_k per output channel (weights only: max(n_w) / n_w)
    output_scale: float  # C_k
    bias_scale: Optional[tuple[float, ...]]  # S_k = n_w C_{k-1}, when the layer has a bias
    activation_range: Optional[float]  # r_k, when activations are quantized


@dataclass(frozen=True)
class IntegerCheck:
    """The check on one quantized layer's input: integers within the signed range."""

    name: str
    values: int
    non_integer: int
    out_of_range: int


@dataclass(frozen=True)
class IntegerAgreement:
    """The integer-only run against the float simulation, on every test image (ptq_int)."""

    images: int
    prediction_mismatches: int
    logit_mismatches: int
    accumulator: str  # int32 (int8 GEMM) or int64


@dataclass(frozen=True)
class VariantResult:
    name: str
    role: str  # "notebook" (its six variants) or "sweep"
    model: str  # "Net" or "NetWithBias"
    spec: Optional[QuantSpec]  # None: the float network
    accuracy: float  # top-1 on the test set, 0..1
    loss: float
    images: int
    baseline: str  # the float variant of the same model
    delta_accuracy: float  # accuracy - the baseline's (0..1 units)
    input_scale: Optional[float]  # n_in, when activations are quantized
    dtype: Optional[str]  # the simulation's float type: float32 (exact below 2^24) or float64
    scales: tuple[LayerScales, ...]
    integer_checks: tuple[IntegerCheck, ...]  # empty when activations stay float
    integer_agreement: Optional[IntegerAgreement]  # when the integer-only run was made
    eval_s: float  # seconds to build and evaluate the variant
    integer_s: float = 0.0  # seconds for the integer-only run and its comparison

    @property
    def integer_violations(self) -> int:
        return sum(c.non_integer + c.out_of_range for c in self.integer_checks)


@dataclass(frozen=True)
class PTQOutcome:
    config: PTQConfig
    variants: tuple[VariantResult, ...]
    weight_stats: tuple[WeightLayerStats, ...]  # Net's layers, quantized with the notebook spec
    activation_stats: tuple[ActivationLayerStats, ...]  # Net's input and layer outputs, notebook calibration
    calibration_images: int  # images profiled (the largest calibration any spec asks)
    profile_s: float
    total_s: float

    def variant(self, name: str) -> VariantResult:
        for v in self.variants:
            if v.name == name:
                return v
        raise KeyError(f"no variant {name!r}; there are: {', '.join(v.name for v in self.variants)}")

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PTQOutcome:
        return _build(cls, data)


def _plain(value: Any) -> Any:
    if isinstance(value, PTQConfig):
        return value.to_dict()
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def _build(tp: Any, value: Any) -> Any:
    """Rebuild `value` (plain JSON data) as type `tp`."""
    if value is None:
        return None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union:  # Optional[X]
        return _build(next(a for a in args if a is not type(None)), value)
    if origin is tuple:
        return tuple(_build(args[0], v) for v in value)
    if tp is PTQConfig:
        return PTQConfig.from_dict(value)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        return typing.cast(Any, tp)(**{f.name: _build(hints[f.name], value[f.name]) for f in dataclasses.fields(tp)})
    return value
