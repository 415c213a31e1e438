"""Cells run one after another in one process (CellsRun, a packed task): each gives the numbers it
gives alone, keeps its own result and failure, and a later cell pays no start or set-up."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from jobs.__main__ import free_port
from jobs.core.layout import cell_part_of_log, result_path
from jobs.core.result import read_result
from jobs.train.cell import Cell
from tests.helpers import TINY_JOB, run_job

PACK = """
import json, sys
from jobs.core.kinds import cell_from_dict
from orchestrator.slurm.submitit_adapter import CellsRun
cells = [cell_from_dict(c) for c in json.load(open(sys.argv[1]))]
try:
    print("statuses", CellsRun()(cells, sys.argv[2], sys.argv[3]))
except Exception as exc:
    print("task failed:", exc)
    sys.exit(1)
"""


def run_pack(tmp_path: Path, cells: list[Cell], env: dict | None = None) -> subprocess.CompletedProcess:
    """CellsRun over `cells` in a fresh process (a packed task's): results in tmp_path/results."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "cells.json").write_text(json.dumps([c.to_dict() for c in cells]))
    return subprocess.run([sys.executable, "-c", PACK, str(tmp_path / "cells.json"), str(tmp_path / "results"),
                           str(tmp_path / "data")], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **(env or {})))


def numbers(path: Path) -> list[tuple[float, ...]]:
    body = read_result(path).body
    return [(e.loss, e.accuracy, e.test_loss, e.test_accuracy) for e in body.epochs]


def test_a_cell_after_another_in_one_process_gives_its_numbers_alone_bit_for_bit(tmp_path):
    first = Cell(engine="single", batch_per_gpu=8, seed=3, **TINY_JOB)
    second = Cell(engine="single", batch_per_gpu=16, seed=5, **TINY_JOB)
    (tmp_path / "alone").mkdir()
    alone = run_job(tmp_path / "alone", second)
    assert alone.code == 0, alone.stderr
    pack = run_pack(tmp_path / "pack", [first, second])
    assert pack.returncode == 0, pack.stderr
    packed = result_path(tmp_path / "pack" / "results", second.cell_id)
    assert numbers(packed) == numbers(alone.path), "losses and accuracies, every epoch, bit for bit"

    phases = read_result(packed).phases
    assert phases.cells_before == 1 and phases.launch_s == 0.0
    assert phases.start_s + phases.setup_s < 1.0, phases
    assert read_result(result_path(tmp_path / "pack" / "results", first.cell_id)).phases.cells_before == 0
    assert read_result(alone.path).phases.cells_before == 0


def test_a_failed_cell_keeps_its_failure_and_the_next_cell_runs(tmp_path):
    missing = Cell(engine="single", batch_per_gpu=8, model="tiny", dataset="cifar10", train_images=48,
                   loader_workers=1, epochs=2)  # no CIFAR-10 under the data dir: fails in set-up
    good = Cell(engine="single", batch_per_gpu=8, **TINY_JOB)
    pack = run_pack(tmp_path, [missing, good])
    assert pack.returncode == 1 and "task failed" in pack.stdout, "the task ends failed"
    results = tmp_path / "results"
    failed = read_result(result_path(results, missing.cell_id))
    assert failed.status == "failed" and "CIFAR-10 not found" in failed.error
    assert read_result(result_path(results, good.cell_id)).status == "ok"
    assert "epoch 1/2" in cell_part_of_log(pack.stdout, good.cell_id)
    assert "CIFAR-10 not found" in cell_part_of_log(pack.stdout, missing.cell_id)
    assert "epoch" not in cell_part_of_log(pack.stdout, missing.cell_id)


def test_a_rerun_pack_skips_the_cells_with_a_good_result(tmp_path):
    cells = [Cell(engine="single", batch_per_gpu=b, **TINY_JOB) for b in (8, 16)]
    assert run_pack(tmp_path, cells[:1]).returncode == 0
    done = result_path(tmp_path / "results", cells[0].cell_id).read_bytes()
    pack = run_pack(tmp_path, cells)
    assert pack.returncode == 0, pack.stderr
    assert result_path(tmp_path / "results", cells[0].cell_id).read_bytes() == done, "a good result is kept"
    assert "epoch" not in cell_part_of_log(pack.stdout, cells[0].cell_id)
    assert read_result(result_path(tmp_path / "results", cells[1].cell_id)).status == "ok"


def test_ddp_cells_in_one_process_group_give_their_numbers_alone(tmp_path):
    """Two 2-rank DDP cells in each rank's one process: the second joins the group the first made
    (same world) and trains to the same numbers as alone."""
    first = Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=8, seed=1, **TINY_JOB)
    second = Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=8, seed=2, **TINY_JOB)
    (tmp_path / "alone").mkdir()
    alone = run_job(tmp_path / "alone", second)
    assert alone.code == 0, alone.stderr
    (tmp_path / "pack").mkdir()
    (tmp_path / "pack" / "cells.json").write_text(json.dumps([first.to_dict(), second.to_dict()]))
    port = str(free_port())
    ranks = [subprocess.Popen(
        [sys.executable, "-c", PACK, str(tmp_path / "pack" / "cells.json"), str(tmp_path / "pack" / "results"),
         str(tmp_path / "pack" / "data")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2",
                 MASTER_ADDR="127.0.0.1", MASTER_PORT=port)) for r in range(2)]
    outputs = [p.communicate(timeout=300) for p in ranks]
    assert [p.returncode for p in ranks] == [0, 0], outputs
    packed = result_path(tmp_path / "pack" / "results", second.cell_id)
    assert numbers(packed) == numbers(alone.path)
    phases = read_result(packed).phases
    assert phases.cells_before == 1 and phases.start_s + phases.setup_s < 1.0, phases


def test_dynamo_is_reset_between_cells_only_after_a_cell_that_compiled(monkeypatch):
    """Its reset imports inductor: 5.5 s of the second faithful cell's set-up on an H100 (no cell had
    compiled anything); after a fast cell's torch.compile the caches must still be cleared."""
    import torch._dynamo

    from jobs.runtime import reuse

    resets: list[int] = []
    monkeypatch.setattr(torch._dynamo, "reset", lambda: resets.append(1))
    monkeypatch.setattr(reuse, "_kept", reuse._Kept(cells=1, ended_at=0.0))
    reuse.cell_started()
    assert resets == [], "a faithful cell compiled nothing"
    reuse.used_compile()
    reuse.cell_started()
    reuse.cell_started()
    assert resets == [1], "reset once, after the cell that compiled"
