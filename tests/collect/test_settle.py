"""When an answer is inconclusive: on a fabricated hw5 set with one repeat, `collect` names each
comparison that leaves a word undecided and what settling it costs, `submit --settle --dry-run`
prints the same plan, `submit --settle` queues exactly those runs (new repeats: new ids and seeds,
nothing measured again) within the budget, and once they have results the words are decided."""
from __future__ import annotations

import dataclasses

import json
import os
from pathlib import Path

import pytest

from collect.settle import PILOT_ROUND, SECOND_ROUND, answers_of, undecided
from collect.settle_rule import STAGE_TWO
from jobs.core.cell import run_seed
from jobs.core.result import write_result
from orchestrator import settle
from orchestrator import submit as submit_module
from orchestrator.commands import settle as settle_command
from orchestrator.local.machine import Machine
from orchestrator.errors import SchedulerError
from orchestrator.plan.plan import install_plan, read_plan
from tests.collect.dirs import hw5_results, write_hw5
from tests.helpers import TINY_STUDY, cli

# hw5 with one repeat: every comparison is one run a side, so each is a pilot to 3 runs a side (+2 a configuration).
# Timing (ratios): A.Q1 (trend, plateau), A.Q2 (15 speedups, the strong point and 2 more of the strong table) and
# A.Q3.1 (15 splits: the speedups' sides) compare 19 configurations: 35 comparisons, 38 runs; A.Q3.2 settles its
# rates' TN - T1/N on the same 15 splits (TA4 9: a top rate on an unsettled difference is not firm). Accuracy (differences
# in points): A.Q4.1's gap and A.Q4.2's two remedies against none and against the baseline compare Q4's 4
# configurations (the 1-GPU baseline; 4 GPUs at 2048: none, linear, linear + warmup): 5 comparisons, 8 runs.
COMPARISONS = 35 + 15 + 5
SUMMARY = ("6 answers leave comparisons undecided (their runs spread too wide to tell); `submit --settle` adds 46 runs "
           "of 23 configurations, about")


@pytest.fixture(autouse=True)
def wide(monkeypatch) -> None:
    """The settle lines whole on one line each (test_screens_fit checks that they wrap to the terminal)."""
    monkeypatch.setenv("COLUMNS", "400")


@pytest.fixture
def queued(monkeypatch) -> list[list[str]]:
    """The local executor's queue, recorded instead of started (each call's cell ids), on a machine
    that can run every hw5 cell (as the GPU node the student would run it on)."""
    calls: list[list[str]] = []
    monkeypatch.setattr(submit_module, "start_local_queue", lambda plan, ids, exclusive=False: calls.append(list(ids)))
    monkeypatch.setattr(submit_module, "this_machine", lambda: Machine(gpus=8, cpus=64))
    monkeypatch.setattr(settle_command, "this_machine", lambda: Machine(gpus=8, cpus=64))
    return calls


def _lines(out: str) -> list[str]:
    """The settle lines collect prints, without the mark that they are its notes (TA3 28)."""
    from orchestrator.commands.collect import TOOL_NOTES

    return [line.removeprefix(TOOL_NOTES + " ") for line in out.splitlines()
            if line.startswith("  A.") or "undecided (their runs" in line]


def test_collect_names_the_comparisons_and_their_cost_and_the_dry_run_prints_that_plan(tmp_path, capsys, queued):
    results = write_hw5(tmp_path / "hw5", 1)
    plan_before = (results / "plan.json").read_bytes()
    code, out, _ = cli(capsys, "collect", "--results", results)
    assert code == 0 and not _lines(out)  # TA4 24: the one screen counts them in plain words, lists none
    assert "answers leave a comparison undecided (runs spread too wide to tell); --findings says which" in out
    assert "submit --settle" not in out and " more" not in out
    code, out, _ = cli(capsys, "collect", "--results", results, "--findings")
    assert code == 0
    shown = _lines(out)
    assert shown[0].startswith(SUMMARY) and shown[0].endswith("GPU-h:")
    # in the answer's direction (Q1: the larger batch's speedup, 1 / the time ratio 0.76x), named in words
    assert shown[1].startswith("  A.Q1, speedup of the larger batch of single-1g-b2048-e2 against single-1g-b32-e2: "
                               "1.32x (no spread, 1+1 runs): pilot, from 1 to 3 runs a side, about ")
    assert len(shown) == 1 + COMPARISONS and "--dry-run` lists them all" not in out  # the details: every one
    code, out, _ = cli(capsys, "submit", "--results", results, "--settle", "--dry-run", "--executor", "local")
    assert code == 0 and "nothing queued (--dry-run)" in out
    planned = _lines(out)
    assert len(planned) == 1 + COMPARISONS  # the same summary, then every comparison
    assert any(line.startswith("  A.Q4.2, accuracy difference in points of ddp-4g-b2048-e5-lin-wu2 against "
                               "single-1g-b128-e5: -1.55 (no spread, 1+1 runs): pilot, from 1 to 3 runs a side, about ")
               for line in planned)
    assert planned == shown
    assert (results / "plan.json").read_bytes() == plan_before and queued == []


def test_submit_settle_queues_exactly_the_new_repeats_and_then_the_words_are_decided(tmp_path, capsys, queued):
    results = write_hw5(tmp_path / "hw5", 1)
    before = read_plan(results)
    found, _, _ = settle.plan_for(before, answers_of(results))
    code, out, err = cli(capsys, "submit", "--results", results, "--settle", "--executor", "local")
    assert code == 0, err
    assert "local: submitted 46 new repeat(s) (--settle)" in out
    after = read_plan(results)
    new = [c for c in after.cells if c.cell_id not in set(before.cell_ids)]
    assert queued == [[c.cell_id for c in found.cells]] and [c.cell_id for c in new] == queued[0]
    assert {c.repeat for c in new} == {1, 2}  # the pilot: repeats 1 and 2 of each one-run configuration
    seeds = {run_seed(c.seed, c.repeat) for c in new}  # each repeat a seed of its own: not the measured run's (0)
    assert len(seeds) == 2 and 0 not in seeds
    # the runs end with the times the simulated truth gives (hw5's figures, repeats 2% apart)
    for result in hw5_results(3):
        if result.cell_id in queued[0]:
            write_result(results, result)
    left = undecided(answers_of(results))
    # decided but three whose truth lies within the threshold by less than the second stage's half width aims at:
    # 1 GPU at 2048 against 512, 0.965x (A.Q1's plateau and A.Q2's strong-table row of the same two sides), and
    # linear + warmup against the baseline, -1.55 points (threshold 2): each a second stage sized
    assert {(u.question, u.field) for u in left} == {("A.Q1", "plateau_verdict"), ("A.Q2", "strongs.6.verdict"),
                                                     ("A.Q4.2", "warmup.against_baseline")}
    assert all(u.round == SECOND_ROUND for u in left)
    # sized on the difference scale: 77.96, 79.55, 81.14 against 76.44, 78.00, 79.56 points, variances 2.531 and
    # 2.434, Welch df 3 (q 3.182), d = max(2 / 2, 1.55 - 2) = 1 point: (3.182 x 1.2533)^2 x 4.965 = 79.0 a side
    assert next(u.runs for u in left if u.question == "A.Q4.2") == 79
    # the second round: repeats numbered from STAGE_TWO, for the configurations still undecided only
    code, out, err = cli(capsys, "submit", "--results", results, "--settle", "--executor", "local")
    assert code == 0, err
    second = [c for c in read_plan(results).cells if c.cell_id not in set(after.cell_ids)]
    assert second and min(c.repeat for c in second) == STAGE_TWO and queued[1] == [c.cell_id for c in second]
    undecided_cells = {cid for u in left for cid in (u.a_cells[0], u.b_cells[0])}
    configs = {(c.engine, c.gpus, c.batch_per_gpu, c.epochs) for c in after.cells if c.cell_id in undecided_cells}
    assert {(c.engine, c.gpus, c.batch_per_gpu, c.epochs) for c in second} <= configs
    code, out, _ = cli(capsys, "submit", "--results", results, "--settle", "--dry-run")
    assert code == 0 and ": final, its second stage is planned" in out  # the rule allows no third round
    assert "`submit --settle` adds" not in out


def test_repeats_planned_by_a_settle_whose_queue_failed_are_queued_by_the_next(tmp_path, capsys, queued, monkeypatch):
    """Issue 45 item 4: after sbatch failed (or a kill before it ran) plan.json had grown, and the next
    `submit --settle` said "the runs the rule asks for are planned already ... nothing queued", exit 0."""
    results = write_hw5(tmp_path / "hw5", 1)

    def refused(plan, ids, exclusive=False):
        raise SchedulerError("sbatch: error: Invalid account")
    monkeypatch.setattr(submit_module, "start_local_queue", refused)
    code, _, err = cli(capsys, "submit", "--results", results, "--settle", "--executor", "local")
    assert code == 2 and "Invalid account" in err
    grown = read_plan(results)
    monkeypatch.setattr(submit_module, "start_local_queue", lambda plan, ids, exclusive=False: queued.append(list(ids)))
    code, out, err = cli(capsys, "submit", "--results", results, "--settle", "--executor", "local")
    assert code == 0, err
    assert "local: submitted 0 new repeat(s) and 46 planned earlier that no job had run (--settle)" in out
    assert len(queued) == 1 and len(queued[0]) == 46 and read_plan(results).cell_ids == grown.cell_ids


def test_off_cluster_the_repeats_of_gpu_runs_are_not_run_on_this_cpu(tmp_path, capsys, queued, monkeypatch):
    """Issue 45 item 9: with no sbatch, `submit --settle` ran the repeats on this CPU and pooled them
    with the H200 runs in one verdict ("0.007 s (0.006-8.00 s over 3 runs)")."""
    results = write_hw5(tmp_path / "hw5", 1)
    before = (results / "plan.json").read_bytes()
    monkeypatch.setattr(settle_command, "this_machine", lambda: Machine(gpus=0, cpus=2))
    code, _, err = cli(capsys, "submit", "--results", results, "--settle", "--executor", "local")
    assert code == 2 and "ran on GPUs and this machine would run their repeats on its CPU" in err
    assert "--executor slurm" in err and len(err.strip().splitlines()) == 1
    assert (results / "plan.json").read_bytes() == before and queued == []


def test_settle_refuses_past_the_budget_and_caps_the_repeats(tmp_path, capsys, queued):
    results = write_hw5(tmp_path / "hw5", 1)
    plan_before = (results / "plan.json").read_bytes()
    code, _, err = cli(capsys, "submit", "--results", results, "--settle", "--executor", "local",
                       "--budget-gpu-hours", "1")
    assert code == 2 and "over budget: the 46 cell(s) due need about" in err
    assert (results / "plan.json").read_bytes() == plan_before and queued == []
    code, out, _ = cli(capsys, "submit", "--results", results, "--settle", "--dry-run", "--max-repeats", "2")
    assert "pilot, from 1 to 2 runs a side (capped by --max-repeats; the rule asks 3 runs a side to settle it)" in out
    assert "adds 23 runs of 23 configurations" in out
    code, _, err = cli(capsys, "submit", "--results", results, "--max-repeats", "2")
    assert code == 2 and "go with --settle" in err


def test_a_comparison_whose_second_stage_is_planned_is_final(tmp_path):
    results = write_hw5(tmp_path / "hw5", 1)
    plan = read_plan(results)
    answers = answers_of(results)
    step = settle.settle_plan(plan, undecided(answers)).steps[0]
    assert step.undecided.round == PILOT_ROUND and not step.final
    seconds = [type(c).from_dict({**c.to_dict(), "repeat": STAGE_TWO}) for c in (step.a.first, step.b.first)]
    again = settle.settle_plan(settle.extended(plan, seconds), undecided(answers)).steps[0]
    assert again.final and "final, its second stage is planned" in settle.step_line(again, (0, 0.0), (0, 0.0))


def test_json_numbers_hold_no_cells(tmp_path, capsys):
    results = write_hw5(tmp_path / "hw5", 1)
    code, out, _ = cli(capsys, "collect", "--results", results, "--json")
    answers = json.loads(out)["answers"]
    assert code == 0 and {a["question"] for a in answers} >= {"A.Q1", "A.Q4.2"}  # ratios and differences
    assert not [k for a in answers for k in a["numbers"] if "sides" in k or "cells" in k]


def test_settle_lines_fit_the_answers_dir_without_a_plan(tmp_path, capsys):
    results = write_hw5(tmp_path / "hw5", 1)
    (Path(results) / "plan.json").unlink()
    code, out, _ = cli(capsys, "collect", "--results", results)
    assert code == 0 and "undecided" not in out


def test_a_cut_list_hides_at_least_a_few_lines_and_says_where_the_rest_are(tmp_path):
    """TA items 39 ("... and 1 more"): one or two hidden comparisons are listed, not counted; a longer cut names
    the command that lists them all."""
    results = write_hw5(tmp_path / "hw5", 1)
    found, _, estimates = settle.plan_for(read_plan(results), answers_of(results))
    steps = len(found.steps)
    for hidden in (1, 2):
        out = settle.lines(found, estimates, steps - hidden)
        assert len(out) == 1 + steps and "more" not in out[-1], hidden
    out = settle.lines(found, estimates, steps - 3)
    assert len(out) == 1 + steps - 3 + 1 and out[-1] == "  ... and 3 more: `submit --settle --dry-run` lists them all"


def test_collect_on_a_partial_set_marks_the_provisional_answers(tmp_path, capsys):
    from orchestrator.commands.collect import TOOL_NOTES
    from orchestrator.plan.study import load_study
    from tests.factories import write_results

    results = write_results(tmp_path / "hw5", hw5_results(1)[:20], planned=load_study("hw5").cells, study="hw5")
    code, out, _ = cli(capsys, "collect", "--results", results)
    assert code == 0 and "provisional answers (from" not in out  # TA4 24: counted on the one screen
    assert TOOL_NOTES + " 9 answers are provisional (some of their cells have no result)" in out
    code, out, _ = cli(capsys, "collect", "--results", results, "--findings")
    assert code == 0
    assert "provisional answers (from some of their cells): A.Q1 (6 of 18 cells), A.Q2 (20 of 63 cells)" in out
    # TA3 28: the tool's lines are marked as its own, after the last answer, apart from the hand-in
    before, notes = out.split(TOOL_NOTES + " provisional answers")
    assert "A.Q7" in before and notes.startswith(" (from some of their cells)")
    assert " more;" not in out.split("provisional answers")[1].split("\n")[0]  # TA item 17: every question named
    assert "`status` says which are still to come" in out and "--retry-failed" not in out  # none failed
    # the study's own repeats are planned: nothing to add until they have run
    assert "the runs the rule asks for are planned already" in out and "pilot to 3 runs a side, planned already" in out


def test_a_speedup_prints_as_the_answer_gives_it_and_no_field_path(tmp_path, capsys):
    """TA: "A.Q2 speedups.0.verdict: dp-2g-b32-e2 vs single-1g-b32-e2 2.40x" was TN/T1 beside an answer giving the
    speedup T1/TN as 0.42x: the line prints T1/TN, names it in words, and holds no record field's path."""
    results = write_hw5(tmp_path / "hw5", 1)
    speedup = next(a for a in answers_of(results) if a.id == "A.Q2").record.speedups[0]
    code, out, _ = cli(capsys, "collect", "--results", results, "--findings")
    lines = [line for line in _lines(out) if line.startswith("  A.Q2,")]
    said = "\n".join(_lines(out))  # the details beneath the answers (--findings) have their own words
    assert code == 0 and lines and "speedups.0" not in said and "verdict:" not in said
    assert lines[0].startswith("  A.Q2, speedup T1/TN of ") and abs(speedup.verdict.ratio - 1) > 0.05
    assert f": {1 / speedup.verdict.ratio:.2f}x (no spread, 1+1 runs)" in lines[0]


def test_a_shared_configurations_runs_add_up_and_the_cap_is_explained(tmp_path):
    """TA: "second stage to 15 a side, +17 +17" (3 + 17 = 20: another comparison of the same configurations
    asked 20): the line gives each side's runs before and after, and why they pass this comparison's ask."""
    import dataclasses

    results = write_hw5(tmp_path / "hw5", 1)
    step = settle.settle_plan(read_plan(results), undecided(answers_of(results))).steps[0]
    step = dataclasses.replace(step, runs=15, a=dataclasses.replace(step.a, planned=3),
                               b=dataclasses.replace(step.b, planned=3))
    line = settle.step_line(step, (17, 0.1), (17, 0.1))
    assert "from 3 to 20 runs a side (this comparison asks 15; another comparison of the same configurations asks " \
           "more), about 0.20 GPU-h" in line
    capped = dataclasses.replace(step, runs=20, capped=True, undecided=dataclasses.replace(step.undecided, runs=33))
    assert "from 3 to 20 runs a side (capped by --max-repeats; the rule asks 33 runs a side to settle it)" in \
        settle.step_line(capped, (17, 0.1), (17, 0.1))


def test_cpu_runs_are_priced_in_cpu_hours_and_a_boundless_interval_is_said(tmp_path):
    """TA: "0.023 GPU-h" for a study that ran on a CPU, and "(0.00-46.13, 2+2 runs)" printed as if it bounded
    anything."""
    import dataclasses
    from types import SimpleNamespace as Ns

    assert settle._unit([Ns(id="A.Q2", record=Ns(cpu=True)), Ns(id="A.Q4.1", record=Ns(cpu=False))],
                        [Ns(question="A.Q2")]) == "CPU"
    assert settle._unit([Ns(id="A.Q2", record=Ns(cpu=False))], [Ns(question="A.Q2")]) == "GPU"
    results = write_hw5(tmp_path / "hw5", 1)
    step = settle.settle_plan(read_plan(results), undecided(answers_of(results))).steps[0]
    wide = dataclasses.replace(step.undecided.verdict, ratio=1.25, low=0.03, high=46.13, n_a=2, n_b=2)
    line = settle.step_line(dataclasses.replace(step, undecided=dataclasses.replace(step.undecided, verdict=wide)),
                            (1, 0.01), (1, 0.01), "CPU")
    assert "(too few runs to bound it, 2+2 runs)" in line and line.endswith("0.02 CPU-h") and "46.13" not in line


def test_low_items_max_repeats_in_ascii_digits_and_a_skipped_file_in_one_warning_line(tmp_path, capsys):
    """Issue 45, Low: Arabic-Indic digits passed --max-repeats; a FIFO named like a result came in
    Python's warnings format from `submit --settle`."""
    results = write_hw5(tmp_path / "hw5", 1)
    with pytest.raises(SystemExit) as refused:  # argparse's own exit
        cli(capsys, "submit", "--results", results, "--settle", "--dry-run", "--max-repeats", "\u0663")
    assert refused.value.code == 2 and "must be a whole number of runs >= 2" in capsys.readouterr().err
    fifo = results / "0123456789ab.json"
    os.mkfifo(fifo)
    code, _, err = cli(capsys, "submit", "--results", results, "--settle", "--dry-run")
    assert code == 0 and err == f"warning: result file {fifo} is not a regular file (a FIFO); skipped it: move it aside\n"


def test_cancel_with_nothing_to_cancel_says_so(tmp_path, capsys):
    """Issue 45, Low: it printed "cancelled 0 cell(s): ;"."""
    results = write_hw5(tmp_path / "hw5", 1)
    code, out, _ = cli(capsys, "cancel", "--results", results, "--all")
    assert code == 0 and out.startswith("cancelled nothing; ") and "had no live job" in out


def test_planning_again_keeps_the_settle_repeats(in_tmp, capsys):
    """Issue 45, Low: re-running `plan` dropped the settle repeats while Q1 still asked for them."""
    assert cli(capsys, "plan", "--study", TINY_STUDY)[0] == 0
    results = in_tmp / "runs" / "tiny"
    planned = read_plan(results)
    repeats = [dataclasses.replace(c, repeat=r) for c in planned.cells[:2] for r in (1, 2)]  # as --settle adds them
    install_plan(settle.extended(planned, repeats), TINY_STUDY.read_text(), {})
    assert cli(capsys, "plan", "--study", TINY_STUDY)[0] == 0
    assert read_plan(results).cell_ids == planned.cell_ids + tuple(c.cell_id for c in repeats)
    assert cli(capsys, "plan", "--study", TINY_STUDY)[0] == 0  # and once more: each kept once
    assert len(read_plan(results).cell_ids) == len(planned.cell_ids) + 4
