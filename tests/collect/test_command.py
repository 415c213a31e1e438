"""collect on command results written by hand: the per-metric table (median and range over
repeats), the scaling table's speedup, efficiency and verdict worked by hand (weak at a fixed
batch per GPU, strong at a fixed global batch), --compare and --fail-on on a user's metric, and a
result whose metrics were edited into a non-number refused (exit 2), never read as a figure."""
from __future__ import annotations

import json
import math

from collect.command.rows import command_rows
from collect.command.tables import scaling
from collect.load import load
from tests.factories import command_cell, command_result, write_results
from tests.helpers import cli, cli_json


def times(processes: int, batch: int, seconds: list[float]):
    return [command_result(command_cell(processes, r, batch_per_gpu=batch), [{"epoch": 1, "epoch_s": 99.0},
                                                                             {"epoch": 2, "epoch_s": s, "acc": 0.5}])
            for r, s in enumerate(seconds)]


def test_scaling_worked_by_hand(tmp_path):
    # weak at b=64: T1 = median(10, 10.2, 9.8) = 10, T2 = median(5.2, 5.1, 5.0) = 5.1 -> S = 1.961, E = 0.980
    # strong at global batch 128: T1(b=128) = median(18, 18.4, 17.6) = 18, T2(b=64) = 5.1 -> S = 3.529, E = 1.765
    results = times(1, 64, [10, 10.2, 9.8]) + times(2, 64, [5.2, 5.1, 5.0]) + times(1, 128, [18, 18.4, 17.6])
    loaded = load(write_results(tmp_path / "r", results))
    table = scaling(command_rows(loaded.of_kind("command")).values)
    rows = {(r.regime, r.series, r.processes): r for r in table.itertuples(index=False)}
    weak = rows[("weak", "batch_per_gpu=64", 2)]
    assert (weak.time, weak.base_processes, weak.repeats) == (5.1, 1, 3)
    assert math.isclose(weak.speedup, 10 / 5.1) and math.isclose(weak.efficiency, 10 / 5.1 / 2)
    assert (weak.outcome, weak.direction) == ("beyond", -1) and math.isclose(weak.ratio, 0.51)
    strong = rows[("strong", "global batch 128", 2)]
    assert math.isclose(strong.speedup, 18 / 5.1) and math.isclose(strong.efficiency, 18 / 5.1 / 2)
    assert rows[("strong", "global batch 128", 1)].outcome == ""  # the base
    assert ("weak", "batch_per_gpu=128", 1) not in rows  # one process count: no series
    assert len(table) == 4


def test_collect_json_gives_each_metric_at_the_timed_line(tmp_path, capsys):
    results = times(1, 64, [10, 12, 11]) + [command_result(command_cell(2, 0, batch_per_gpu=64), status="failed",
                                                           error="stderr\nthe script exited with code 1")]
    out = write_results(tmp_path / "r", results)
    tables = cli_json(capsys, "collect", "--results", out)
    epoch_s = [r for r in tables["command_metrics"] if r["metric"] == "epoch_s"]
    assert [(r["setup"], r["value"], r["value_min"], r["value_max"], r["repeats"]) for r in epoch_s] == [
        ("1 CPU process", 11.0, 10.0, 12.0, 3)]  # no field but the process count varies
    assert "repeat_values" not in epoch_s[0]
    failed = [r for r in tables["command_cells"] if r["status"] == "failed"]
    assert [r["error"] for r in failed] == ["the script exited with code 1"]
    assert tables["command_scaling"] == []


def test_compare_and_fail_on_a_users_metric(tmp_path, capsys):
    a = write_results(tmp_path / "a", times(1, 64, [10.0, 10.1, 9.9]))
    b = write_results(tmp_path / "b", times(1, 64, [12.0, 12.1, 11.9]))
    code, out, err = cli(capsys, "collect", "--results", b, "--compare", a, "--fail-on", "slower:5")
    assert code == 1, out + err
    assert "epoch_s" in out and "slower" in out
    code, out, err = cli(capsys, "collect", "--results", a, "--compare", a, "--fail-on", "slower:5")
    assert code == 0, out + err


def test_an_edited_metric_is_refused_not_a_figure(tmp_path, capsys):
    out = write_results(tmp_path / "r", times(1, 64, [10.0]))
    path = next(p for p in out.glob("*.json") if p.name != "plan.json")
    data = json.loads(path.read_text())
    data["command"]["lines"][1]["epoch_s"] = "fast"
    path.write_text(json.dumps(data))
    code, text, err = cli(capsys, "collect", "--results", out, "--json")
    assert code == 2 and text == "" and "(command.lines[1]: epoch_s = 'fast' is not a finite number)" in err


def test_a_result_of_another_process_count_is_unreadable_not_a_figure(tmp_path, capsys):
    result = times(2, 64, [10.0])[0]
    result.body = type(result.body)(1, result.body.lines, result.body.timed)  # 1 process ran a 2-process cell
    tables = cli_json(capsys, "collect", "--results", write_results(tmp_path / "r", [result]))
    assert tables["command_metrics"] == []
    (cell,) = tables["command_cells"]
    assert cell["status"] == "unreadable" and "an ok result of 1 processes, its cell's 2" in cell["error"]


def test_without_batch_per_gpu_a_series_is_every_other_field_fixed(tmp_path):
    # lr 0.1: T1 = median(8, 8.2) = 8.1, T4 = median(2.1, 2.0) = 2.05 -> S = 3.951, E = 0.988; lr 0.2 has N = 1 only
    results = [command_result(command_cell(n, r, lr=lr), [{"epoch_s": s}])
               for n, r, lr, s in ((1, 0, 0.1, 8.0), (1, 1, 0.1, 8.2), (4, 0, 0.1, 2.1), (4, 1, 0.1, 2.0),
                                   (1, 0, 0.2, 7.0))]
    table = scaling(command_rows(load(write_results(tmp_path / "r", results)).of_kind("command")).values)
    assert [(r.regime, r.series, r.processes) for r in table.itertuples()] == [("fixed fields", "lr=0.1", 1),
                                                                               ("fixed fields", "lr=0.1", 4)]
    assert math.isclose(table.speedup[1], 8.1 / 2.05) and math.isclose(table.efficiency[1], 8.1 / 2.05 / 4)


def test_the_scaling_answer_counts_the_verdicts_and_settle_finds_the_undecided(tmp_path, capsys):
    # weak b=64: 10, 10.2, 9.8 -> 5.2, 5.1, 5.0 (faster beyond 5%); weak b=32: 10, 14 -> 6, 9 (inconclusive: too
    # wide); strong at global batch 64: 1 x 64's 10, 10.2, 9.8 -> 2 x 32's 6, 9 (inconclusive)
    results = (times(1, 64, [10, 10.2, 9.8]) + times(2, 64, [5.2, 5.1, 5.0]) + times(1, 32, [10, 14])
               + times(2, 32, [6, 9]))
    out = write_results(tmp_path / "r", results)
    (answer,) = cli_json(capsys, "collect", "--results", out)["answers"]
    assert answer["question"] == "command.scaling"
    numbers = answer["numbers"]
    assert (numbers["faster"], numbers["slower"], numbers["equivalent"], numbers["inconclusive"]) == (1, 0, 0, 2)
    assert math.isclose(numbers["best.efficiency"], 10 / 5.1 / 2)  # 0.980 beats 12/7.5/2 = 0.8 and 10/7.5/2 = 0.667
    assert answer["text"].startswith("Against each series' fewest processes, 3 comparisons by the verdict rule "
                                     "(threshold 5%): 1 faster, 2 inconclusive. The best efficiency: 0.98 (speedup "
                                     "1.96) at N = 2, weak, batch_per_gpu=64: epoch_s 5.1 (5-5.2 over 3 runs)")
    code, text, _ = cli(capsys, "submit", "--results", out, "--settle", "--dry-run", "--executor", "local")
    assert code == 0 and "command.scaling" in text and "1 answer leaves a comparison undecided" in text
