"""orchestrator.local.placement: cells side by side on disjoint GPUs of a machine, never two on one."""
from __future__ import annotations

import random

import pytest

from jobs.train.cell import Cell
from orchestrator.local import placement
from orchestrator.local.machine import Machine
from orchestrator.budget.cost import packed_wall_s
from orchestrator.local.placement import WHOLE, CellClass, cores_for, machine_slots, place, slots_needed

FOUR = Machine(gpus=4, cpus=16)
SLOTS = machine_slots(FOUR)


def cell(gpus: int, batch: int = 32) -> Cell:
    return Cell(engine="single" if gpus == 1 else "ddp", gpus_per_node=gpus, batch_per_gpu=batch)


def test_one_gpu_cells_take_free_gpus_pairs_take_aligned_pairs_and_a_whole_machine_cell_waits_for_all():
    assert SLOTS == (0, 1, 2, 3)
    assert place({0, 1, 2, 3}, 1, SLOTS) == (0,)
    assert place({1, 3}, 1, SLOTS) == (1,)
    assert place({1, 2, 3}, 2, SLOTS) == (2, 3), "never 1-2: it would split both pairs"
    assert place({1, 2}, 2, SLOTS) is None
    assert place({0, 1, 2}, 4, SLOTS) is None
    assert place({0, 1, 2, 3}, 4, SLOTS) == (0, 1, 2, 3)
    assert place({0, 2, 3}, 3, SLOTS) == (0, 2, 3), "3 of 4: any three free"


def test_a_random_queue_on_four_gpus_never_puts_two_cells_on_one_gpu():
    rng = random.Random(46)
    busy: dict[int, int] = {}  # GPU -> the cell on it
    for n in range(2000):
        if busy and rng.random() < 0.4:  # a running cell ends
            ended = rng.choice(sorted(set(busy.values())))
            busy = {g: c for g, c in busy.items() if c != ended}
        want = slots_needed(cell(rng.choice([1, 1, 2, 4])), FOUR)
        placed = place(set(SLOTS) - busy.keys(), want, SLOTS)
        if placed is not None:
            assert len(placed) == want and not set(placed) & busy.keys()
            busy.update(dict.fromkeys(placed, n))


def test_a_machine_without_gpus_or_exclusive_or_a_class_run_alone_takes_every_gpu(monkeypatch):
    cpu = Machine(gpus=0, cpus=2)
    assert machine_slots(cpu) == (WHOLE,) and slots_needed(cell(2), cpu) == 1
    assert place(set(), 1, (WHOLE,)) is None and place({WHOLE}, 1, (WHOLE,)) == (WHOLE,)
    assert slots_needed(cell(1), FOUR) == 1 and slots_needed(cell(2), FOUR) == 2
    assert slots_needed(cell(1), FOUR, exclusive=True) == 4
    monkeypatch.setattr(placement, "RUN_ALONE", (CellClass(gpus=1, batch_per_gpu=32),))
    assert slots_needed(cell(1, 32), FOUR) == 4 and slots_needed(cell(1, 512), FOUR) == 1


def test_the_gpus_are_those_cuda_visible_devices_leaves():
    assert machine_slots(Machine(gpus=2, cpus=8, gpu_ids=(2, 3))) == (2, 3)


@pytest.mark.parametrize("placed, expected", [((0,), (0, 1, 2, 3)), ((3,), (12, 13, 14, 15)),
                                              ((2, 3), tuple(range(8, 16))), ((0, 1, 2, 3), tuple(range(16)))])
def test_each_cell_gets_its_gpus_share_of_the_cores(placed, expected):
    assert cores_for(placed, SLOTS, tuple(range(16))) == expected


def test_fewer_cores_than_gpus_share_them():
    assert cores_for((3,), SLOTS, (0, 1)) == (1,)
    assert cores_for((WHOLE,), (WHOLE,), (0, 1)) == (0, 1)


@pytest.mark.parametrize("ahead, want, slots, expected", [(6, 1, 4, 2), (4, 1, 4, 1), (7, 1, 4, 2), (1, 1, 4, 1),
                                                          (4, 1, 1, 4), (3, 2, 4, 2), (100, 1, 4, placement.RUN_MAX)])
def test_a_job_runs_an_even_share_of_the_same_shape_cells_ahead_per_lane_of_the_machine(ahead, want, slots, expected):
    """Per lane the machine has, not per lane free now: three 2-GPU cells on a 4-GPU box with one pair
    free go 2 and 1, so the other pair, free a moment later, takes the third (run 10)."""
    assert placement.run_length(ahead, want, slots) == expected


def test_the_queue_shares_a_shape_over_the_machines_lanes_not_those_free_now(tmp_path):
    """Run 10 on 4 H100s: with one pair free, three 2-GPU cells went into one job (170 s) while the
    other pair came free a moment later. The queue's share counts every lane of the machine."""
    from orchestrator.local.machine import Machine
    from orchestrator.local.queue import Runner
    from orchestrator.plan.plan import build_plan
    from orchestrator.plan.study import load_study

    plan = build_plan(load_study("quick"), tmp_path / "runs", tmp_path)
    runner = Runner.__new__(Runner)  # its shares only: no warm server, no jobs
    runner.plan, runner.machine, runner.slots = plan, Machine(gpus=4, cpus=16), (0, 1, 2, 3)
    pairs = [c.cell_id for c in plan.cells if c.gpus == 2]
    shape = [cid for cid in pairs if plan.array_of(cid).name == plan.array_of(pairs[0]).name]
    assert runner.run_length(shape[:3], at=0, want=2) == 2  # 2 then 1, not all 3 on the pair free now


def in_plan_order(cells: list[tuple[str, int, float]]) -> float:
    """The wall time of the queue as it was before packing_order: `cells` (array, GPUs, seconds) on SLOTS in
    plan order, each alone in its job, only the head started; never two cells on one GPU."""
    waiting, running, now = list(range(len(cells))), [], 0.0  # running: (end, placed)
    while waiting or running:
        free = set(SLOTS) - {s for _, placed in running for s in placed}
        found = placement.first_fit([cells[i][1] for i in waiting[:1]], free, SLOTS)
        if found is not None:
            index, placed = found
            assert not set(placed) - free
            running.append((now + cells[waiting.pop(index)][2], placed))
            continue
        now = min(end for end, _ in running)
        running = [(end, placed) for end, placed in running if end > now]
    return now


def test_cells_that_fit_beside_others_go_first_widest_first_and_fill_free_gpus():
    """Run 11 on 4 H200s (hw5, one repeat, plan order): a 1-GPU cell ran alone among the 4-GPU cells
    and a pair idled while the other ran 2-GPU cells. Its cells' times (s), in plan order:"""
    hw5 = ([("g1", 1, t) for t in (53, 19, 31, 33, 33, 9)] + [("g2dp", 2, t) for t in (88, 22, 16)]
           + [("g4dp", 4, t) for t in (60, 19, 18)] + [("g2ddp", 2, t) for t in (34, 16, 20)]
           + [("g4ddp", 4, t) for t in (26, 11, 11)] + [("g2x2", 4, t) for t in (25, 9, 9)]
           + [("g1", 1, 49)] + [("g4ddp", 4, 30)] * 6)
    order = placement.packing_order([(array, gpus) for array, gpus, _ in hw5], len(SLOTS))
    assert [hw5[i][1] for i in order] == sorted((g for _, g, _ in hw5), key=lambda g: (g == 4, -g))
    assert [hw5[i][0] for i in order][:6] == ["g2dp"] * 3 + ["g2ddp"] * 3, "arrays kept together, in plan order"
    assert [i for i in order if hw5[i][0] == "g1"] == [0, 1, 2, 3, 4, 5, 21], "plan order within an array"
    before, after = in_plan_order(hw5), packed_wall_s([(t, g, array) for array, g, t in hw5], len(SLOTS))
    assert (before, after) == (581, 558), "the 1- and 2-GPU cells in 190 s, not 213: none runs alone"
