"""On the real local SLURM: `submit --pack N` runs N cells one after another in each array task;
each cell keeps its own result, state, job record and log part, and a packed task cancelled half
way is rerun for its cells without a result only."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from jobs.core.layout import result_path
from jobs.core.result import read_result
from orchestrator.cli import main
from orchestrator.plan.plan import read_plan
from results_format import registry
from tests.helpers import cell_states, cli, tiny_slurm_study, write_study

pytestmark = pytest.mark.slurm



def packed_study(where: Path, name: str, cells: int, images: int = 48, epochs: int = 2) -> str:
    text = tiny_slurm_study(name, grid=f"seed = [{', '.join(map(str, range(cells)))}]", train_images=images,
                            epochs=epochs, batch_per_gpu=16)
    study = str(write_study(where, text, name))
    assert main(["plan", "--study", study]) == 0
    return study


def test_a_packed_task_runs_its_cells_each_with_its_own_result_state_and_log(slurm_cluster, in_tmp, capsys):
    study = packed_study(in_tmp, "packed", 4)
    code, out, err = cli(capsys, "submit", "--study", study, "--executor", "slurm", "--pack", "3", "--wait",
                         "--interval", "1")
    assert code == 0, err
    assert "submitted 4 cell(s) in 1 sbatch call(s), up to 3 a task" in out

    cells = cell_states(capsys, study)
    assert [c["state"] for c in cells] == ["done"] * 4
    assert len({c["job_id"] for c in cells[:3]}) == 1 and cells[3]["job_id"] != cells[0]["job_id"], \
        "three cells in task 0, the fourth in task 1"
    results = in_tmp / "runs" / "packed"
    phases = [read_result(result_path(results, c["cell_id"])).phases for c in cells]
    assert [p.cells_before for p in phases] == [0, 1, 2, 0]
    assert all(p.start_s + p.setup_s < 1.0 for p in phases[1:3]), "set-up paid once a task"

    first, second = cells[0]["cell_id"], cells[1]["cell_id"]
    code, out, _ = cli(capsys, "logs", second, "--study", study, "-n", "0")
    assert code == 0 and f"[{second}] epoch 2/2" in out and f"[{first}]" not in out, out


def test_a_packed_task_cancelled_half_way_reruns_only_its_cells_without_a_result(slurm_cluster, in_tmp, capsys):
    study = packed_study(in_tmp, "cut", 3, images=4000, epochs=12)  # a later cell lasts seconds: set-up is reused
    code, _, err = cli(capsys, "submit", "--study", study, "--executor", "slurm", "--pack", "3")
    assert code == 0, err
    results = in_tmp / "runs" / "cut"
    subs = registry.load(results).submissions
    assert len({s.job_id for s in subs}) == 1, "one task for the three cells"
    first = result_path(results, subs[0].cell_id)
    deadline = time.monotonic() + 300
    while not first.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    subprocess.run(["scancel", subs[0].job_id], check=True)
    assert first.exists(), "the first cell ended within 5 minutes"
    kept = first.read_bytes()
    deadline = time.monotonic() + 60
    while {c["state"] for c in cell_states(capsys, study)[1:]} & {"pending", "running"}:
        assert time.monotonic() < deadline, "the cancelled task never ended"
        time.sleep(1)
    states = [c["state"] for c in cell_states(capsys, study)]
    assert states[0] == "done" and states[-1] == "cancelled", states
    left = sum(state != "done" for state in states)

    code, out, err = cli(capsys, "submit", "--study", study, "--retry-failed", "--pack", "3", "--wait",
                         "--interval", "1")
    assert code == 0, err
    assert f"submitted {left} cell(s)" in out
    assert [c["state"] for c in cell_states(capsys, study)] == ["done"] * 3
    assert first.read_bytes() == kept, "the cell with a result was not run again"
    assert [s.cell_id for s in registry.load(results).submissions].count(subs[0].cell_id) == 1


def test_a_packed_task_requeued_resumes_at_its_first_cell_without_a_result(slurm_cluster, in_tmp, capsys):
    """SIGUSR2, as before the time limit or a preemption: submitit requeues the task, which skips
    its first cell (it has its result) and resumes the second from its last epoch."""
    study = packed_study(in_tmp, "requeued", 2, images=2000, epochs=6)
    code, _, err = cli(capsys, "submit", "--study", study, "--executor", "slurm", "--pack", "2")
    assert code == 0, err
    results = in_tmp / "runs" / "requeued"
    first, second = registry.load(results).submissions
    log = Path(read_plan(results).resolve(first.log_out))
    deadline = time.monotonic() + 300
    while f"[{second.cell_id}] epoch 2/6" not in (log.read_text(errors="replace") if log.exists() else ""):
        assert time.monotonic() < deadline, "the second cell never reached epoch 2"
        time.sleep(0.2)
    kept = result_path(results, first.cell_id).read_bytes()
    subprocess.run(["scancel", "--signal=USR2", first.job_id], check=True)

    code, _, err = cli(capsys, "submit", "--study", study, "--wait", "--interval", "1")
    assert code == 0, err
    assert [c["state"] for c in cell_states(capsys, study)] == ["done"] * 2
    assert result_path(results, first.cell_id).read_bytes() == kept, "the first cell was not run again"
    epochs = read_result(result_path(results, second.cell_id)).body.epochs
    assert [e.epoch for e in epochs] == list(range(1, 7)), "each epoch once: resumed, not restarted"
    text = log.read_text(errors="replace")
    assert "resumed from" in text and text.count(f"[{first.cell_id}] epoch 6/6") == 1
