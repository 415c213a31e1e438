"""The ptq kind in study files: its lists are swept inside a cell, its mistakes named at plan time."""
from __future__ import annotations

import pytest

from jobs.train.cell import Cell
from jobs.core.cell import run_seed
from jobs.core.kinds import cell_from_dict
from jobs.ptq.cell import PTQCell
from orchestrator.errors import StudyError
from orchestrator.plan.plan import Plan, build_plan
from orchestrator.plan.study import load_study, parse_study
from tests.helpers import PTQ_TINY


def ptq_study(**grid):
    return parse_study({"kind": "ptq", "grid": [grid]})


def test_the_shipped_ptq_study_is_three_seeds_of_the_notebook_and_the_whole_sweep():
    s = load_study("ptq")
    assert [c.kind for c in s.cells] == ["ptq"] * 3
    assert [c.training_seed for c in s.cells] == [0, run_seed(0, 1), run_seed(0, 2)]
    cell = s.cells[0]
    assert (cell.dataset, cell.train_images, cell.test_images, cell.gpus) == ("cifar10", 50_000, 10_000, 1)
    # bits 8..2 x {tensor, channel} x 4 ranges (weights) + bits 8..2 x 4 ranges x 3 calibrations (activations)
    assert len(cell.config().sweep) == 6 * 2 * 4 + 6 * 4 * 3


def test_lists_of_swept_fields_stay_in_one_cell_and_other_lists_expand():
    s = ptq_study(weight_bits=[8, 4], seed=[0, 1], train_images=1000, calibration_images=[16])
    assert len(s.cells) == 2
    assert all(c.weight_bits == (8, 4) for c in s.cells)
    assert [c.seed for c in s.cells] == [0, 1]


def test_repeats_train_other_seeds():
    s = parse_study({"kind": "ptq", "repeats": 3, "grid": [{"seed": 5}]})
    assert [c.training_seed for c in s.cells] == [5, run_seed(5, 1), run_seed(5, 2)]
    assert len({c.training_id(False) for c in s.cells}) == 3


def test_cells_that_train_the_same_way_share_their_networks():
    a = PTQCell(weight_bits=(8,))
    b = PTQCell(weight_bits=(2,), range_methods=("mse",))
    assert a.cell_id != b.cell_id
    assert a.training_id(False) == b.training_id(False) != a.training_id(True)


@pytest.mark.parametrize("grid, message", [
    ({"weight_bits": [8, 1]}, "weight_bits must be an integer from 2 to 16, got 1"),
    ({"activation_bits": [17]}, "activation_bits must be an integer from 2 to 16, got 17"),
    ({"range_methods": ["max", "minmax"]}, "range_methods must be one of ['max', '3sigma', 'percentile', 'mse'], got 'minmax'"),
    ({"granularities": ["row"]}, "granularities must be one of ['tensor', 'channel']"),
    ({"train_images": 1000, "calibration_images": [16, 4000]}, "calibration_images: 4000 images to calibrate on, "
                                                               "but the cell trains on train_images = 1000"),
    ({"train_images": 300, "calibration_images": [16]}, "notebook_calibration: 400 images"),
    ({"gpus_per_node": 2}, "gpus_per_node must be 0 (the CPU) or 1"),
    ({"batch_per_gpu": 32}, "unknown key(s) ['batch_per_gpu'] in grid[0]"),
])
def test_a_bad_ptq_choice_is_named_at_plan_time(grid, message):
    with pytest.raises(StudyError, match="^grid\\[0\\]|unknown") as info:
        ptq_study(**grid)
    assert message in str(info.value)


def test_an_unknown_kind_lists_the_kinds():
    with pytest.raises(StudyError, match=r"kind must be one of \['train', 'ptq'(, '\w+')*\], got 'qat'"):
        parse_study({"kind": "qat", "grid": [{}]})


def test_a_plan_of_ptq_cells_reads_back_the_same_cells(tmp_path):
    study = load_study(str(PTQ_TINY))
    plan = build_plan(study, tmp_path, tmp_path)
    again = Plan.from_dict(plan.to_dict())
    assert again.cells == plan.cells and again.cell_ids == plan.cell_ids
    assert [a.shape.gpus_per_node for a in plan.arrays] == [0]


def test_training_cells_keep_their_ids_and_json_without_a_kind():
    cell = Cell(engine="single", batch_per_gpu=32)
    assert cell.cell_id == "f3a0224ebd85"  # computed before kinds existed: old results still collect
    assert "kind" not in cell.to_dict()
    assert cell_from_dict(cell.to_dict()) == cell
    assert cell_from_dict(PTQCell().to_dict()) == PTQCell()
