"""What a PTQ run found, as typed, JSON-friendly dataclasses: a result file's "ptq" block is
PTQFindings.to_dict(), and PTQFindings.from_dict reads it back (PTQOutcome likewise).

Every field is a number, a string, a bool, None, a tuple or another of these dataclasses, so
to_dict gives plain JSON data and from_dict rebuilds the same objects (tuples for lists),
checking every field's type and range on the way: a file edited by hand or cut up is refused
naming the field, and never reaches a table as a wrong number. No torch: collect reads these.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import reprlib
import types
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, Optional
from collections.abc import Mapping

from jobs.core.atomic import NON_FINITE
from jobs.core.result import Block
from jobs.ptq.config import PTQConfig, QuantSpec


@dataclass(frozen=True)
class Histogram:
    edges: tuple[float, ...]  # bins + 1 edges, equal bins from min to max
    counts: tuple[int, ...]


@dataclass(frozen=True)
class TensorStats:
    name: str
    values: int
    min: float
    max: float
    mean: float
    std: float  # population std
    sigma3_low: float  # mean - 3 std
    sigma3_high: float  # mean + 3 std
    histogram: Histogram


@dataclass(frozen=True)
class WeightLayerStats:
    stats: TensorStats
    bits: int
    range: float  # the clipping range the notebook spec chose (per-tensor)
    scale: float  # n_w = qmax / range
    kl_divergence: float  # between the weights' and the dequantized weights' histograms (quant.kl_divergence)


@dataclass(frozen=True)
class ActivationLayerStats:
    stats: TensorStats
    bits: Optional[int]
    range: Optional[float]  # the clipping range the notebook spec chose
    scale: Optional[float]  # qmax / range: C_k, the scale the layer's integers carry




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
    """The integer-only run against the float simulation, on every test image
    (jobs.ptq.integer.compare_with_simulation)."""

    images: int
    prediction_mismatches: int  # images whose top-1 class differs between the two runs
    logit_mismatches: int  # images with any logit integer different
    accumulator: str  # "int32" (int8 GEMM) or "int64"


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
        return _build(cls, data, "outcome", "outcome")


@dataclass(frozen=True)
class TrainedNet:
    model: str  # Net or NetWithBias
    training_id: str
    reused: bool  # loaded from nets/, trained by an earlier cell or run
    train_s: float  # when it was trained (the device synchronised at both ends)
    epoch_losses: tuple[float, ...]
    cuda_graph: bool
    device: str


@dataclass(frozen=True)
class CodeListing:
    """A function that ran, as its source text read by the job (jobs.ptq.listing): the hand-in prints
    the code that produced the numbers, without collect importing the torch side."""

    stands_for: str  # the notebook's function it does the work of ("quantized_weights")
    function: str  # where it lives: "jobs.ptq.quantize.quantize_weight"
    source: str


@dataclass(frozen=True)
class PTQFindings(Block):
    """A PTQ result's "ptq" block: the two trained networks, what quantizing them found, and the code
    that did it (empty in a result written before the job recorded it)."""

    KEY: ClassVar[str] = "ptq"

    training: tuple[TrainedNet, ...]
    outcome: PTQOutcome
    code: tuple[CodeListing, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _plain(self)

    @classmethod
    def from_dict(cls, data: Any) -> PTQFindings:
        """Raises TypeError or ValueError naming the field ("ptq.outcome.variants[2].accuracy ...")."""
        return _build(cls, data, "ptq", "ptq")


def _plain(value: Any) -> Any:
    if isinstance(value, PTQConfig):
        return value.to_dict()
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


MAX_COUNT = 2**53  # every count a run makes is below it, and JSON readers hold it exactly
BOUNDS = {"accuracy": (0.0, 1.0), "delta_accuracy": (-1.0, 1.0)}  # fractions of the test set
CHOICES = {"role": ("notebook", "sweep"), "model": ("Net", "NetWithBias")}


def _build(tp: Any, value: Any, where: str, name: str) -> Any:
    """`value` (plain JSON data) as type `tp`, its type and range checked; `where` names it in an
    error, `name` is its field's name (the element of a list has its list's)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):  # Optional[X]
        return None if value is None else _build(next(a for a in args if a is not type(None)), value, where, name)
    if origin is tuple:
        if not isinstance(value, list):
            raise TypeError(f"{where} must be a list, got {reprlib.repr(value)}")
        if args[0] in _SCALARS:  # a histogram's thousands of numbers: each checked, its place named only if bad
            try:
                return tuple(_scalar(args[0], v, where, name) for v in value)
            except (TypeError, ValueError):
                pass  # said again below, with its index
        return tuple(_build(args[0], v, f"{where}[{i}]", name) for i, v in enumerate(value))
    if dataclasses.is_dataclass(tp):
        return _record(tp, value, where)
    return _scalar(tp, value, where, name)


def _record(tp: Any, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise TypeError(f"{where} must be an object, got {reprlib.repr(value)}")
    fields = {f.name: f for f in dataclasses.fields(tp)}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise ValueError(f"{where} has unknown key(s) {unknown}")
    hints, kwargs = _hints(tp), {}
    for name, f in fields.items():
        if name in value:
            kwargs[name] = _build(hints[name], value[name], f"{where}.{name}", name)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ValueError(f"{where}.{name} is missing")
    try:
        return tp(**kwargs)
    except ValueError as exc:  # the dataclass's own checks (a QuantSpec's choices)
        raise ValueError(f"{where}: {exc}") from None


_SCALARS = (bool, str, int, float)


@functools.cache
def _hints(tp: Any) -> dict[str, Any]:
    """A dataclass's field types (evaluated once per class: every result has thousands of records)."""
    return typing.get_type_hints(tp)


def _scalar(tp: Any, value: Any, where: str, name: str) -> Any:
    if tp is bool:
        if not isinstance(value, bool):
            raise TypeError(f"{where} must be true or false, got {reprlib.repr(value)}")
        return value
    if tp is str:
        if not isinstance(value, str) or value not in CHOICES.get(name, (value,)):
            raise TypeError(f"{where} must be " + (f"one of {CHOICES[name]}" if name in CHOICES else "a string")
                            + f", got {reprlib.repr(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
            raise ValueError(f"{where} must be a whole number in 0 .. 2**53, got {reprlib.repr(value)}")
        return value
    if tp is float:
        return _number(value, where, name)
    raise TypeError(f"{where}: no reader for {tp!r}")


def _number(value: Any, where: str, name: str) -> float:
    """A number (strict JSON's "NaN" and "Infinity" strings too); a fraction within its bounds and
    seconds (`*_s`) finite and >= 0."""
    number = NON_FINITE.get(value, value) if isinstance(value, str) else value
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise TypeError(f"{where} must be a number, got {reprlib.repr(value)}")
    number = float(number)
    low, high = BOUNDS.get(name, (0.0, math.inf) if name.endswith("_s") else (-math.inf, math.inf))
    if name in BOUNDS or name.endswith("_s"):
        if not (math.isfinite(number) and low <= number <= high):
            raise ValueError(f"{where} must be a finite number in {low:g} .. {high:g}, got {reprlib.repr(value)}")
    return number
