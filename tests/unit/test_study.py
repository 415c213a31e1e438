"""orchestrator.plan.study: study files -> validated Study -> cells; the shipped studies and bad inputs."""
from __future__ import annotations

import pytest

from jobs.train.cell import Cell
from jobs.train.schedule import target_lr
from orchestrator.errors import StudyError
from orchestrator.plan.study import available_studies, load_study, parse_study
from tests.helpers import write_study

GRID = {"engine": "single", "batch_per_gpu": 32}


def study(**top):
    return parse_study({"grid": [GRID], **top})


def labels(s) -> list[str]:
    return [c.label for c in s.cells]


# --- the shipped studies --------------------------------------------------------------

def test_shipped_studies_are_listed():
    assert {"quick", "hw5", "lab", "ptq"} <= set(available_studies())


def test_lab_study_is_1_gpu_then_ddp_on_2_4_gpus_and_2_nodes_with_the_lr_times_the_workers():
    s = load_study("lab")
    shapes = [(c.engine, c.nodes, c.gpus_per_node) for c in s.cells]
    assert list(dict.fromkeys(shapes)) == [("single", 1, 1), ("ddp", 1, 2), ("ddp", 1, 4), ("ddp", 2, 2)]
    times_workers = [c for c in s.cells if c.lr_scaling == "linear" and c.warmup_epochs == 0]
    assert len(times_workers) == 4 * 3
    assert {(c.gpus, target_lr(c)) for c in times_workers} == {(1, 0.1), (2, 0.2), (4, 0.4)}
    assert all(c.dataset == "cifar10" and c.test_images == 10_000 and c.epochs == 5 for c in s.cells)


def test_lab_study_sweeps_the_lr_rule_and_warmup_on_2_nodes_for_its_best_accuracy():
    """On 2 nodes x 2 GPUs (global batch 512, 4 x the reference 128): lr 0.1 as is, x 4 or x sqrt(4),
    each with 0, 1 or 2 warmup epochs (none without: a warmup from lr to lr changes nothing); 3 repeats."""
    two_nodes = [c for c in load_study("lab").cells if c.nodes == 2]
    assert len(two_nodes) == 7 * 3
    assert {(c.lr_scaling, c.warmup_epochs, target_lr(c)) for c in two_nodes} == {
        ("none", 0, 0.1), ("linear", 0, 0.4), ("linear", 1, 0.4), ("linear", 2, 0.4),
        ("sqrt", 0, 0.2), ("sqrt", 1, 0.2), ("sqrt", 2, 0.2)}


def test_quick_study_runs_six_configurations_twice_on_one_and_two_gpus():
    s = load_study("quick")
    assert s.name == "quick"
    assert list(dict.fromkeys(labels(s))) == ["single-1g-b16-e2", "single-1g-b64-e2", "dp-2g-b16-e2", "dp-2g-b64-e2",
                                              "ddp-2g-b16-e2", "ddp-2g-b64-e2"]
    assert sorted(c.repeat for c in s.cells) == [0] * 6 + [1] * 6
    assert {(c.dataset, c.train_images) for c in s.cells} == {("synthetic", 64)}
    assert "[[grid]]" in s.source


def test_hw5_study_covers_the_homework():
    s = load_study("hw5")
    cells = s.cells
    assert len({c.cell_id for c in cells}) == len(cells)
    assert {c.repeat for c in cells} == {0, 1, 2}, "every configuration three times"
    cells = [c for c in cells if c.repeat == 0]
    q1 = sorted(c.batch_per_gpu for c in cells if c.engine == "single" and c.epochs == 2)
    assert q1 == [32, 128, 512, 2048, 8192, 32768]
    for engine in ("dp", "ddp"):
        for gpus in (2, 4):
            batches = {c.batch_per_gpu for c in cells
                       if (c.engine, c.nodes, c.gpus_per_node, c.epochs) == (engine, 1, gpus, 2)}
            assert {32, 128, 512} <= batches, (engine, gpus)
    two_nodes = sorted(c.batch_per_gpu for c in cells if c.nodes == 2)
    assert two_nodes == [32, 128, 512]
    assert all(c.engine == "ddp" and c.gpus_per_node == 2 for c in cells if c.nodes == 2)
    five = [c for c in cells if c.epochs == 5]
    assert five and all(c.timed_epoch == 5 for c in five)
    assert any(c.engine == "single" and c.batch_per_gpu == 128 for c in five)  # the Q4 baseline
    assert {(c.lr_scaling, c.warmup_epochs) for c in five if c.engine == "ddp"} == {("none", 0), ("linear", 0), ("linear", 2)}
    assert all(c.dataset == "cifar10" for c in cells)
    assert s.cluster.gpus_per_node == 4


def test_unknown_study_name_lists_the_shipped_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StudyError, match=r"unknown study 'hw6'; shipped studies: .*hw5.*quick"):
        load_study("hw6")


def test_a_missing_toml_path_is_named(tmp_path):
    with pytest.raises(StudyError, match="does not exist"):
        load_study(str(tmp_path / "nope.toml"))


def test_a_study_file_by_path_takes_its_name_from_the_file(tmp_path):
    path = write_study(tmp_path, '[[grid]]\nengine = "single"\nbatch_per_gpu = [16, 64]\n', "mine")
    s = load_study(str(path))
    assert s.name == "mine" and labels(s) == ["single-1g-b16-e2", "single-1g-b64-e2"]


def test_invalid_toml_names_the_file(tmp_path):
    path = write_study(tmp_path, "[[grid]\n", "broken")
    with pytest.raises(StudyError, match=r"broken.toml: not valid TOML"):
        load_study(str(path))


def test_an_error_in_a_file_is_prefixed_with_its_path(tmp_path):
    path = write_study(tmp_path, '[[grid]]\nengine = "single"\nbatch_per_gpu = 0\n', "bad")
    with pytest.raises(StudyError, match=r"bad.toml: grid\[0\]: batch_per_gpu must be > 0"):
        load_study(str(path))


# --- bad inputs ---------------------------------------------------------------------------

@pytest.mark.parametrize("data, message", [
    ({"grids": [GRID], "grid": [GRID]}, r"unknown key\(s\) \['grids'\] in the top level"),
    ({"cluster": {"gpus": 4}, "grid": [GRID]}, r"unknown key\(s\) \['gpus'\] in \[cluster\]; valid keys: .*gpus_per_node"),
    ({"defaults": {"batch": 32}, "grid": [GRID]}, r"unknown key\(s\) \['batch'\] in \[defaults\]; valid keys: .*batch_per_gpu"),
    ({"grid": [GRID, {**GRID, "gpu": 2}]}, r"unknown key\(s\) \['gpu'\] in grid\[1\]"),
])
def test_an_unknown_key_is_named_where_it_is(data, message):
    with pytest.raises(StudyError, match=message):
        parse_study(data)


@pytest.mark.parametrize("data, message", [
    ({"grid": [{**GRID, "batch_per_gpu": "32"}]}, r"grid\[0\]: batch_per_gpu must be of type int"),
    ({"grid": [{**GRID, "batch_per_gpu": [32, True]}]}, r"grid\[0\]: batch_per_gpu must be of type int"),
    ({"cluster": {"gpus_per_node": "4"}, "grid": [GRID]}, r"\[cluster\] gpus_per_node must be of type int"),
    ({"cluster": {"time_min": 1.5}, "grid": [GRID]}, r"\[cluster\] time_min must be of type int"),
    ({"cluster": [1], "grid": [GRID]}, "cluster must be a table"),
    ({"name": "my study", "grid": [GRID]}, "name must be letters, digits"),
])
def test_a_value_of_the_wrong_type_is_named(data, message):
    with pytest.raises(StudyError, match=message):
        parse_study(data)


@pytest.mark.parametrize("batch", [0, -32])
def test_batch_per_gpu_must_be_positive(batch):
    with pytest.raises(StudyError, match=rf"grid\[0\]: batch_per_gpu must be > 0, got {batch}"):
        parse_study({"grid": [{**GRID, "batch_per_gpu": [32, batch]}]})


def test_unknown_engine_lists_the_engines():
    with pytest.raises(StudyError, match=r"engine must be one of \['single', 'dp', 'ddp'\], got 'horovod'"):
        parse_study({"grid": [{"engine": "horovod", "batch_per_gpu": 32}]})


def test_gpus_per_node_above_the_node_is_refused():
    data = {"cluster": {"gpus_per_node": 4}, "grid": [{"engine": "ddp", "gpus_per_node": 8, "batch_per_gpu": 32}]}
    with pytest.raises(StudyError, match=r"grid\[0\]: gpus_per_node = 8, but a node has 4"):
        parse_study(data)


def test_gpus_per_node_equal_to_the_node_is_fine():
    data = {"cluster": {"gpus_per_node": 2}, "grid": [{"engine": "ddp", "gpus_per_node": 2, "batch_per_gpu": 32}]}
    assert parse_study(data).cells[0].gpus == 2


def test_a_missing_required_field_is_named():
    with pytest.raises(StudyError, match=r"grid\[0\]: .*batch_per_gpu"):
        parse_study({"grid": [{"engine": "single"}]})


def test_a_study_needs_a_grid():
    with pytest.raises(StudyError, match=r"at least one \[\[grid\]\]"):
        parse_study({"name": "empty"})


def test_an_empty_list_in_a_grid_is_named():
    with pytest.raises(StudyError, match=r"grid\[0\].batch_per_gpu is an empty list"):
        parse_study({"grid": [{"engine": "single", "batch_per_gpu": []}]})


@pytest.mark.parametrize("key", ["partition", "account", "qos", "constraint"])
@pytest.mark.parametrize("value", ['"; rm -rf ~"', "gpu; reboot", "$(reboot)", "a b", "gpu`id`"])
def test_shell_syntax_in_a_cluster_value_is_refused(key, value):
    with pytest.raises(StudyError, match=rf"\[cluster\] {key} = .* holds characters SLURM names never use"):
        parse_study({"cluster": {key: value}, "grid": [GRID]})


def test_a_trailing_newline_in_a_cluster_value_is_refused():
    with pytest.raises(StudyError):
        parse_study({"cluster": {"partition": "gpu\n"}, "grid": [GRID]})


def test_plain_slurm_names_are_accepted():
    s = study(cluster={"partition": "gpu-a100", "account": "proj_123", "constraint": "a100", "qos": "high"})
    assert (s.cluster.partition, s.cluster.account, s.cluster.qos) == ("gpu-a100", "proj_123", "high")


@pytest.mark.parametrize("cluster, message", [
    ({"gpu_request": "gpus"}, r"gpu_request must be one of \['gpus-per-node', 'gres'\]"),
    ({"time_min": 0}, "time_min must be > 0"),
    ({"gpus_per_node": 0}, "gpus_per_node must be > 0"),
    ({"array_parallelism": -1}, "array_parallelism must be >= 0"),
    ({"images_per_s_per_gpu": 0}, "images_per_s_per_gpu must be > 0"),
    ({"images_per_s_per_gpu": -5000}, "images_per_s_per_gpu must be > 0"),
    ({"images_per_s_per_gpu": float("inf")}, "images_per_s_per_gpu must be a finite number"),
    ({"poll_interval_s": float("nan")}, "poll_interval_s must be a finite number"),
    ({"poll_interval_s": float("inf")}, "poll_interval_s must be a finite number"),
    ({"poll_interval_s": -1.0}, "poll_interval_s must be > 0"),
])
def test_bad_cluster_values(cluster, message):
    with pytest.raises(StudyError, match=message):
        study(cluster=cluster)


# --- expansion ------------------------------------------------------------------------------

def test_grid_expands_in_the_order_keys_are_written():
    s = parse_study({"grid": [{"engine": ["dp", "ddp"], "gpus_per_node": [2, 4], "batch_per_gpu": [32, 128]}]})
    assert labels(s) == ["dp-2g-b32-e2", "dp-2g-b128-e2", "dp-4g-b32-e2", "dp-4g-b128-e2",
                         "ddp-2g-b32-e2", "ddp-2g-b128-e2", "ddp-4g-b32-e2", "ddp-4g-b128-e2"]


def test_defaults_apply_and_a_grid_overrides_them():
    s = parse_study({"defaults": {"epochs": 5, "timed_epoch": 5, "seed": 7},
                     "grid": [{**GRID, "seed": [1, 2]}, GRID]})
    assert [(c.epochs, c.seed) for c in s.cells] == [(5, 1), (5, 2), (5, 7)]


def test_a_cell_two_grids_produce_is_kept_once_in_its_first_place():
    s = parse_study({"grid": [
        {"engine": "single", "batch_per_gpu": [32, 128]},
        {"engine": "single", "batch_per_gpu": [128, 512], "name": "overlaps the first"},
    ]})
    assert labels(s) == ["single-1g-b32-e2", "single-1g-b128-e2", "single-1g-b512-e2"]


def test_cells_are_the_same_objects_as_built_by_hand():
    s = parse_study({"grid": [{"engine": "ddp", "nodes": 2, "gpus_per_node": 2, "batch_per_gpu": 64}]})
    assert s.cells == (Cell(engine="ddp", nodes=2, gpus_per_node=2, batch_per_gpu=64),)


# --- repeats ----------------------------------------------------------------------------

def test_repeats_runs_each_configuration_n_times_numbered_from_0():
    s = parse_study({"repeats": 3, "grid": [GRID, {"engine": "single", "batch_per_gpu": 128, "repeats": 1}]})
    assert [(c.batch_per_gpu, c.repeat) for c in s.cells] == [(32, 0), (32, 1), (32, 2), (128, 0)]
    assert len({c.cell_id for c in s.cells}) == 4, "each repeat is its own cell, with its own result"


def test_one_repeat_keeps_the_ids_of_a_study_without_repeats():
    assert [c.cell_id for c in study(repeats=1).cells] == [c.cell_id for c in study().cells]


@pytest.mark.parametrize("value", [0, -1, 2.5, "3", True])
def test_repeats_must_be_a_whole_number_at_least_1(value):
    with pytest.raises(StudyError, match=r"repeats must be a whole number >= 1"):
        study(repeats=value)


def test_repeats_and_an_explicit_repeat_list_are_not_both_given():
    with pytest.raises(StudyError, match=r"grid\[0\]: give repeats = N or repeat = \[...\], not both"):
        parse_study({"grid": [dict(GRID, repeats=2, repeat=[0, 5])]})

# --- names and finding the file -------------------------------------------------------------

@pytest.mark.parametrize("name", ["..", ".", ".hidden", "-rf", "a/b", "a\\b", "", "a b", "x" * 101])
def test_a_study_name_is_one_path_component_of_a_safe_alphabet(name):
    with pytest.raises(StudyError, match="name must be"):
        study(name=name)


def test_a_directory_named_like_a_shipped_study_does_not_hide_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hw5").mkdir()
    assert load_study("hw5").name == "hw5"


@pytest.mark.parametrize("name", ["dir.toml", "plain"])
def test_a_directory_given_as_the_study_says_it_is_a_directory(tmp_path, name):
    (tmp_path / name).mkdir()
    with pytest.raises(StudyError, match=f"{name} is a directory, not a study file"):
        load_study(str(tmp_path / name))


def test_a_study_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'description = "caf\xe9"\n[[grid]]\nengine = "single"\nbatch_per_gpu = 8\n')
    with pytest.raises(StudyError, match=r"latin1.toml: not UTF-8 text"):
        load_study(str(path))


def test_a_shipped_name_cannot_climb_out_of_the_shipped_studies(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StudyError, match="unknown study"):
        load_study("../studies/quick")


# --- grid size ---------------------------------------------------------------------------------

def test_a_huge_grid_is_refused_with_its_size_before_a_cell_is_built(monkeypatch):
    built = []
    check = Cell.__post_init__

    def counted(cell):
        built.append(cell)
        assert len(built) <= 100, "the grid is being expanded before its size is checked"
        check(cell)

    monkeypatch.setattr(Cell, "__post_init__", counted)
    grid = {"engine": "single", **{k: list(range(1, 101)) for k in ("batch_per_gpu", "epochs", "seed", "repeat")},
            "lr": [0.1 * i for i in range(1, 101)], "train_images": list(range(1, 101)), "timed_epoch": 1}
    with pytest.raises(StudyError, match=r"1,000,000,000,000 cells.*max_cells = 10,000.*raise max_cells"):
        parse_study({"grid": [grid]})
    assert built == []
    parse_study({"grid": [{"engine": "single", "batch_per_gpu": [8, 16]}]})
    assert len(built) == 2, "the count sees each cell a grid builds"


def test_max_cells_counts_every_grid_and_can_be_raised():
    grids = [{"engine": "single", "batch_per_gpu": list(range(1, 6001))},
             {"engine": "single", "batch_per_gpu": list(range(1, 5001)), "seed": 1}]
    with pytest.raises(StudyError, match=r"11,000 cells"):
        parse_study({"grid": grids})
    assert len(parse_study({"grid": grids, "max_cells": 11_000}).cells) == 11_000


@pytest.mark.parametrize("value", [0, -1, "10", True])
def test_max_cells_must_be_a_positive_int(value):
    with pytest.raises(StudyError, match="max_cells must be an int from 1 to 200,000"):
        study(max_cells=value)


def test_repeats_have_a_limit_checked_before_anything_is_built():
    with pytest.raises(StudyError, match=r"grid\[0\].repeats = 1,000,000,000: at most 1000"):
        study(repeats=10**9)


def test_a_value_listed_twice_in_an_axis_is_named_even_as_1_and_1_0():
    with pytest.raises(StudyError, match=r"grid\[0\].lr lists 1.0 twice"):
        parse_study({"grid": [{**GRID, "lr": [1, 1.0]}]})
    assert len(parse_study({"grid": [{**GRID, "seed": [0, 1, 2]}]}).cells) == 3


def test_every_missing_required_field_is_named_once_per_grid():
    with pytest.raises(StudyError, match=r"^grid\[0\]: batch_per_gpu is required; give it in the grid or in \[defaults\]$"):
        parse_study({"grid": [{"engine": "single"}]})
