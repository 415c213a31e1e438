"""The local executor runs only what this machine can: a cell needing more GPUs than it has is
skipped with why (status, collect), and the rest run."""
from __future__ import annotations

from orchestrator.cli import main
from tests.helpers import TINY_LOCAL, cell_states, cli_json, one_gpu_machine

STUDY = str(TINY_LOCAL)  # a 1-GPU cell and a 2-rank DDP cell


def test_a_two_gpu_cell_is_skipped_on_a_one_gpu_machine_and_the_rest_run(in_tmp, monkeypatch, capsys):
    one_gpu_machine(in_tmp, monkeypatch)
    assert main(["plan", "--study", STUDY]) == 0
    capsys.readouterr()
    assert main(["submit", "--study", STUDY, "--executor", "local", "--wait", "--interval", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "local: submitted 1 cell(s)" in out and "skipped" in out and "needs 2 GPUs, this machine has 1" in out

    cells = {c["label"]: c for c in cell_states(capsys, STUDY)}
    assert cells["single-1g-b16-e2"]["state"] == "done"
    assert cells["ddp-2g-b16-e2"]["state"] == "skipped"
    assert cells["ddp-2g-b16-e2"]["detail"].startswith("needs 2 GPUs, this machine has 1; run it on SLURM")

    table1 = cli_json(capsys, "collect", "--study", STUDY)["table1"]
    assert {(r["engine"], r["status"]) for r in table1} == {("single", "ok"), ("ddp", "skipped")}

    registry = in_tmp / "runs/tiny-local/registry.jsonl"
    lines = registry.read_text()
    assert main(["submit", "--study", STUDY, "--executor", "local"]) == 0
    assert "submitted 0 cell(s)" in capsys.readouterr().out
    assert registry.read_text() == lines, "the same skip is recorded once"
