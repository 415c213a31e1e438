"""PTQCell: what a study file may ask of a PTQ cell (refused at plan time, naming the field), its
training seed and the id of the networks it trains (shared only by cells that train the same way)."""
from __future__ import annotations

import pytest

from jobs.core.cell import run_seed
from jobs.ptq.cell import SWEPT, PTQCell
from orchestrator.errors import StudyError
from orchestrator.plan.study import load_study, parse_study

SMALL = dict(dataset="synthetic", train_images=64, test_images=32, notebook_calibration=16,
             calibration_images=[16], gpus_per_node=0)


def ptq_study(repeats: int = 1, **grid):
    return parse_study({"kind": "ptq", "repeats": repeats, "grid": [grid]})


def test_the_shipped_ptq_study_keeps_its_cell_ids():
    # the results of `plan --study ptq` written before are found again by these ids
    assert [c.cell_id for c in load_study("ptq").cells] == ["a034e76d1ea5", "53864144d145", "75ac00cb25c2"]


def test_weights_only_variants_calibrate_nothing():
    """A training set of 64 images: the activation sweep and the notebook calibrate on 16, and the
    weights-only variants, which calibrate nothing, must not ask for more."""
    cell = ptq_study(**SMALL).cells[0]
    config = cell.config()
    assert any(not s.quantizes_activations for s in config.sweep)
    assert config.most_calibration_images == 16


@pytest.mark.parametrize("grid, message", [
    (dict(SMALL, calibration_images=[16, 65]), "calibration_images: 65 images"),
    (dict(SMALL, notebook_calibration=100), "notebook_calibration: 100 images"),
])
def test_a_calibration_larger_than_the_training_set_is_refused_with_the_value_written(grid, message):
    with pytest.raises(StudyError, match=message):
        ptq_study(**grid)


def test_the_training_seed_is_run_seed_of_seed_and_repeat():
    cells = ptq_study(repeats=2, seed=[0, 1], **SMALL).cells
    assert [(c.seed, c.repeat, c.training_seed) for c in cells] == [
        (s, r, run_seed(s, r)) for s in (0, 1) for r in (0, 1)]
    assert len({c.training_seed for c in cells}) == 4


def test_cells_of_other_seeds_never_share_a_trained_network():
    """(seed 1, repeat 0) used to load the network of (seed 0, repeat 1): trained on seed 0's data."""
    cells = ptq_study(repeats=2, seed=[0, 1], **SMALL).cells
    for with_bias in (False, True):
        assert len({c.training_id(with_bias) for c in cells}) == 4


@pytest.mark.parametrize("field, value", [
    ("seed", 1), ("repeat", 1), ("dataset", "cifar10"), ("train_images", 128), ("colour_jitter", 5.0),
    ("epochs", 3), ("batch_size", 8), ("lr", 0.002), ("momentum", 0.5),
])
def test_everything_that_shapes_a_network_is_in_its_training_id(field, value):
    base = dict(SMALL, colour_jitter=1.0)
    if field == "dataset":
        base.pop("colour_jitter")
    other = PTQCell(**dict(base, **{field: value}))
    assert other.training_id(False) != PTQCell(**base).training_id(False)


def test_what_does_not_shape_a_network_leaves_its_training_id():
    a = PTQCell(**SMALL)
    b = PTQCell(**dict(SMALL, test_images=16, weight_bits=[4], percentile=99.0, integer_run="all"))
    assert a.training_id(False) == b.training_id(False) != a.training_id(True)


@pytest.mark.parametrize("field", SWEPT)
def test_an_empty_swept_list_is_refused(field):
    with pytest.raises(StudyError, match=rf"grid\[0\]: {field} is an empty list; give at least one"):
        ptq_study(**dict(SMALL, **{field: []}))


@pytest.mark.parametrize("field, value, twice", [
    ("weight_bits", [8, 8], "8"), ("activation_bits", [4, 8, 4], "4"), ("granularities", ["tensor", "tensor"], "'tensor'"),
    ("range_methods", ["max", "mse", "max"], "'max'"), ("calibration_images", [16, 16], "16"),
])
def test_a_swept_value_given_twice_is_refused(field, value, twice):
    with pytest.raises(StudyError, match=rf"grid\[0\]: {field} lists {twice} twice; give each value once"):
        ptq_study(**dict(SMALL, **{field: value}))


@pytest.mark.parametrize("grid, message", [
    (dict(dataset="cifar10", colour_jitter=30.0), "colour_jitter = 30 applies to dataset = \"synthetic\" only"),
    (dict(SMALL, test_images=1_000_000), r"test_images must be <= 10000 for synthetic \(it stands in for CIFAR-10\), got 1000000"),
    (dict(SMALL, train_images=10**8), r"train_images must be <= 50000 for synthetic \(it stands in for CIFAR-10\), got 100000000"),
])
def test_choices_that_cifar10_could_not_have_are_refused(grid, message):
    with pytest.raises(StudyError, match=message):
        ptq_study(**grid)
