"""The greene profile's container command against the one the README documents, through the
stand-in singularity (tests/cluster/singularity), and the overlay's build script the README runs.
The whole path on the test cluster: tests/slurm/test_greene_slurm.py."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from orchestrator.plan.cluster import ContainerSpec, load_profile
from orchestrator.slurm.sbatch import in_container

REPO = Path(__file__).resolve().parents[2]
STAND_IN = REPO / "tests" / "cluster" / "singularity"
BUILD_SCRIPT = REPO / "docs" / "greene" / "overlay-env.sh"


def greene_command(overlay: Path, command: str) -> list[str]:
    """What a greene task runs, with the overlay at `overlay` (a site file's override)."""
    container = ContainerSpec(**{**load_profile("greene").container, "overlay": str(overlay)})
    return shlex.split(in_container(container, command))


def stand_in(tmp_path: Path, argv: list[str], readme: Path = REPO / "README.md") -> subprocess.CompletedProcess:
    ext3 = tmp_path / "ext3"
    ext3.mkdir(exist_ok=True)
    (ext3 / "env.sh").write_text("export SOURCED=overlay-env\n")
    env = {**os.environ, "ORCH_GREENE_README": str(readme), "ORCH_FAKE_EXT3": str(ext3),
           "ORCH_FAKE_SINGULARITY_LOG": str(tmp_path / "calls.jsonl")}
    return subprocess.run([STAND_IN, *argv[1:]], env=env, capture_output=True, text=True, timeout=60)


@pytest.fixture
def overlay(tmp_path) -> Path:
    """An overlay file named as the README makes it."""
    path = tmp_path / "overlay-25GB-500K.ext3"
    path.write_text("")
    return path


def test_the_profiles_container_command_is_the_readmes(tmp_path, overlay):
    argv = greene_command(overlay, 'echo "ran after $SOURCED"')
    assert argv[0] == "singularity"
    done = stand_in(tmp_path, argv)
    assert (done.returncode, done.stdout, done.stderr) == (0, "ran after overlay-env\n", "")


@pytest.mark.parametrize("change, refusal", [
    (("--overlay /scratch/$USER/overlay-25GB-500K.ext3:ro", "--overlay /scratch/$USER/overlay-25GB-500K.ext3:rw"),
     "read-only"),
    (("exec --nv", "exec"), "documents 0"),
    (("cuda12.1.1-cudnn8.9.0", "cuda11.8.0-cudnn8.7.0"), "image"),
    (("source /ext3/env.sh", "source /ext3/activate.sh"), "sources '/ext3/env.sh'"),
])
def test_a_readme_that_differs_from_the_profile_fails_the_job(tmp_path, overlay, change, refusal):
    text = (REPO / "README.md").read_text()
    assert change[0] in text
    readme = tmp_path / "README.md"
    readme.write_text(text.replace(change[0], change[1]))
    done = stand_in(tmp_path, greene_command(overlay, "echo ran"), readme)
    assert done.returncode == 64 and refusal in done.stderr and done.stdout == ""


def test_the_overlay_script_is_bash_and_writes_the_env_script_the_profile_sources():
    subprocess.run(["bash", "-n", BUILD_SCRIPT], check=True)
    text = BUILD_SCRIPT.read_text()
    env_script = load_profile("greene").container["env_script"]
    assert f"cat > {env_script} <<" in text and f"source {env_script}" in text
    assert "download.pytorch.org/whl/cu121" in text and "cuda12.1.1" in load_profile("greene").container["image"]
    assert re.search(r'pip install .*-e "\$REPO\[jobs\]"', text)
    assert "bash hpml/docs/greene/overlay-env.sh" in (REPO / "README.md").read_text()
