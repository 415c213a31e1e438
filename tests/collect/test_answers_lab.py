"""The lab's answers (collect/train/answers_lab.py) on a small hand-made set: 1 GPU and 2 GPUs (DDP) at batch
128 per GPU, LR 0.1 x global batch / 128, 5 epochs over 100 test images. 1 GPU: 70 s timed epoch, 16 s of it
data wait (so 2 GPUs are more than twice as fast, each rank with its own loader). The 2-GPU timed epoch: 32 s, data
wait 5 s (16%) and exposed all-reduce 6 s (19%): neither past its 30% bound, yet 34% together."""
from __future__ import annotations

import pytest

from collect.report import collect
from tests.factories import cell, train_result, write_results

LINEAR = dict(lr_scaling="linear", lr_ref_batch=128, epochs=5, timed_epoch=2, test_images=100)


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    one = train_result(cell("single", 128, 1, **LINEAR), epoch_s=70.0, train_s=54.0, gpu_util_pct=60.0,
                       test_accuracies=[0.5, 0.7, 0.8, 0.9, 1.0])
    two = train_result(cell("ddp", 128, 2, **LINEAR), epoch_s=32.0, train_s=27.0, comm_exposed_s=6.0, busbw_gbps=40.0,
                       gpu_util_pct=70.0, test_accuracies=[0.5, 0.7, 0.8, 0.9, 0.99])
    return collect(write_results(tmp_path_factory.mktemp("lab"), [one, two], study="lab"))


@pytest.fixture(scope="module")
def answers(collected):
    return {a.id: a for a in collected.answers}


def test_compute_is_not_the_bottleneck_where_data_wait_and_communication_are_a_third_of_the_epoch(answers):
    a = answers["lab.scaling"]
    assert a.record.bottleneck == "data loading and communication"
    assert "is compute" not in a.text and "together are 34% of its timed epoch" in a.text


def test_the_workers_rule_needs_no_run_on_two_nodes_and_cites_the_studys_own_lr(answers):
    text = answers["lab.workers"].text
    assert "No run on more than one node" not in text
    assert "the global batch is W x 128" in text and "0.1 x W," in text
    assert "every process on every node counts" in text and "LR linear: 0.1 x 256/128 = 0.2" in text


def test_an_accuracy_over_100_images_has_no_decimals_it_cannot_resolve(answers):
    text = answers["lab.scaling"].text
    assert "test accuracy 99% of 100 test images" in text and "99.00%" not in text


def test_each_whole_point_accuracy_is_checked_against_its_evidence_row(answers, collected):
    """The claims check reads "99% of 100 test images" too (it read only two-decimal figures)."""
    import dataclasses

    from tests.collect import claims

    a = answers["lab.scaling"]
    assert claims.accuracies_in_evidence(a, collected.tables) == []
    bad = dataclasses.replace(a, text=a.text.replace("99% of 100", "98% of 100"))
    assert claims.accuracies_in_evidence(bad, collected.tables) == ["98% in no evidence row"]


def test_one_batch_size_says_the_change_with_the_batch_is_unanswerable_and_which_runs_would_answer(answers):
    text = answers["lab.utilization"].text
    assert "cannot be answered from this set: only batch 128 per GPU ran" in text
    assert "batch_per_gpu = [32, 128, 512]" in text and "then a larger batch" not in text


def test_utilization_against_the_batch_where_two_batch_sizes_ran(tmp_path):
    runs = [train_result(cell("single", b, 1, **LINEAR), epoch_s=70.0, train_s=54.0, gpu_util_pct=u,
                         test_accuracies=[0.5, 0.7, 0.8, 0.9, 1.0]) for b, u in ((32, 40.0), (128, 60.0), (512, 62.0))]
    a = {a.id: a for a in collect(write_results(tmp_path, runs, study="lab")).answers}["lab.utilization"]
    assert a.record.by_batch == (("1 GPU", 32, 40.0, 512, 62.0),)
    assert "On 1 GPU, from batch 32 to 512 per GPU utilization rises (40% to 62%)." in a.text
    assert "cannot be answered" not in a.text


def test_the_full_run_gives_the_steps_formula_with_its_numbers(answers):
    text = answers["lab.full_run"].text
    assert "steps = epochs x ceil(training images / global batch) per worker" in text
    assert "5 x ceil(50,000 / 128) = 1,955 on 1 GPU" in text and "5 x ceil(50,000 / 256) = 980 on 2 GPUs, DDP" in text


def test_scaling_names_the_lab_setups_without_a_run_and_the_superlinear_reason_reads(answers):
    text = answers["lab.scaling"].text
    assert "Only 1 GPU and 2 GPUs ran: this study planned no run on 4 GPUs or 2 nodes, so those are unanswered." in text
    assert "N loaders split" not in text and "Efficiency above 100% (2 GPUs, DDP)" in text
    assert "each rank of a multi-GPU run has its own loader workers, so the ranks share that wait" in text


def test_the_best_with_two_workers_unplanned_is_said_unanswered_without_yet(answers):
    text = answers["lab.best"].text
    assert text.startswith("Unanswered: this study planned no run on 2 nodes") and "yet" not in text
    assert text.count("planned no run") == 1


def test_the_lab_hand_in_prints_no_empty_part_a_table_and_the_gpu_hours_say_all_runs(collected, tmp_path):
    """Part A's tables are empty in a lab study: the report lists none of them; the GPU-hours column is a sum
    over every run, and says so."""
    import dataclasses

    from collect.report import write_report
    from collect.train.gpu_hours import spent_grid

    write_report(dataclasses.replace(collected, out_dir=tmp_path))
    md = (tmp_path / "report.md").read_text()
    for title in ("### Q1:", "### Table 1:", "### Table 2:", "### Table 3:", "### Q4:"):
        assert title not in md
    assert "epochs, all runs (s)" in spent_grid(collected.tables["spent"]).header


def test_the_test_tables_accuracy_cell_leaves_the_count_to_its_column(collected):
    grid = next(g for g in collected.grids if g.key == "test")
    cells = [row[grid.header.index("test accuracy")] for row in grid.rows]
    assert cells[1] == "99%" and not any(" of 100" in c for c in cells)
    assert all(row[grid.header.index("test images")] == "100" for row in grid.rows)


def test_every_share_the_lab_quotes_is_in_a_printed_table_it_cites(answers, collected):
    """The data wait and exposed all-reduce shares (16%, 19%, 34% together) stand in the lab's epoch table."""
    grid = next(g for g in collected.grids if g.key == "lab_epoch")
    two = next(row for row in grid.rows if row[0] == "2 GPUs, DDP")
    assert [two[grid.header.index(h)] for h in ("data wait (%)", "exposed all-reduce (%)", "the two (%)")] == \
        ["16%", "19%", "34%"]
    text = answers["lab.scaling"].text
    assert "its data wait (16%)" in text and "(19%)" in text and "together are 34%" in text
    assert any(e.table == "lab_epoch" for e in answers["lab.scaling"].record.evidence)
    one = next(row for row in grid.rows if row[0] == "1 GPU")
    assert f"waits on its loader {one[grid.header.index('data wait (%)')]}" in text
