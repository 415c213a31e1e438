"""jobs.ptq.config: choices are checked on construction, naming the field; the default sweep."""
from __future__ import annotations

import pytest

from jobs.ptq.config import PTQConfig, QuantSpec, default_sweep


@pytest.mark.parametrize("field, value, message", [
    ("weight_bits", 1, "weight_bits must be an integer from 2 to 16"),
    ("activation_bits", 32, "activation_bits must be an integer from 2 to 16"),
    ("granularity", "row", r"granularity must be one of \['tensor', 'channel'\], got 'row'"),
    ("weight_method", "kl", r"weight_method must be one of \['max', '3sigma', 'percentile', 'mse'\]"),
    ("activation_method", "minmax", "activation_method must be one of"),
    ("calibration_images", 0, "calibration_images must be a positive integer"),
    ("percentile", 100.5, "percentile must be a number in"),
    ("bias", "int8", r"bias must be one of \['int32', 'float'\]"),
])
def test_a_bad_choice_names_its_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        QuantSpec(**{field: value})


def test_the_notebook_spec_must_quantize_activations():
    with pytest.raises(ValueError, match="notebook.activation_bits must be set"):
        PTQConfig(notebook=QuantSpec(activation_bits=None))
    with pytest.raises(ValueError, match=r"integer_run must be one of \['none', 'notebook', 'all'\]"):
        PTQConfig(integer_run="some")


def test_the_default_sweep_covers_each_axis_with_distinct_labels():
    sweep = default_sweep()
    assert len(sweep) == 48 + 72
    assert len({s.label() for s in sweep}) == len(sweep)
    weights_only = [s for s in sweep if not s.quantizes_activations]
    assert {s.weight_bits for s in weights_only} == {8, 6, 5, 4, 3, 2}
    assert {(s.granularity, s.weight_method) for s in weights_only} == {
        (g, m) for g in ("tensor", "channel") for m in ("max", "3sigma", "percentile", "mse")}
    activations = [s for s in sweep if s.quantizes_activations]
    assert {s.weight_bits for s in activations} == {8}
    assert {s.calibration_images for s in activations} == {16, 400, 4000}
    assert PTQConfig(sweep=sweep).most_calibration_images == 4000


def test_config_round_trips_through_a_dict():
    config = PTQConfig(sweep=default_sweep()[:3], integer_run="all", histogram_bins=32)
    assert PTQConfig.from_dict(config.to_dict()) == config
