"""GPU-hours: what each attempt spent (orchestrator.budget.spent), the estimate learnt from finished
cells (orchestrator.budget.estimate), and the budget's arithmetic and refusal (orchestrator.budget.budget)."""
from __future__ import annotations

import dataclasses

import pytest

from jobs.core.result import Result, write_result
from jobs.train.cell import Cell
from jobs.train.result import EpochStats, TrainBody
from orchestrator.budget import budget, estimate, spent
from orchestrator.cli import main
from orchestrator.plan.cluster import ClusterSpec
from orchestrator.errors import BudgetError, StudyError, UserError
from orchestrator.budget.estimate import Estimate, Pace
from orchestrator.plan.plan import build_plan
from results_format.registry import Submission
from orchestrator.slurm.slurm_client import JobState, allocated_gpus, sacct_rows
from orchestrator.watch.seen import Accounts, Seen
from results_format.states import CellState
from orchestrator.plan.study import Study, parse_study

ONE = Cell(engine="single", batch_per_gpu=32, train_images=1000, epochs=2)
TWO = Cell(engine="ddp", batch_per_gpu=32, gpus_per_node=2, train_images=1000, epochs=2)
TWO_B = Cell(engine="ddp", batch_per_gpu=32, gpus_per_node=2, train_images=1000, epochs=2, seed=1)
T0 = "2026-01-01T10:00:00+00:00"


def plan_of(tmp_path, *cells):
    return build_plan(Study("s", "", "data", ClusterSpec(), tuple(cells), ""), tmp_path, tmp_path)


def sub(cell, job_id, at=T0, executor="slurm") -> Submission:
    return Submission(cell.cell_id, executor, job_id, "n1-g1-t1", at)


def ok(cell, started=T0, ended="2026-01-01T10:01:40+00:00", epoch_s=(20.0, 20.0)) -> Result:
    """An ok result whose epochs each saw the cell's images in epoch_s seconds."""
    epochs = [EpochStats(i + 1, s, s, cell.train_images, cell.train_images / s, 1.0, 0.5, 0.1, 0.0, 0.0, s)
              for i, s in enumerate(epoch_s)]
    return Result(cell.cell_id, cell.to_dict(), "ok", {"started_at": started, "ended_at": ended},
                  body=TrainBody(epochs=epochs))


# --- sacct's AllocTRES -----------------------------------------------------------------------

@pytest.mark.parametrize("tres, gpus", [
    ("billing=2,cpu=2,gres/gpu=2,mem=8G,node=1", 2),
    ("billing=8,cpu=8,gres/gpu:a100=4,gres/gpu:v100=2,node=2", 6),  # typed counts only: their sum
    ("gres/gpu=4,gres/gpu:a100=4", 4),  # the plain count wins: typed ones repeat it
    ("billing=1,cpu=1,node=1", None),  # GPUs not tracked (AccountingStorageTRES without gres/gpu)
    ("", None),
])
def test_allocated_gpus_from_alloc_tres(tres, gpus):
    assert allocated_gpus(tres) == gpus


def test_sacct_rows_carry_each_run_of_a_requeued_job_with_its_gpus():
    text = ("67_0|REQUEUED|3|n1|0:0|billing=1,cpu=1,gres/gpu=1,node=1|long-n1-g1-t1-ab\n"
            "67_0|COMPLETED|13|n1|0:0|billing=1,cpu=1,gres/gpu=1,node=1|long-n1-g1-t1-ab\n")
    rows = sacct_rows(text)
    assert [(r.job_id, r.state, r.elapsed_s, r.gpus, r.name) for r in rows] == [
        ("67_0", "REQUEUED", 3.0, 1, "long-n1-g1-t1-ab"), ("67_0", "COMPLETED", 13.0, 1, "long-n1-g1-t1-ab")]


# --- spent ----------------------------------------------------------------------------------

def test_every_run_of_every_attempt_is_charged_gpus_times_elapsed(tmp_path):
    """A failed first attempt and its retry; the retry was requeued once (two sacct rows)."""
    plan = plan_of(tmp_path, TWO)
    subs = [sub(TWO, "5_0"), sub(TWO, "9_0", at="2026-01-01T11:00:00+00:00")]
    runs = {"5_0": (JobState("5_0", "FAILED", 30.0, gpus=2),),
            "9_0": (JobState("9_0", "REQUEUED", 100.0, gpus=2), JobState("9_0", "COMPLETED", 260.0, gpus=2))}
    charges = spent.charges(plan, subs, {}, runs, {})
    assert [(c.job_id, c.state, c.gpus, c.elapsed_s, c.source) for c in charges] == [
        ("5_0", "FAILED", 2, 30.0, "sacct"), ("9_0", "REQUEUED", 2, 100.0, "sacct"),
        ("9_0", "COMPLETED", 2, 260.0, "sacct")]
    assert sum(c.gpu_hours for c in charges) == pytest.approx(2 * (30 + 100 + 260) / 3600)
    text = budget.spent_text(budget.Ledger(0, tuple(charges), {}))
    assert text == "0.22 GPU-h spent over 2 job(s) in 3 run(s) (3 from sacct)"


def test_gpus_are_the_request_where_sacct_does_not_track_them(tmp_path):
    plan = plan_of(tmp_path, TWO)
    charges = spent.charges(plan, [sub(TWO, "5_0")], {}, {"5_0": (JobState("5_0", "TIMEOUT", 600.0),)}, {})
    assert (charges[0].gpus, charges[0].gpu_hours) == (2, pytest.approx(2 * 600 / 3600))


def test_a_running_job_is_charged_what_squeue_says_so_far(tmp_path):
    plan = plan_of(tmp_path, ONE)
    jobs = {"5_0": JobState("5_0", "RUNNING", 90.0, "n1")}
    [charge] = spent.charges(plan, [sub(ONE, "5_0")], {}, {}, jobs)
    assert (charge.source, charge.elapsed_s, charge.live) == ("squeue", 90.0, True)


def test_without_accounting_the_result_clock_charges_its_own_attempt_only(tmp_path):
    """The first attempt left no result (killed); the retry's result started after it was submitted."""
    plan = plan_of(tmp_path, ONE)
    first, retry = sub(ONE, "5_0"), sub(ONE, "9_0", at="2026-01-01T11:00:00+00:00")
    result = ok(ONE, started="2026-01-01T11:02:00+00:00", ended="2026-01-01T11:04:30+00:00")
    charges = spent.charges(plan, [first, retry], {ONE.cell_id: result}, {}, {})
    assert [(c.job_id, c.source, c.elapsed_s) for c in charges] == [("5_0", "limit", 30 * 60.0),
                                                                    ("9_0", "result", 150.0)]
    assert budget.Ledger(0, tuple(charges), {}).spent == pytest.approx((1800 + 150) / 3600)


# --- time that cannot be read: charged by the time limit, never 0 ----------------------------------

def test_an_attempt_whose_time_nothing_recorded_is_charged_its_time_limit(tmp_path):
    """SLURM forgot the job (MinJobAge), no accounting, no result: its whole time limit, the most
    it could have held (the submit's own --time-min where the registry recorded it)."""
    plan = plan_of(tmp_path, TWO)  # ClusterSpec's time_min: 30
    longer = Submission(TWO.cell_id, "slurm", "9_0", "n1-g2-t2", T0, time_min=120)
    charges = spent.charges(plan, [sub(TWO, "5_0"), longer], {}, {}, {})
    assert [(c.source, c.elapsed_s, c.gpus) for c in charges] == [("limit", 1800.0, 2), ("limit", 7200.0, 2)]
    assert budget.Ledger(0, tuple(charges), {}).spent == pytest.approx(2 * (1800 + 7200) / 3600)
    assert "2 charged their time limit (elapsed unrecorded)" in budget.spent_text(budget.Ledger(0, tuple(charges), {}))


def test_a_result_from_a_node_whose_clock_is_behind_is_no_reason_to_charge_nothing(tmp_path):
    plan = plan_of(tmp_path, ONE)
    behind = ok(ONE, started="2026-01-01T09:50:00+00:00", ended="2026-01-01T09:51:40+00:00")  # 10 min before T0
    [charge] = spent.charges(plan, [sub(ONE, "5_0")], {ONE.cell_id: behind}, {}, {})
    assert (charge.source, charge.elapsed_s) == ("limit", 1800.0)


def test_retry_failed_is_refused_once_forgotten_attempts_are_charged(tmp_path):
    """Three attempts SLURM forgot, on 2 GPUs with 30 min each: 3 GPU-h spent of a 2.5 GPU-h budget."""
    plan = plan_of(tmp_path, TWO)
    subs = [sub(TWO, f"{job}_0") for job in (5, 6, 7)]
    seen = Seen(submissions=tuple(subs))
    ledger = budget.build_ledger(plan, seen, {TWO.cell_id: CellState.FAILED}, 2.5)
    assert ledger.spent == pytest.approx(3.0)
    with pytest.raises(BudgetError, match="failed cell.s. to retry"):
        budget.within(ledger, [TWO.cell_id], within_budget=False, retry=True)


# --- a local job's end: the result's own clock, else its logs' times within bounds -------------------

def test_an_ended_local_job_with_a_result_is_charged_the_results_clock_not_its_logs_times(tmp_path):
    """cp -r gave the logs new times: the process's life from them says 4000 s, the run took 100 s."""
    plan = plan_of(tmp_path, ONE)
    jobs = {"4242": JobState("4242", "ENDED", 4000.0, "localhost")}
    [charge] = spent.charges(plan, [sub(ONE, "4242", executor="local")], {ONE.cell_id: ok(ONE)}, {}, jobs)
    assert (charge.source, charge.elapsed_s) == ("result", 100.0)


def test_a_local_jobs_time_from_its_logs_is_bounded_by_now_and_its_time_limit(tmp_path):
    import datetime as dt
    import os

    from orchestrator.local.processes import local_snapshot

    log = tmp_path / "job.out"
    log.write_text("")
    os.utime(log, (4e9, 4e9))  # a log written in 2096
    now = dt.datetime(2026, 1, 1, 10, 5, tzinfo=dt.UTC)
    started = Submission(ONE.cell_id, "local", "999999999", "n1-g1-t1", T0, log_out=str(log))
    job = local_snapshot([started], now)["999999999"]
    assert job.elapsed_s == 300.0  # T0 to now: not to 2096
    plan = plan_of(tmp_path, ONE)
    [charge] = spent.charges(plan, [started], {}, {}, {"999999999": JobState("999999999", "ENDED", 10**7)})
    assert (charge.source, charge.elapsed_s) == ("process", 1800.0)  # at most its 30 min limit


def test_local_attempts_are_charged_their_process_life_and_counted_once(tmp_path):
    plan = plan_of(tmp_path, ONE)
    queued = Submission(ONE.cell_id, "local", None, "n1-g1-t1", T0, queue_pid=7)  # waiting: no job yet
    started = sub(ONE, "4242", executor="local")
    jobs = {"4242": JobState("4242", "ENDED", 42.0, "localhost")}
    charges = spent.charges(plan, [queued, started, started], {}, {}, jobs)
    assert [(c.job_id, c.source, c.elapsed_s) for c in charges] == [("4242", "process", 42.0)]


def test_a_cell_no_longer_planned_is_charged_the_gpus_its_array_names(tmp_path):
    plan = plan_of(tmp_path, ONE)
    gone = Submission("0123456789ab", "slurm", "5_3", "n2-g4-t4", T0)
    [charge] = spent.charges(plan, [gone], {}, {"5_3": (JobState("5_3", "COMPLETED", 36.0),)}, {})
    assert charge.gpus == 8


def test_accounts_stop_asking_about_a_job_once_its_last_run_ended():
    accounts = Accounts()
    subs = [sub(ONE, "5_0"), sub(TWO, "5_1")]
    accounts.record([JobState("5_0", "REQUEUED", 3.0), JobState("5_0", "COMPLETED", 9.0),
                     JobState("5_1", "REQUEUED", 3.0)])
    assert accounts.wanted(subs) == {"5_1": ""}  # 5_0 is settled; 5_1 runs again


# --- estimate -------------------------------------------------------------------------------

def test_measured_pace_by_hand():
    """2 epochs of 1000 images in 20 s each on 2 GPUs: 2000 / 40 / 2 = 25 images/s per GPU;
    the job held its GPUs 100 s: 100 - 40 = 60 s of overhead."""
    pace = estimate.measured_pace(TWO, ok(TWO), 100.0, estimate.profile_pace(ClusterSpec()))
    assert (pace.images_per_s_per_gpu, pace.overhead_s, pace.measured) == (25.0, 60.0, True)
    # the same shape with 4 epochs: 2 x (4 x 1000 / (25 x 2) + 60) / 3600 = 2 x 140 / 3600
    four = Cell(engine="ddp", batch_per_gpu=32, gpus_per_node=2, train_images=1000, epochs=4, timed_epoch=2)
    assert estimate.gpu_hours(four, pace) == pytest.approx(280 / 3600)


def test_cells_of_a_measured_shape_learn_and_the_others_keep_the_profile():
    profile = estimate.profile_pace(ClusterSpec(images_per_s_per_gpu=5000.0))
    held = {TWO.cell_id: 100.0}
    cells = {c.cell_id: c for c in (ONE, TWO, TWO_B)}
    paces = estimate.learn(cells, {TWO.cell_id: ok(TWO)}, held, profile)
    found = estimate.estimates(cells, paces, profile, table={})  # no shape the repo measured
    assert found[TWO_B.cell_id] == Estimate(pytest.approx(2 * (2 * 1000 / (25 * 2) + 60) / 3600), estimate.MEASURED)
    assert found[ONE.cell_id] == Estimate(pytest.approx((2 * 1000 / 5000 + 60) / 3600), estimate.PROFILE)


def test_a_shape_the_repo_measured_takes_its_table_pace_unless_measured_here():
    """The table's 2,500 images/s per GPU for ONE's shape: (2 x 1000 / 2500 + 60) / 3600 GPU-h; a pace
    measured here (TWO's) wins over the table's for its shape."""
    profile = estimate.profile_pace(ClusterSpec(images_per_s_per_gpu=8000.0))
    table = {estimate.shape_key(c): estimate.Pace(2500.0, 60.0, 0, estimate.TABLE, "H100") for c in (ONE, TWO)}
    cells = {c.cell_id: c for c in (ONE, TWO_B)}
    paces = estimate.learn(cells | {TWO.cell_id: TWO}, {TWO.cell_id: ok(TWO)}, {TWO.cell_id: 100.0}, profile)
    found = estimate.estimates(cells, paces, profile, table)
    assert found[ONE.cell_id] == Estimate(pytest.approx((2 * 1000 / 2500 + 60) / 3600), estimate.TABLE, "H100")
    assert found[TWO_B.cell_id].source == estimate.MEASURED
    assert estimate.estimates_text(found, 8000.0) == ("est. GPU-h: 1 cell(s) from the measured pace of finished cells of "
                                                      "the same shape here, 1 cell(s) from the paces the repo measured "
                                                      "on H100 (orchestrator/budget/paces.csv)")


def test_the_repos_table_is_keyed_as_cells_are_and_holds_resnet18_batch_32_on_an_h100():
    """paces.csv (benchmarks/paces.py): ResNet-18 at batch 32 on one H100 trains about 2,700 images/s,
    not the 8,000 the greene profile assumes."""
    cell = Cell(model="resnet18", engine="single", batch_per_gpu=32)
    pace = estimate.repo_paces()[estimate.shape_key(cell)]
    assert 2000 < pace.images_per_s_per_gpu < 3500 and pace.gpu_model == "NVIDIA H100 80GB HBM3"
    assert estimate.shape_key(Cell(model="tiny", engine="single", batch_per_gpu=32)) not in estimate.repo_paces()


def test_the_median_of_a_shapes_finished_cells_and_failed_cells_teach_nothing():
    profile = estimate.profile_pace(ClusterSpec())
    results = {TWO.cell_id: ok(TWO, epoch_s=(10.0, 10.0)), TWO_B.cell_id: ok(TWO_B, epoch_s=(40.0, 40.0))}
    [pace] = estimate.learn({c.cell_id: c for c in (TWO, TWO_B)}, results, {}, profile).values()
    assert pace == Pace(pytest.approx((50.0 + 12.5) / 2), profile.overhead_s, 2, estimate.MEASURED)
    failed = Result(ONE.cell_id, ONE.to_dict(), "failed", {})
    assert estimate.learn({ONE.cell_id: ONE}, {ONE.cell_id: failed}, {ONE.cell_id: 50.0}, profile) == {}


# --- budget ---------------------------------------------------------------------------------

ESTIMATES = {c: Estimate(h, estimate.PROFILE) for c, h in [("a", 0.4), ("b", 0.4), ("c", 0.1), ("d", 0.4)]}


def test_fitting_takes_the_first_cells_in_order_that_fit_together():
    assert budget.fitting(["a", "b", "c", "d"], ESTIMATES, 0.85) == ["a", "b"]  # c would fit alone, after b: no
    assert budget.fitting(["a", "b"], ESTIMATES, 0.3) == []


def ledger(budget_h: float, spent_h: float = 0.0, committed=None) -> budget.Ledger:
    charge = spent.Charge("x", "1_0", 1, spent_h * 3600, "sacct", "FAILED")
    return budget.Ledger(budget_h, (charge,), ESTIMATES, committed=committed or {})


def test_a_submit_over_budget_is_refused_naming_how_many_cells_fit():
    with pytest.raises(BudgetError) as refused:
        budget.within(ledger(1.0, spent_h=0.1, committed={"y": 0.05}), ["a", "b", "c", "d"], within_budget=False)
    message = str(refused.value)
    assert "the 4 cell(s) due need about 1.30 GPU-h" in message and "spent 0.10 of its 1 GPU-h budget" in message
    assert "0.05 more is committed" in message and "leaving 0.85: 2 of them fit" in message
    assert "--within-budget" in message


def test_within_budget_queues_the_fitting_cells_and_no_budget_queues_all():
    assert budget.within(ledger(1.0, spent_h=0.1, committed={"y": 0.05}), ["a", "b", "c", "d"], True) == ["a", "b"]
    assert budget.within(ledger(0.0, spent_h=5.0), ["a", "b"], False) == ["a", "b"]
    assert budget.within(ledger(2.0), ["a", "b", "c", "d"], False) == ["a", "b", "c", "d"]
    with pytest.raises(UserError, match="--within-budget needs a budget"):
        budget.within(ledger(0.0), ["a"], True)


def test_a_retry_is_charged_against_the_same_budget():
    with pytest.raises(BudgetError, match=r"the 1 failed cell\(s\) to retry need about 0.40 GPU-h.*spent 0.80"):
        budget.within(ledger(1.0, spent_h=0.8), ["a"], within_budget=False, retry=True)


def test_the_ledger_commits_what_live_cells_still_need(tmp_path):
    plan = plan_of(tmp_path, ONE, TWO)
    seen = Seen((sub(ONE, "5_0"),), {}, {"5_0": JobState("5_0", "RUNNING", 30.0)})
    states = {ONE.cell_id: CellState.RUNNING, TWO.cell_id: CellState.NOT_SUBMITTED}
    ledger = budget.build_ledger(plan, seen, states, 1.0)
    one = ledger.estimates[ONE.cell_id].gpu_hours
    assert ledger.spent == pytest.approx(30 / 3600) and ledger.running == pytest.approx(30 / 3600)
    assert ledger.committed == {ONE.cell_id: pytest.approx(one - 30 / 3600)}
    assert ledger.left == pytest.approx(1.0 - one)


def test_a_study_run_here_on_cpus_speaks_of_cpu_hours(tmp_path, monkeypatch):
    """The quick study on a laptop: each "GPU" a process, so status and submit say CPU-h; a study sent to
    SLURM, or a machine with a GPU, keeps GPU-h."""
    plan = plan_of(tmp_path, ONE)
    states = {ONE.cell_id: CellState.RUNNING}
    here = Seen((sub(ONE, "999", executor="local"),), {}, {"999": JobState("999", "RUNNING", 30.0)})
    monkeypatch.setattr(budget, "gpus_here", lambda: 0)
    assert budget.runs_on_cpus(here) and not budget.runs_on_cpus(Seen((sub(ONE, "5_0"),), {}, {}))
    cpu = dataclasses.replace(budget.build_ledger(plan, here, states, 1.0), unit="CPU")
    lines = budget.status_lines(cpu) + [budget.submit_text(cpu, [])]
    assert lines[0].startswith("CPU-hours: ") and "CPU-h spent" in lines[0]
    assert not any("GPU" in line for line in lines), lines
    monkeypatch.setattr(budget, "gpus_here", lambda: 1)
    assert not budget.runs_on_cpus(here)


def test_a_first_local_submit_on_a_machine_with_sbatch_but_no_gpu_speaks_of_cpu_hours(monkeypatch):
    """`submit --executor local` of a fresh study where sbatch is on the PATH said "GPU-hours ... estimated"."""
    monkeypatch.setattr(budget, "gpus_here", lambda: 0)
    monkeypatch.setattr(budget.shutil, "which", lambda name: "/usr/bin/sbatch")
    assert not budget.runs_on_cpus(Seen())
    assert budget.runs_on_cpus(Seen(), "local") and not budget.runs_on_cpus(Seen(), "slurm")


def test_results_made_on_gpus_keep_gpu_hours_read_on_a_machine_without_one(monkeypatch):
    """Run 11's set from 2 H200s, copied to a laptop: status said "CPU-hours: 0.15 CPU-h spent"."""
    from orchestrator.watch.result_cache import ResultDigest
    from jobs.core.result import Status

    monkeypatch.setattr(budget, "gpus_here", lambda: 0)
    done = {ONE.cell_id: ResultDigest(Status.OK, device="cuda")}
    assert not budget.runs_on_cpus(Seen((sub(ONE, "999", executor="local"),), done, {}))
    here = {ONE.cell_id: ResultDigest(Status.OK, device="cpu")}
    assert budget.runs_on_cpus(Seen((sub(ONE, "999", executor="local"),), here, {}))


# --- where the budget is set ----------------------------------------------------------------

def test_budget_gpu_hours_is_a_cluster_key_of_the_study_site_file_and_profile(tmp_path, monkeypatch):
    site = tmp_path / "profiles"
    site.mkdir()
    (site / "greene.toml").write_text("[cluster]\nbudget_gpu_hours = 200\n")
    monkeypatch.setenv("ORCHESTRATOR_PROFILES", str(site))
    grid = [{"engine": "single", "batch_per_gpu": 32}]
    assert parse_study({"grid": grid}).cluster.budget_gpu_hours == 0  # no cap by default
    assert parse_study({"profile": "greene", "grid": grid}).cluster.budget_gpu_hours == 200
    own = parse_study({"profile": "greene", "cluster": {"budget_gpu_hours": 12.5}, "grid": grid})
    assert own.cluster.budget_gpu_hours == 12.5
    with pytest.raises(StudyError, match="budget_gpu_hours must be >= 0"):
        parse_study({"cluster": {"budget_gpu_hours": -1}, "grid": grid})
    with pytest.raises(StudyError, match="unknown key.*budget_gpu_hour'"):
        parse_study({"cluster": {"budget_gpu_hour": 5}, "grid": grid})


def test_plan_learns_from_results_already_in_the_results_dir(tmp_path):
    """Planned again after cell TWO ran: TWO_B, of its shape, is estimated from it; ONE (ResNet-18, batch 32
    on 1 GPU) from the repo's table of paces."""
    plan = plan_of(tmp_path, ONE, TWO, TWO_B)
    write_result(tmp_path, ok(TWO))  # 100 s on its own clock: 60 s beside its 40 s of epochs
    found = budget.plan_estimates(plan)
    assert (found[TWO_B.cell_id].measured, found[ONE.cell_id].measured) == (True, False)
    assert found[TWO_B.cell_id].gpu_hours == pytest.approx(2 * (2 * 1000 / (25 * 2) + 60) / 3600)
    text = estimate.estimates_text(found, 5000.0)
    assert "2 cell(s) from the measured pace" in text and "1 cell(s) from the paces the repo measured on NVIDIA H100" in text


@pytest.mark.parametrize("value", ["0", "-3", "nan", "lots"])
def test_a_budget_flag_that_is_no_positive_number_is_refused(value, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["submit", "--budget-gpu-hours", value])
    assert exited.value.code == 2 and "--budget-gpu-hours: must be a number of GPU-hours > 0" in capsys.readouterr().err
