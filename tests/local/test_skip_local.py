"""The local executor runs only what this machine can: a cell needing more GPUs than it has is
skipped with why (status, collect), and the rest run."""
from __future__ import annotations

import json
import os

from orchestrator.cli import main
from tests.conftest import TESTS

STUDY = str(TESTS / "studies" / "tiny-local.toml")  # a 1-GPU cell and a 2-rank DDP cell


def one_gpu_machine(tmp_path, monkeypatch) -> None:
    """nvidia-smi here lists one GPU; torch still runs on the CPU."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'GPU 0: NVIDIA H200 (UUID: GPU-0)'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


def test_a_two_gpu_cell_is_skipped_on_a_one_gpu_machine_and_the_rest_run(in_tmp, monkeypatch, capsys):
    one_gpu_machine(in_tmp, monkeypatch)
    assert main(["plan", "--study", STUDY]) == 0
    capsys.readouterr()
    assert main(["submit", "--study", STUDY, "--executor", "local", "--wait", "--interval", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "local: submitted 1 cell(s)" in out and "skipped" in out and "needs 2 GPUs, this machine has 1" in out

    assert main(["status", "--study", STUDY, "--json"]) == 0
    cells = {c["label"]: c for c in json.loads(capsys.readouterr().out)["cells"]}
    assert cells["single-1g-b16-e2"]["state"] == "done"
    assert cells["ddp-2g-b16-e2"]["state"] == "skipped"
    assert cells["ddp-2g-b16-e2"]["detail"].startswith("needs 2 GPUs, this machine has 1; run it on SLURM")

    assert main(["collect", "--study", STUDY, "--json"]) == 0
    table1 = json.loads(capsys.readouterr().out)["table1"]
    assert {(r["engine"], r["status"]) for r in table1} == {("single", "ok"), ("ddp", "skipped")}

    registry = in_tmp / "runs/tiny-local/registry.jsonl"
    lines = registry.read_text()
    assert main(["submit", "--study", STUDY, "--executor", "local"]) == 0
    assert "submitted 0 cell(s)" in capsys.readouterr().out
    assert registry.read_text() == lines, "the same skip is recorded once"
