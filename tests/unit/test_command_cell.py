"""The command cell (argv with {field} placeholders, the user's own fields) and the metrics lines
a script writes: each value one argument, each mistake named, each bad line named by its number."""
from __future__ import annotations

import dataclasses

import pytest

from jobs.command.cell import CommandCell
from jobs.command.metrics import MetricsError, parse_metrics, timed_index
from jobs.core.cell import CellError
from jobs.core.kinds import cell_from_dict


def cell(**fields) -> CommandCell:
    return CommandCell(**{"command": ["python", "train.py", "--lr={lr}", "{tag}"], "lr": 0.1, "tag": "a b", **fields})


def test_each_placeholder_is_one_argument_with_the_fields_value():
    c = cell(tag="1; rm -rf ~", flag=True, steps=3)
    assert c.command_line() == ["python", "train.py", "--lr=0.1", "1; rm -rf ~"]
    c = cell(command=["x", "{flag}", "{steps}{steps}", "{gpus_per_node}", "{repeat}", "{not a placeholder}"],
             flag=False, steps=3, lr=1e-05)
    assert c.command_line() == ["x", "false", "33", "1", "0", "{not a placeholder}"]


def test_the_cell_round_trips_through_its_json_with_the_same_id():
    c = cell(batch_per_gpu=64, nodes=2, repeat=1)
    data = c.to_dict()
    assert data["kind"] == "command" and data["batch_per_gpu"] == 64 and data["command"][2] == "--lr={lr}"
    again = cell_from_dict(data)
    assert again == c and again.cell_id == c.cell_id and again.own_fields == (("batch_per_gpu", 64), ("lr", 0.1),
                                                                         ("tag", "a b"))
    assert cell(lr=0.2).cell_id != c.cell_id and cell(repeat=1).cell_id != cell().cell_id


def test_a_new_repeat_keeps_the_users_fields():  # submit --settle copies a cell with dataclasses.replace
    c = cell(batch_per_gpu=64)
    again = dataclasses.replace(c, repeat=3)
    assert again.own_fields == c.own_fields and again.repeat == 3 and again.cell_id != c.cell_id
    assert again.command_line() == c.command_line()


@pytest.mark.parametrize("fields, expected", [
    (dict(command=["python", "{lrr}"]), "command[1] = '{lrr}': {lrr} names no field; fields: "),
    (dict(command="python train.py"), "command must be a list of strings"),
    (dict(command=[]), "command must be a list of strings"),
    (dict(tag="a\0b"), "tag holds a NUL character"),
    (dict(command=["python", "a\0"]), "command[1] holds a NUL character"),
    (dict(tag="x" * 4097), "tag is 4,097 characters long: at most 4,096"),
    (dict(lr=float("nan")), "lr = nan: give a finite number"),
    (dict(tag=[1, 2]), "tag must be a string, a number or true/false"),
    (dict(gpus_per_node=0), "no processes"),
    (dict(gpus_per_node=2, cpu_ranks_per_node=2), "not both"),
    (dict(nodes=0), "nodes must be >= 1, got 0"),
    (dict(nodes=True), "nodes must be a whole number, got True"),
    (dict(time_metric=3), "time_metric must be a string"),
    (dict(timed_epoch=-2), "timed_epoch must be >= -1"),
    (dict(own_fields=3), "own_fields is the cell's own name for your fields; give yours other names"),
    (dict(kind="train"), "kind names the study's kind, at the top of the study file"),
])
def test_a_bad_field_is_refused_naming_it(fields, expected):
    with pytest.raises(CellError) as caught:
        cell(**fields)
    assert expected in str(caught.value)


def test_metrics_lines_are_read_and_the_timed_one_found():
    text = '{"epoch": 1, "epoch_s": 12.5}\n\n{"epoch": 2, "epoch_s": 11, "accuracy": 0.8}\n'
    lines = parse_metrics(text)
    assert lines == ({"epoch": 1.0, "epoch_s": 12.5}, {"epoch": 2.0, "epoch_s": 11.0, "accuracy": 0.8})
    assert timed_index(lines, -1) == 1 and timed_index(lines, 1) == 0
    with pytest.raises(MetricsError, match=r"no metrics line has epoch = 5 \(the study's timed_epoch\); epochs: 1, 2"):
        timed_index(lines, 5)


@pytest.mark.parametrize("text, expected", [
    ("", "the script wrote no metrics"),
    ("\n  \n", "the script wrote no metrics"),
    ('{"epoch_s": 1}\nnot json\n', "metrics line 2 is not JSON: 'not json'"),
    ('[1, 2]\n', "metrics line 1 is not a JSON object of numbers"),
    ('{"epoch_s": "1.5"}\n', "metrics line 1: epoch_s = '1.5' is not a finite number"),
    ('{"ok": true}\n', "metrics line 1: ok = True is not a finite number"),
    ('{"epoch_s": NaN}\n', "metrics line 1: epoch_s = nan is not a finite number"),
    ('{"epoch_s": 1}\n{"a b": 1}\n', "metrics line 2: metric name 'a b' must be letters, digits and _.-"),
])
def test_a_bad_metrics_file_names_its_line(text, expected):
    with pytest.raises(MetricsError) as caught:
        parse_metrics(text)
    assert expected in str(caught.value)


def test_plan_shows_the_processes_and_the_argv_as_it_will_run():
    assert cell(tag="1; rm -rf ~").plan_columns() == {"processes": "1 GPU",
                                                      "command": "python train.py --lr=0.1 '1; rm -rf ~'"}
    assert cell(nodes=2, gpus_per_node=0, cpu_ranks_per_node=2).plan_columns()["processes"] == (
        "2 nodes x 2 CPU processes")
