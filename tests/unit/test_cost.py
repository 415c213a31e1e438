"""The study's cost before its first job (orchestrator.budget.cost), worked by hand."""
from __future__ import annotations

import dataclasses

import pytest

from jobs.train.cell import Cell
from orchestrator.budget import estimate
from orchestrator.budget.cost import packed_wall_s, shares, study_cost, wall_s
from orchestrator.budget.estimate import Estimate
from orchestrator.plan.cluster import ClusterSpec
from orchestrator.plan.plan import build_plan
from orchestrator.plan.study import Study
from tests.helpers import cli


def test_an_arrays_tasks_start_in_order_as_slots_free():
    assert wall_s([3, 1, 1, 1], 2) == 3  # slot A: 3; slot B: 1, 1, 1
    assert wall_s([1, 1, 1, 3], 2) == 4  # A: 1, then 1 (free at 2); B: 1, then 3 from 1 (ends at 4)
    assert wall_s([2, 2, 2], 0) == 2 and wall_s([2, 2, 2], 1) == 6 and wall_s([], 8) == 0


def test_the_parts_add_up_to_the_total_shown():
    """0.444 + 0.444 + 0.112 = 1.000: rounded alone 0.44 + 0.44 + 0.11 = 0.99; the largest remainder
    (0.112's 0.2 is smaller than 0.444's 0.4) rounds one 0.444 up."""
    assert shares([0.444, 0.444, 0.112], 2) == (["0.45", "0.44", "0.11"], "1.00")
    assert shares([0.25, 0.25], 1) == (["0.3", "0.2"], "0.5")  # 0.2 + 0.2 would show 0.4
    parts, total = shares([0.123, 4.456, 0.3333, 2.0], 2)
    assert sum(round(float(p) * 100) for p in parts) == round(float(total) * 100)


def test_a_studys_cost_on_slurm_and_here(tmp_path):
    """Two 1-GPU cells (0.1 GPU-h each: 360 s) and one 2-GPU cell (0.2 GPU-h: 360 s on 2 GPUs), arrays
    throttled to 1 task at once: the 1-GPU array takes 720 s, the 2-GPU one 360 s; side by side 720 s.
    Here, one cell at a time: 360 x 3 = 1080 s. 0.4 GPU-h either way."""
    one = Cell(engine="single", model="tiny", batch_per_gpu=32)
    cells = (one, dataclasses.replace(one, repeat=1), Cell(engine="ddp", model="tiny", batch_per_gpu=32, gpus_per_node=2))
    plan = build_plan(Study("s", "", "data", ClusterSpec(array_parallelism=1), cells, ""), tmp_path, tmp_path)
    hours = {c.cell_id: Estimate(0.1 * c.gpus, estimate.TABLE) for c in cells}
    there = study_cost(plan, hours, on_slurm=True)
    assert [(a.cells, a.wall_s) for a in there.arrays] == [(2, pytest.approx(720)), (1, pytest.approx(360))]
    assert there.wall_s == pytest.approx(720) and there.gpu_hours == pytest.approx(0.4) and there.parallel == 1
    here = study_cost(plan, hours, on_slurm=False)
    assert here.wall_s == pytest.approx(1080) and here.gpu_hours == pytest.approx(0.4)
    packed = study_cost(plan, hours, on_slurm=False, gpus_here=2)  # the 1-GPU cells side by side, then the pair
    assert packed.wall_s == pytest.approx(720) and packed.parallel == 2


@pytest.mark.parametrize("cells, gpus, expected", [
    ([(10, 1), (10, 1), (4, 2)], 2, 14), ([(10, 1), (10, 1), (4, 2)], 0, 24), ([(10, 4), (1, 1), (1, 1)], 4, 11),
    ([(10, 1), (3, 1), (3, 1), (3, 1)], 2, 10), ([(5, 8)], 4, 5), ([(10, 1), (2, 4), (1, 1)], 4, 12),
    ([(1, 1), (6, 2), (6, 2), (6, 2), (3, 1)], 4, 12)])
def test_the_local_queue_packs_cells_on_free_gpus_as_it_orders_them(cells, gpus, expected):
    """Worked by hand: the cells that fit beside others first, widest first, then the 1-GPU cells where a
    pair does not fit; a whole-machine cell last, waiting for every GPU (the last case: two pairs at once,
    then the third beside the two 1-GPU cells: 12)."""
    assert packed_wall_s([(s, g, f"g{g}") for s, g in cells], gpus) == pytest.approx(expected)


def test_plan_prints_the_total_its_arrays_add_up_to_and_the_wall_time(in_tmp, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = cli(capsys, "plan", "--study", "hw5", "--profile", "greene", "--executor", "slurm")
    assert code == 0
    rows = [line.split("│") for line in out.splitlines() if line.startswith("│ n") or line.startswith("│ total")]
    *arrays, total = [float(r[-2]) for r in rows]
    assert rows[-1][1].strip() == "total" and round(sum(arrays), 2) == total
    said = next(line for line in out.splitlines() if line.startswith("cost: "))
    assert said.startswith(f"cost: 87 cells, {total:.2f} GPU-h; about ") and "at most 8 tasks of each array" in out
    assert "cell(s) from the paces the repo measured on NVIDIA H100 80GB HBM3" in " ".join(out.split())
