"""`collect --compare OTHER`: two result sets paired by configuration (ignored fields, one-sided
configurations, OOM and failed cells), the environments said first, every row in compare.csv and
--json, and --fail-on's exit code for a CI job."""
from __future__ import annotations

import csv
import math
import json

import pytest

from collect.compare import compare_dirs
from collect.compare.pairing import pair
from collect.comparable import Run
from tests.collect.dirs import DDP, SINGLE, repeats
from tests.factories import allreduce_result, cell, ptq_cell, ptq_result, train_result, write_results
from tests.helpers import cli
from orchestrator.cli import main
from jobs.allreduce.cell import AllreduceCell

H100 = "NVIDIA H100 80GB HBM3"
BIG = dict(engine="single", b=4096, gpus=1)


@pytest.fixture
def two_sets(tmp_path):
    """A: single 10 s, DDP 6 s, big batch OOM, a 512 run only here. B: single 11 s (10% slower),
    DDP 6 s (the same), big batch 5.1 s, a 256 run only here."""
    a = write_results(tmp_path / "a", repeats(SINGLE, 10.0) + repeats(DDP, 6.0) + repeats(BIG, 1.0, status="oom", runs=1)
                      + repeats(dict(engine="single", b=512, gpus=1), 8.0))
    b = write_results(tmp_path / "b", repeats(SINGLE, 11.0) + repeats(DDP, 6.0) + repeats(BIG, 5.1, runs=1)
                      + repeats(dict(engine="single", b=256, gpus=1), 9.0))
    return a, b


def headline(comparison, config_part: str):
    rows = [r for r in comparison.headline_rows if config_part in r.config]
    assert len(rows) == 1, [r.config for r in comparison.headline_rows]
    return rows[0]


def test_configurations_pair_by_their_fields_with_a_verdict_each(two_sets):
    a, b = two_sets
    c = compare_dirs(a, b)
    single = headline(c, "1 GPU, batch 128")
    assert single.title == "timed epoch" and single.outcome == "slower"
    assert single.verdict.ratio == pytest.approx(1.1) and single.verdict.n_a == 3
    assert headline(c, "DDP").outcome == "equivalent"
    assert c.counts() == {"slower": 1, "equivalent": 1, "status changed": 1, "only in A": 1, "only in B": 1}


def test_oom_and_one_sided_configurations_say_what_each_side_holds(two_sets):
    a, b = two_sets
    c = compare_dirs(a, b)
    assert headline(c, "batch 4096").text == "OOM in A, 5.10 s in B"
    assert headline(c, "batch 512").text == "only in A"
    assert headline(c, "batch 256").text == "only in B"


def test_oom_in_both_is_one_row(tmp_path):
    a = write_results(tmp_path / "a", repeats(BIG, 1.0, status="oom", runs=1))
    b = write_results(tmp_path / "b", repeats(BIG, 1.0, status="oom", runs=1))
    (row,) = compare_dirs(a, b).rows
    assert (row.title, row.text, row.outcome) == ("timed epoch", "OOM in both", "no figures")


def test_ignored_fields_pair_configurations_that_differ_only_in_them(tmp_path):
    a = write_results(tmp_path / "a", repeats(dict(SINGLE, pipeline="faithful"), 10.0))
    b = write_results(tmp_path / "b", repeats(dict(SINGLE, pipeline="fast"), 5.0))
    apart = compare_dirs(a, b)
    assert {r.outcome for r in apart.headline_rows} == {"only in A", "only in B"}
    together = compare_dirs(a, b, ignore=["pipeline"])
    (row,) = together.headline_rows
    assert row.outcome == "faster" and row.verdict.ratio == pytest.approx(0.5)


def test_ignoring_a_field_that_also_differs_within_one_set_is_said():
    runs = [Run("train", {"engine": "single", "pipeline": p}, "ok", {"epoch_s": 1.0}, "epoch_s") for p in ("fast", "faithful")]
    paired = pair(runs, runs[:1], ignore=["pipeline"])
    assert len(paired.pairs) == 1
    assert paired.notes == ("--ignore pipeline merges configurations within A: pipeline=faithful, fast count as "
                            "repeats of one (train)",)


def test_ignoring_a_field_no_configuration_has_is_an_error_line(two_sets, capsys):
    a, b = two_sets
    code, out, err = cli(capsys, "collect", "--results", b, "--compare", a, "--ignore", "pipline")
    assert code == 2 and out == ""
    assert err.startswith("error: --ignore pipline: no configuration has that field; the fields are ")
    assert "pipeline" in err


def test_sets_on_different_gpus_say_so_first(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    a = write_results(tmp_path / "a", repeats(SINGLE, 10.0, gpu_model=H100))
    b = write_results(tmp_path / "b", repeats(SINGLE, 7.0))
    code, out, err = cli(capsys, "collect", "--results", b, "--compare", a)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[:3] == [f"A (baseline): {a}", f"B: {b}", "every ratio is B / A"]
    assert lines[3] == ("environments differ, so a change below may be the environment's, not the code's: "
                        f"GPU model: {H100} (A) vs NVIDIA H200 (B)")
    assert lines[4] == "1 configuration: 1 faster"
    assert "timed epoch: geometric mean ratio 0.700 over 1 configuration" in out
    assert "30.0% faster" in out


def test_the_same_environment_is_said_too(two_sets, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    a, b = two_sets
    code, out, _ = cli(capsys, "collect", "--results", b, "--compare", a)
    assert code == 0
    assert ("same environment: GPU model: NVIDIA H200; driver: 550.54; torch: 2.5.1; CUDA: 12.4; NCCL: 2.21.5; "
            "nodes per run: 1") in out


def test_every_row_is_in_compare_csv_and_the_json(two_sets, capsys, tmp_path):
    a, b = two_sets
    code, out, _ = cli(capsys, "collect", "--results", b, "--compare", a, "--json", "--out", tmp_path)
    assert code == 0
    data = json.loads(out)
    assert data["written"] == [str(tmp_path / "compare.csv")]
    with open(tmp_path / "compare.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(data["rows"])
    slower = next(r for r in data["rows"] if r["configuration"] == "1 GPU, batch 128" and r["headline"])
    assert (slower["metric"], slower["a_median"], slower["b_median"], slower["outcome"]) == ("epoch_s", 10.0, 11.0, "slower")
    assert {r["metric"] for r in rows} == {"epoch_s", "train_s", "images_per_s"}
    assert data["environment"][0] == {"name": "GPU model", "a": "NVIDIA H200", "b": "NVIDIA H200", "differs": False}


def test_report_writes_its_section_and_the_ratio_plot(two_sets, capsys, tmp_path):
    a, b = two_sets
    code, _, _ = cli(capsys, "collect", "--results", b, "--compare", a, "--report", "--out", tmp_path)
    assert code == 0
    text = (tmp_path / "compare.md").read_text()
    assert "![B / A per configuration](plots/compare_ratios.png)" in text
    assert (tmp_path / "plots" / "compare_ratios.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("fail_on, code", [("slower:5%", 1), ("slower:15%", 0), ("worse:5", 1)])
def test_fail_on_exits_1_when_a_configuration_is_slower_beyond_it(tmp_path, capsys, fail_on, code):
    a = write_results(tmp_path / "a", repeats(SINGLE, 10.0) + repeats(DDP, 6.0))
    b = write_results(tmp_path / "b", repeats(SINGLE, 11.0) + repeats(DDP, 6.0))
    got, _, err = cli(capsys, "collect", "--results", b, "--compare", a, "--fail-on", fail_on)
    assert got == code
    if code:
        assert err.startswith(f"fail-on {fail_on.split(':')[0]}:5%: 3 regressions in 1 configuration:\n")
        assert "1 GPU, timed epoch: 10.0% slower" in err


@pytest.mark.parametrize("bad", ["faster:5%", "slower", "slower:-3%", "slower:lots"])
def test_a_bad_fail_on_is_an_error_line(two_sets, capsys, bad):
    a, b = two_sets
    with pytest.raises(SystemExit) as exited:
        main(["collect", "--results", str(b), "--compare", str(a), "--fail-on", bad])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and "--fail-on" in err and "slower:5%" in err


def test_allreduce_pairs_busbw_per_size(tmp_path):
    c = AllreduceCell(nodes=1, gpus_per_node=2, repeat=0)
    sizes = c.sizes()
    slow = {n: 2 * (20e-6 + n / 10e9) for n in sizes}  # twice as long: half the bandwidth
    a = write_results(tmp_path / "a", [allreduce_result(AllreduceCell(nodes=1, gpus_per_node=2, repeat=r)) for r in range(2)])
    b = write_results(tmp_path / "b", [allreduce_result(AllreduceCell(nodes=1, gpus_per_node=2, repeat=r), slow)
                                       for r in range(2)])
    comparison = compare_dirs(a, b)
    assert len(comparison.rows) == len(sizes)
    (top,) = comparison.headline_rows
    assert top.metric.title.startswith("busbw at ") and top.outcome == "slower"
    assert top.verdict.ratio == pytest.approx(0.5)


def test_ptq_pairs_each_variants_accuracy(tmp_path):
    a = write_results(tmp_path / "a", [ptq_result(ptq_cell(repeat=r)) for r in range(2)])
    lower = (0.50, 0.51, 0.49, 0.55, 0.50, 0.40)  # the last notebook variant loses 15 points
    b = write_results(tmp_path / "b", [ptq_result(ptq_cell(repeat=r), lower) for r in range(2)])
    comparison = compare_dirs(a, b)
    (top,) = comparison.headline_rows
    assert top.metric.name == "accuracy NetWithBias W8A8B32" and top.outcome == "lower"
    assert top.a.text("%") == "55.0% (2 runs)" and top.b.text("%") == "40.0% (2 runs)"


def test_compare_flags_without_compare_are_an_error_line(two_sets, capsys):
    _, b = two_sets
    code, out, err = cli(capsys, "collect", "--results", b, "--fail-on", "slower:5%")
    assert code == 2 and out == ""
    assert err == "error: --fail-on compares two result sets: add --compare OTHER (the results dir to compare with)\n"


def test_a_run_without_a_figure_says_not_measured(tmp_path):
    """GPU utilization sampled in B only (A's results are from before it was recorded)."""
    a = write_results(tmp_path / "a", repeats(SINGLE, 10.0))
    b = write_results(tmp_path / "b", [train_result(cell(repeat=r, **SINGLE), epoch_s=10.0, gpu_util_pct=90.0) for r in range(2)])
    util = next(r for r in compare_dirs(a, b).rows if r.title == "GPU utilization")
    assert (util.text, util.outcome) == ("not measured in A, 90.0% (2 runs) in B", "status changed")


def test_the_grid_lists_paired_rows_by_the_size_of_their_change_and_counts_the_one_sided(two_sets):
    """A 10% slower configuration (3 metrics), an equivalent one, one whose status changed (OOM in A),
    one only in A and one only in B: the grid shows the paired rows, the largest |ln ratio| first,
    then the status change; the one-sided configurations are counted, their rows left to compare.csv."""
    from collect.compare.render import grid
    from collect.compare.table import largest_first

    a, b = two_sets
    c = compare_dirs(a, b)
    g = grid(c)
    configs = [row[0] for row in g.rows]
    assert not any("512" in c or "256" in c for c in configs)
    ratios = [abs(math.log(r.verdict.ratio)) for r in largest_first(c.rows) if r.verdict]
    assert ratios == sorted(ratios, reverse=True) and len(ratios) == 6  # 3 metrics x 2 paired configurations
    assert [row[4] for row in g.rows[:6]] == ["1.100", "1.100", "0.909", "1.000", "1.000", "1.000"]
    assert g.rows[6][6] == "OOM in A, 5.10 s in B" and len(g.rows) == 9  # then the 3 status changes
    assert g.more == "1 configuration only in A and 1 only in B; every row is in compare.csv"


def test_a_configuration_is_named_by_the_fields_that_vary_in_the_tables_words(two_sets):
    """Engine, GPUs and batch vary between the configurations: each named as the tables name a setup."""
    a, b = two_sets
    c = compare_dirs(a, b)
    assert {r.config for r in c.headline_rows} == {"1 GPU, batch 128", "2 GPUs, DDP, batch 128", "1 GPU, batch 4096",
                                                   "1 GPU, batch 512", "1 GPU, batch 256"}


def test_the_real_comparison_fits_100_columns(tmp_path, capsys, monkeypatch):
    """Run 8's hw5 (4 H100s, one repeat) against run 7's r7a (2 H200s, three repeats): 4 configurations
    paired (1 and 2 GPUs at batch 128 and 512), 24 only in B. The grid names the paired rows by what varies
    among them, and every line fits 100 columns."""
    import shutil
    import tarfile

    from tests.collect.dirs import REAL_HW5, RUN7_TGZ

    monkeypatch.setenv("COLUMNS", "100")
    with tarfile.open(RUN7_TGZ) as tar:
        tar.extractall(tmp_path / "r7", members=[m for m in tar.getmembers() if m.name.startswith("runs/r7a/")],
                       filter="data")
    b = shutil.copytree(REAL_HW5, tmp_path / "hw5")
    code, out, err = cli(capsys, "collect", "--results", b, "--compare", tmp_path / "r7" / "runs" / "r7a")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    assert "0 configurations only in A and 24 only in B; every row is in compare.csv" in " ".join(out.split())
    labels = {line.split("│")[1].strip() for line in lines if line.startswith("│") and line.split("│")[1].strip()}
    assert labels == {"1 GPU, batch 128", "1 GPU, batch 512", "2 GPUs, DDP, batch 128", "2 GPUs, DDP, batch 512"}


def test_a_grid_with_spreads_fits_100_columns_its_text_wrapped(two_sets, capsys, monkeypatch):
    """Three repeats a side: the interval column is there, the configuration and verdict wrap, every
    number whole, every table line closed by its border."""
    monkeypatch.setenv("COLUMNS", "100")
    a, b = two_sets
    code, out, _ = cli(capsys, "collect", "--results", b, "--compare", a)
    table = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert code == 0 and table and all(len(line) <= 100 and line[-1] in "┓┃┩│┘" for line in table)
    assert "interval" in table[1] and "1.069-1.132" in out and "10.00 s (3)" in out
