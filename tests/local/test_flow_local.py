"""The newcomer's path off-cluster: plan -> submit --wait (submitit's local executor) ->
status -> collect, and a second submit that submits nothing."""
from __future__ import annotations


from jobs.core.layout import result_files
from jobs.core.result import read_result
from orchestrator.cli import main
from tests.helpers import TINY_LOCAL as STUDY, cell_states, cli_json


def test_plan_submit_status_collect_locally(in_tmp, capsys):
    study = str(STUDY)
    assert main(["plan", "--study", study]) == 0
    assert (in_tmp / "runs/tiny-local/plan.json").is_file()
    assert sorted(p.name for p in (in_tmp / "runs/tiny-local/sbatch").iterdir()) == ["n1-g1-t1.sh", "n1-g2-t2.sh"]
    capsys.readouterr()

    assert main(["submit", "--study", study, "--executor", "local", "--wait", "--interval", "1"]) == 0
    assert "local: submitted 2 cell(s)" in capsys.readouterr().out

    cells = cell_states(capsys, study)
    assert [c["state"] for c in cells] == ["done", "done"]
    assert all(c["job_id"] for c in cells)

    collected = cli_json(capsys, "collect", "--study", study)
    table1 = collected["table1"]
    assert {(r["engine"], r["gpus"], r["status"]) for r in table1} == {("single", 1, "ok"), ("ddp", 2, "ok")}
    assert all(r["epoch_s"] > 0 for r in table1)
    tested = collected["test"]  # each run's test accuracy after its last epoch, on the synthetic set's 100
    assert [(r["gpus"], r["evaluated_images"]) for r in tested] == [(1, 100), (2, 100)]
    assert all(0 <= r["test_accuracy"] <= 1 and r["time_to_train_s"] > 0 for r in tested)
    tables_md = (in_tmp / "runs/tiny-local/tables.md").read_text()
    on_cpus = all(r["gpu_model"] == "cpu" for r in tested)  # then no GPU-hours: no spent table
    assert tables_md.count("| 1 GPU |") == (3 if on_cpus else 4)  # Table 1, test, overhead (, spent)
    assert ("GPU-h" in tables_md) != on_cpus
    total = collected["overhead"][-1]  # where the jobs' time went: the study's total, from every result's phases
    assert total["scope"] == "study total" and total["runs"] == 2 and 0 < total["epochs_s"] < total["job_s"]
    for path in result_files(in_tmp / "runs/tiny-local"):
        phases = read_result(path).phases
        assert phases is not None and phases.launch_s is not None, "the local queue says when it started the task"
        assert phases.start_s < 1.0, "forked warm: no interpreter start, no imports"

    lines = (in_tmp / "runs/tiny-local/registry.jsonl").read_text().count("\n")
    assert main(["submit", "--study", study, "--executor", "local"]) == 0
    assert "submitted 0 cell(s)" in capsys.readouterr().out
    assert (in_tmp / "runs/tiny-local/registry.jsonl").read_text().count("\n") == lines
