"""orchestrator.slurm.sbatch: the sbatch text of one array, against a golden file and by its options.

To accept a deliberate change of the template: UPDATE_GOLDEN=1 python -m pytest tests/unit/test_sbatch.py,
then read the diff of tests/unit/golden/ before committing it.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from orchestrator.plan.plan import ArrayPlan, ResourceShape, build_plan
from orchestrator.slurm.sbatch import render_sbatch, submitit_command
from orchestrator.plan.study import parse_study

GOLDEN = Path(__file__).parent / "golden" / "sbatch_ddp_2x2.sh"
RESULTS = Path("/scratch/u/runs/hw5")
PYTHON = "/opt/venv/bin/python"


def plan_of(cluster=None, results=RESULTS):
    study = parse_study({
        "name": "hw5", "cluster": {"gpus_per_node": 4, "time_min": 60, **(cluster or {})},
        "grid": [{"engine": "ddp", "nodes": 2, "gpus_per_node": 2, "batch_per_gpu": [32, 128, 512]}],
    })
    return build_plan(study, results, Path("/scratch/u"))


def render(cluster=None, results=RESULTS, python=PYTHON) -> str:
    plan = plan_of(cluster, results)
    array = plan.arrays[0]
    return render_sbatch(plan, array, len(array.cell_ids), submitit_command(plan.log_dir, python))


def sbatch_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("#SBATCH")]


def test_ddp_2x2_matches_the_golden_file():
    text = render()
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert GOLDEN.is_file(), f"{GOLDEN} is missing: write it with UPDATE_GOLDEN=1"
    assert text == GOLDEN.read_text()


def test_golden_file_asks_for_what_a_2x2_ddp_array_needs():
    lines = sbatch_lines(GOLDEN.read_text())
    for wanted in ("--job-name=hw5-n2-g2-t2", "--nodes=2", "--ntasks-per-node=2", "--cpus-per-task=3",
                   "--gpus-per-node=2", "--time=60", "--array=0-2", "--signal=USR2@90",
                   "--output=/scratch/u/runs/hw5/logs/%A_%a_0_log.out"):
        assert f"#SBATCH {wanted}" in lines, wanted
    text = GOLDEN.read_text()
    assert text.startswith("#!/bin/bash\n")
    assert text.rstrip().endswith(f"{PYTHON} -u -m submitit.core._submit /scratch/u/runs/hw5/logs")
    # every directive comes before the first command, or sbatch ignores it
    first_command = next(i for i, l in enumerate(text.splitlines()) if l and not l.startswith("#"))
    last_directive = max(i for i, l in enumerate(text.splitlines()) if l.startswith("#SBATCH"))
    assert last_directive < first_command


def test_gres_form():
    lines = sbatch_lines(render({"gpu_request": "gres"}))
    assert "#SBATCH --gres=gpu:2" in lines
    assert not any("--gpus-per-node" in line for line in lines)


def test_partition_account_qos_constraint_mem_only_when_set():
    plain = render()
    for option in ("--partition", "--account", "--qos", "--constraint", "--mem"):
        assert option not in plain
    lines = sbatch_lines(render({"partition": "gpu", "account": "proj1", "qos": "high", "constraint": "a100", "mem_gb": 64}))
    for line in ("--partition=gpu", "--account=proj1", "--qos=high", "--constraint=a100", "--mem=64G"):
        assert f"#SBATCH {line}" in lines, line


def test_array_throttle_only_when_parallelism_set():
    assert "#SBATCH --array=0-2" in sbatch_lines(render())
    assert "#SBATCH --array=0-2%2" in sbatch_lines(render({"array_parallelism": 2}))


def test_count_sizes_the_array():
    plan = plan_of()
    text = render_sbatch(plan, plan.arrays[0], 1, "cmd")
    assert "#SBATCH --array=0-0" in sbatch_lines(text)


def test_paths_with_a_space_are_shell_quoted():
    text = render(results=Path("/scratch/my runs/hw5"), python="/opt/my venv/bin/python")
    assert "#SBATCH --output='/scratch/my runs/hw5/logs/%A_%a_0_log.out'" in sbatch_lines(text)
    assert "--error '/scratch/my runs/hw5/logs/%A_%a_%t_log.err'" in text
    assert re.search(r"'/opt/my venv/bin/python' -u -m submitit.core._submit '/scratch/my runs/hw5/logs'$", text.rstrip())


def test_a_shape_value_with_a_space_is_shell_quoted():
    plan = plan_of()
    shape = ResourceShape(nodes=1, gpus_per_node=1, tasks_per_node=1, cpus_per_task=2, time_min=5)
    object.__setattr__(shape, "partition", "gpu a")  # past the shape's own checks, which refuse both
    object.__setattr__(shape, "account", "x;y")
    text = render_sbatch(plan, ArrayPlan("odd", shape, ("c",)), 1, "cmd")
    assert "#SBATCH --partition='gpu a'" in sbatch_lines(text)
    assert "#SBATCH --account='x;y'" in sbatch_lines(text)


def test_the_header_names_study_array_and_count():
    text = render()
    assert "# Study hw5, array n2-g2-t2: 3 cell(s)." in text
