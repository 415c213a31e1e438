"""A cell's name: its label, "#k" where several cells of the plan share it (issue 43: two rows
named single-1g-b32-e2, and `logs single-1g-b32-e2` could select neither)."""
from __future__ import annotations

import dataclasses

from jobs.train.cell import Cell
from orchestrator.plan.cell_names import cell_names


def test_labels_shared_by_several_cells_are_numbered_in_plan_order_and_the_others_kept():
    one = Cell(engine="single", batch_per_gpu=32, epochs=2)
    cells = [one, dataclasses.replace(one, repeat=1), dataclasses.replace(one, batch_per_gpu=128),
             dataclasses.replace(one, repeat=2)]
    assert cell_names(cells) == ["single-1g-b32-e2#1", "single-1g-b32-e2#2", "single-1g-b128-e2", "single-1g-b32-e2#3"]
    assert cell_names([]) == []
