"""jobs.train.cell: the Cell's id, its validation and its derived numbers."""
from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys

import pytest

from jobs.train.cell import Cell
from jobs.core.cell import SEED_LIMIT, CellError
from tests.helpers import assert_plan_refuses

# Fixed by hand once: a change in how the id is hashed would make every earlier result
# look missing (and rerun), so it must be a deliberate change of this line.
DDP_2G_B128_ID = "fa7699ec3476"
HW5_IDS_DIGEST = "718ccc52743e"  # every hw5 cell id, sorted and joined, hashed before test_images


def ddp2() -> Cell:
    return Cell(engine="ddp", batch_per_gpu=128, gpus_per_node=2)


def test_cell_id_is_the_recorded_hash():
    assert ddp2().cell_id == DDP_2G_B128_ID


def test_cell_id_is_the_same_in_another_process_with_another_hash_seed():
    code = "from jobs.train.cell import Cell; print(Cell(engine='ddp', batch_per_gpu=128, gpus_per_node=2).cell_id)"
    env = dict(os.environ, PYTHONHASHSEED="12345")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == DDP_2G_B128_ID


def test_cell_id_does_not_depend_on_field_order():
    fields = ddp2().to_dict()
    reversed_fields = dict(reversed(list(fields.items())))
    assert list(reversed_fields) != list(fields)
    assert Cell.from_dict(reversed_fields).cell_id == DDP_2G_B128_ID
    assert Cell(gpus_per_node=2, batch_per_gpu=128, engine="ddp").cell_id == DDP_2G_B128_ID


def test_cell_id_survives_a_json_round_trip():
    assert Cell.from_dict(json.loads(json.dumps(ddp2().to_dict()))).cell_id == DDP_2G_B128_ID


@pytest.mark.parametrize("change", [
    {"batch_per_gpu": 256}, {"gpus_per_node": 4}, {"engine": "dp"}, {"nodes": 2}, {"epochs": 3},
    {"seed": 1}, {"repeat": 1}, {"lr": 0.2}, {"sync_bn": True}, {"pipeline": "fast"}, {"train_images": 1000},
])
def test_any_changed_field_changes_the_id(change):
    cell = Cell(**{**ddp2().to_dict(), **change})
    assert cell.cell_id != DDP_2G_B128_ID
    assert len(cell.cell_id) == 12


# Ids of cells of the shipped studies, computed before test_images (a field added later)
# existed: their results must still be found.
EARLIER_IDS = [
    ("f3a0224ebd85", dict(engine="single", batch_per_gpu=32)),  # hw5, Q1
    ("c620bf902efa", dict(engine="ddp", batch_per_gpu=32, nodes=2, gpus_per_node=2)),  # hw5, 2 nodes
    ("5324ea797557", dict(engine="ddp", batch_per_gpu=2048, gpus_per_node=4, epochs=5, timed_epoch=5,
                          lr_scaling="linear", warmup_epochs=2)),  # hw5, Q4
    ("aad582b1cb9b", dict(engine="single", batch_per_gpu=32, dataset="synthetic", train_images=128)),  # old quick
    ("03bf598a15c4", dict(engine="ddp", batch_per_gpu=16, nodes=2, model="tiny", dataset="synthetic",
                          train_images=64, loader_workers=1)),  # tests/studies/tiny.toml
]


@pytest.mark.parametrize("cell_id, fields", EARLIER_IDS)
def test_a_field_added_later_leaves_earlier_ids_alone(cell_id, fields):
    cell = Cell(**fields)
    assert cell.test_images == 10_000
    assert cell.cell_id == cell_id
    written_before = {k: v for k, v in cell.to_dict().items() if k != "test_images"}  # an old result's cell
    assert Cell.from_dict(written_before).cell_id == cell_id


def test_every_hw5_cell_keeps_its_id():
    from orchestrator.plan.study import load_study

    ids = sorted(c.cell_id for c in load_study("hw5").cells if c.broadcast_buffers)  # all but Q7's, added later
    digest = hashlib.sha256(",".join(ids).encode()).hexdigest()[:12]
    assert (len(ids), digest) == (84, HW5_IDS_DIGEST)


def test_a_field_added_later_changes_the_id_once_it_is_set():
    ids = {Cell(engine="single", batch_per_gpu=32, test_images=n).cell_id for n in (0, 100, 10_000)}
    assert len(ids) == 3
    assert "test_images" in Cell(engine="single", batch_per_gpu=32).to_dict(), "the result still records it"


def test_equal_cells_have_equal_ids():
    a, b = Cell(engine="single", batch_per_gpu=32, lr=1), Cell(engine="single", batch_per_gpu=32, lr=1.0)
    assert a == b
    assert a.cell_id == b.cell_id


@pytest.mark.parametrize("field, value, type_name", [
    ("batch_per_gpu", "32", "int"),
    ("batch_per_gpu", True, "int"),  # bool is an int in Python, but `batch_per_gpu = true` is a mistake
    ("epochs", 2.0, "int"),
    ("engine", 1, "str"),
    ("sync_bn", 1, "bool"),
    ("lr", "0.1", "float"),
])
def test_a_value_of_the_wrong_type_names_the_field(field, value, type_name):
    fields = {"engine": "single", "batch_per_gpu": 32, field: value}
    with pytest.raises(CellError, match=rf"^{field} must be of type {type_name}"):
        Cell(**fields)


def test_an_int_is_accepted_for_a_float_field():
    assert Cell(engine="single", batch_per_gpu=32, lr=1).lr == 1


@pytest.mark.parametrize("fields, named", [
    ({"batch_per_gpu": 0}, "batch_per_gpu must be > 0"),
    ({"batch_per_gpu": -4}, "batch_per_gpu must be > 0"),
    ({"epochs": 0, "timed_epoch": 1}, "epochs must be > 0"),
    ({"loader_workers": -1}, "loader_workers must be >= 0"),
    ({"warmup_epochs": -1}, "warmup_epochs must be >= 0"),
    ({"timed_epoch": 3}, r"timed_epoch must be within 1..epochs \(2\)"),
    ({"timed_epoch": 0}, "timed_epoch must be within"),
    ({"engine": "horovod"}, "engine must be one of"),
    ({"model": "resnet50"}, "model must be one of"),
    ({"precision": "fp16"}, "precision must be one of"),
    ({"lr_scaling": "cubic"}, "lr_scaling must be one of"),
    ({"train_images": 50_001}, "train_images must be <= 50000"),
    ({"test_images": 10_001}, "test_images must be <= 10000 for cifar10"),
    ({"test_images": -1}, "test_images must be >= 0"),
    ({"lr": -0.1}, "lr must be >= 0"),
    ({"momentum": -0.9}, "momentum must be >= 0"),
    ({"weight_decay": -1e-4}, "weight_decay must be >= 0"),
    ({"lr": float("nan")}, "lr must be a finite number"),
    ({"weight_decay": float("inf")}, "weight_decay must be a finite number"),
    ({"seed": 2**64}, r"seed must be < 2\*\*32"),
    ({"seed": 2**32}, r"seed must be < 2\*\*32"),
])
def test_a_bad_value_names_the_field(fields, named):
    with pytest.raises(CellError, match=named):
        Cell(**{"engine": "single", "batch_per_gpu": 32, **fields})


SYNTHETIC = dict(engine="single", batch_per_gpu=32, dataset="synthetic")


@pytest.mark.parametrize("fields, named", [
    ({"train_images": 10**8}, r"train_images must be <= 50000 for synthetic \(it stands in for CIFAR-10\), got 100000000"),
    ({"train_images": 50_001}, "train_images must be <= 50000 for synthetic"),
    ({"test_images": 1_000_000}, "test_images must be <= 10000 for synthetic"),
    ({"test_images": 500}, r"test_images = 500: the synthetic set has 100 test images; use 1..100, "
                           r"or 10000 \(the whole test set\)"),
    ({"test_images": 101}, "the synthetic set has 100 test images"),
    ({"test_images": 9_999}, "the synthetic set has 100 test images"),
])
def test_a_synthetic_training_cell_is_held_to_what_its_set_holds(fields, named):
    """The synthetic set stands in for CIFAR-10 (50,000 training images at most, never gigabytes
    written without a word) and a training cell's synthetic test set has 100 images: asking for
    500 would evaluate 100 and report them as the run's test accuracy."""
    with pytest.raises(CellError, match=named):
        Cell(**{**SYNTHETIC, **fields})


@pytest.mark.parametrize("test_images", [0, 1, 100, 10_000])
def test_a_synthetic_training_cell_may_evaluate_none_some_all_or_the_whole_test_set(test_images):
    assert Cell(**SYNTHETIC, train_images=50_000, test_images=test_images).test_images == test_images


@pytest.mark.parametrize("fields, data", [
    (dict(SYNTHETIC, train_images=512), "synthetic 512 / test 100"),  # 10000: the whole set, which holds 100
    (dict(SYNTHETIC, train_images=512, test_images=40), "synthetic 512 / test 40"),
    (dict(SYNTHETIC, train_images=512, test_images=0), "synthetic 512 / no test"),
    (dict(engine="single", batch_per_gpu=32), "cifar10 50000 / test 10000"),
    (dict(engine="single", batch_per_gpu=32, test_images=2_000), "cifar10 50000 / test 2000"),
])
def test_plan_shows_how_many_test_images_a_cell_evaluates(fields, data):
    assert Cell(**fields).plan_columns()["data"] == data


def test_engine_single_refuses_two_gpus():
    with pytest.raises(CellError, match="engine 'single' uses 1 GPU, got gpus_per_node = 2"):
        Cell(engine="single", batch_per_gpu=32, gpus_per_node=2)


@pytest.mark.parametrize("engine", ["single", "dp"])
def test_one_process_engines_refuse_two_nodes(engine):
    with pytest.raises(CellError, match=f"engine '{engine}' runs in one process on one node"):
        Cell(engine=engine, batch_per_gpu=32, nodes=2)


def test_fast_pipeline_refuses_dataparallel():
    with pytest.raises(CellError, match="pipeline 'fast' runs engines single and ddp, not dp"):
        Cell(engine="dp", batch_per_gpu=32, gpus_per_node=2, pipeline="fast")


def test_ddp_may_span_nodes():
    assert Cell(engine="ddp", batch_per_gpu=32, nodes=2, gpus_per_node=2).gpus == 4


@pytest.mark.parametrize("engine, nodes, gpn, tasks, gpus, global_batch", [
    ("single", 1, 1, 1, 1, 512),
    ("dp", 1, 4, 1, 4, 2048),  # one process drives all 4 GPUs
    ("ddp", 1, 4, 4, 4, 2048),  # one process per GPU
    ("ddp", 2, 2, 2, 4, 2048),  # 2 per node, 4 in all
])
def test_tasks_per_node_and_global_batch(engine, nodes, gpn, tasks, gpus, global_batch):
    cell = Cell(engine=engine, batch_per_gpu=512, nodes=nodes, gpus_per_node=gpn)
    assert (cell.tasks_per_node, cell.gpus, cell.global_batch) == (tasks, gpus, global_batch)


def test_label_shows_shape_and_remedies():
    cell = Cell(engine="ddp", batch_per_gpu=2048, nodes=2, gpus_per_node=2, epochs=5, timed_epoch=5,
                lr_scaling="linear", warmup_epochs=2, sync_bn=True)
    assert cell.label == "ddp-2x2-b2048-e5-lin-wu2-sbn"
    assert Cell(engine="dp", batch_per_gpu=32, gpus_per_node=4).label == "dp-4g-b32-e2"


def test_from_dict_with_an_unknown_field_names_it_and_lists_the_valid_ones():
    with pytest.raises(CellError, match=r"unknown cell field\(s\) \['batch'\]; valid fields: .*'batch_per_gpu'"):
        Cell.from_dict({"engine": "single", "batch": 32})


def test_cell_is_frozen():
    with pytest.raises(AttributeError):
        ddp2().batch_per_gpu = 64  # type: ignore[misc]


def test_the_largest_seed_trains_its_last_epoch_and_the_same_way_twice(tmp_path):
    """The largest seed a cell takes seeds every generator its run uses (the synthetic set, the
    weights, and the fast pipeline's per-epoch shuffle, whose seed grows far above it): the last
    epoch trains every image, and a second run from the seed trains it alike. (Repeat 0 runs with
    the cell's seed itself; other repeats' seeds are drawn below SEED_LIMIT too.)"""
    import torch

    from jobs.runtime.launch import Placement
    from jobs.train.fast import FastTrainer

    cell = Cell(engine="single", batch_per_gpu=16, model="tiny", dataset="synthetic", train_images=48, loader_workers=0,
                pipeline="fast", seed=SEED_LIMIT - 1, epochs=5, timed_epoch=5)
    place = Placement(rank=0, world_size=1, local_rank=0, master_addr="127.0.0.1", master_port=0, launcher="none")
    runs = [FastTrainer(cell, place, torch.device("cpu"), tmp_path).train_epoch(cell.epochs) for _ in range(2)]
    assert [(r.epoch, r.images) for r in runs] == [(5, 48)] * 2
    assert math.isfinite(runs[0].loss) and runs[0].loss == runs[1].loss and runs[0].accuracy == runs[1].accuracy


@pytest.mark.parametrize("cell_id, fields", EARLIER_IDS)
def test_broadcast_buffers_at_its_default_leaves_ids_alone_and_off_gives_a_new_one(cell_id, fields):
    assert Cell(**fields, broadcast_buffers=True).cell_id == cell_id
    if fields["engine"] == "ddp":
        assert Cell(**fields, broadcast_buffers=False).cell_id != cell_id


def test_gradients_only_shows_in_the_label_and_the_plan():
    cell = Cell(engine="ddp", batch_per_gpu=2048, gpus_per_node=4, epochs=5, timed_epoch=5, broadcast_buffers=False)
    assert cell.label == "ddp-4g-b2048-e5-gradonly"
    assert cell.plan_columns()["remedies"] == "gradients only"


@pytest.mark.parametrize("engine, gpus", [("single", 1), ("dp", 2)])
def test_a_plan_refuses_broadcast_buffers_off_for_an_engine_without_ddp(in_tmp, capsys, engine, gpus):
    study = (f'name = "bad"\n[[grid]]\nengine = "{engine}"\ngpus_per_node = {gpus}\nbatch_per_gpu = 32\n'
             "broadcast_buffers = false\n")
    assert_plan_refuses(in_tmp, capsys, study, f"broadcast_buffers = false is a DDP setting; engine '{engine}'")


@pytest.mark.parametrize("cell_id, fields", EARLIER_IDS)
def test_colour_jitter_at_0_leaves_ids_alone_and_set_gives_a_new_one(cell_id, fields):
    assert Cell(**fields, colour_jitter=0).cell_id == cell_id
    if fields.get("dataset") == "synthetic":
        assert len({Cell(**fields, colour_jitter=j).cell_id for j in (0, 30, 30.5)}) == 3


def test_plan_shows_the_synthetic_sets_colour_jitter():
    cell = Cell(**SYNTHETIC, train_images=128, colour_jitter=30)
    assert cell.plan_columns()["data"] == "synthetic 128 (jitter 30) / test 100"


@pytest.mark.parametrize("line, expected", [
    ('dataset = "cifar10"\ncolour_jitter = 30', 'colour_jitter = 30 applies to dataset = "synthetic" only'),
    ('dataset = "synthetic"\ncolour_jitter = -5', "colour_jitter must be >= 0, got -5"),
    ('dataset = "synthetic"\ncolour_jitter = nan', "colour_jitter must be a finite number"),
    ('dataset = "synthetic"\ncolour_jitter = "high"', "colour_jitter must be of type float"),
])
def test_a_plan_refuses_a_colour_jitter_no_set_can_take(in_tmp, capsys, line, expected):
    study = f'name = "bad"\n[[grid]]\nengine = "single"\nbatch_per_gpu = 32\n{line}\n'
    assert_plan_refuses(in_tmp, capsys, study, expected)
