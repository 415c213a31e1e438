"""What a post-training quantization run does: the choices for one quantized network (QuantSpec),
and the run's choices (PTQConfig: the notebook's variants, a sweep, calibration, histograms).

Every field is checked on construction; a bad value raises ValueError naming the field.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional
from collections.abc import Mapping

from jobs.core.cell import check_choice
from jobs.ptq.choices import GRANULARITIES, PERCENTILE, RANGE_METHODS, check_bits, check_percentile

BIAS_MODES = ("int32", "float")
INTEGER_RUNS = ("none", "notebook", "all")
SWEEP_BITS = (8, 6, 5, 4, 3, 2)
SWEEP_CALIBRATION = (16, 400, 4000)


@dataclass(frozen=True)
class QuantSpec:
    """One way to quantize the network (defaults: the notebook's)."""

    weight_bits: int = 8
    activation_bits: Optional[int] = 8  # None: activations stay float (weights only)
    granularity: str = "tensor"  # weights: one scale per tensor, or per output channel
    weight_method: str = "max"  # clipping range of the weights (quant.RANGE_METHODS)
    activation_method: str = "max"  # clipping range of the input and of each layer's output
    calibration_images: int = 400  # training images profiled for the activation ranges
    percentile: float = PERCENTILE  # for the "percentile" method
    bias: str = "int32"  # int32: round(b n_w C_{k-1}) (Jacob et al.); float: the trained bias added as is
    cumulative_scales: bool = True  # False: the classic bug (n_out without earlier scales); diagnostics only

    def __post_init__(self) -> None:
        check_bits(self.weight_bits, "weight_bits")
        if self.activation_bits is not None:
            check_bits(self.activation_bits, "activation_bits")
        check_choice("granularity", self.granularity, GRANULARITIES)
        check_choice("weight_method", self.weight_method, RANGE_METHODS)
        check_choice("activation_method", self.activation_method, RANGE_METHODS)
        if isinstance(self.calibration_images, bool) or not isinstance(self.calibration_images, int) \
                or self.calibration_images < 1:
            raise ValueError(f"calibration_images must be a positive integer, got {self.calibration_images!r}")
        object.__setattr__(self, "percentile", check_percentile(self.percentile))
        check_choice("bias", self.bias, BIAS_MODES)
        if not isinstance(self.cumulative_scales, bool):
            raise ValueError(f"cumulative_scales must be true or false, got {self.cumulative_scales!r}")

    @property
    def quantizes_activations(self) -> bool:
        return self.activation_bits is not None

    def label(self) -> str:
        """Short and unique among specs that differ: e.g. 'W4 channel mse', 'W8A4 tensor max a:mse cal400'."""
        text = f"W{self.weight_bits}" + (f"A{self.activation_bits}" if self.quantizes_activations else "")
        text += f" {self.granularity} {self.weight_method}"
        if self.quantizes_activations:
            text += f" a:{self.activation_method} cal{self.calibration_images}"
        if "percentile" in (self.weight_method, self.activation_method if self.quantizes_activations else ""):
            text += f" p{self.percentile:g}"
        if self.bias != "int32":
            text += f" bias:{self.bias}"
        if not self.cumulative_scales:
            text += " BUG:no-cumulative-scales"
        return text

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QuantSpec:
        return cls(**data)


def default_sweep() -> tuple[QuantSpec, ...]:
    """Beyond the notebook, on the bias-free Net, each axis where it matters:
    weights only: bits 8..2 x per-tensor/per-channel x the four range methods (48);
    weights 8-bit (per-tensor, max) and activations: bits 8..2 x the four range methods x
    calibration 16/400/4000 images (72)."""
    weights_only = [QuantSpec(weight_bits=b, activation_bits=None, granularity=g, weight_method=m)
                    for b in SWEEP_BITS for g in GRANULARITIES for m in RANGE_METHODS]
    activations = [QuantSpec(weight_bits=8, activation_bits=b, activation_method=m, calibration_images=n)
                   for b in SWEEP_BITS for m in RANGE_METHODS for n in SWEEP_CALIBRATION]
    return tuple(weights_only + activations)


@dataclass(frozen=True)
class PTQConfig:
    notebook: QuantSpec = QuantSpec()  # the choices for the notebook's six variants
    sweep: tuple[QuantSpec, ...] = ()  # more variants of the bias-free Net (default_sweep() for the study)
    calibration_seed: int = 0  # calibration images: the first N of this permutation of the training set
    histogram_bins: int = 64
    eval_batch: int = 1000  # test images per forward pass
    integer_run: str = "notebook"  # which activation-quantized variants also run integer-only: none, notebook, all

    def __post_init__(self) -> None:
        if not isinstance(self.notebook, QuantSpec):
            raise ValueError("notebook must be a QuantSpec")
        if not self.notebook.quantizes_activations:
            raise ValueError("notebook.activation_bits must be set: the notebook's W8A8 variants quantize activations")
        object.__setattr__(self, "sweep", tuple(self.sweep))
        if not all(isinstance(s, QuantSpec) for s in self.sweep):
            raise ValueError("sweep must hold QuantSpecs")
        for name in ("histogram_bins", "eval_batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        check_choice("integer_run", self.integer_run, INTEGER_RUNS)

    @property
    def most_calibration_images(self) -> int:
        """The images to profile: a weights-only spec calibrates nothing, whatever it carries."""
        return max(s.calibration_images for s in (self.notebook, *self.sweep) if s.quantizes_activations)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["sweep"] = [s.to_dict() for s in self.sweep]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PTQConfig:
        data = dict(data)
        data["notebook"] = QuantSpec.from_dict(data.get("notebook", {}))
        data["sweep"] = tuple(QuantSpec.from_dict(s) for s in data.get("sweep", ()))
        return cls(**data)
