"""What a SLURM job loads is yours alone (issue 45 item 1), on the real local SLURM: under a lab's
umask 002 the pickled calls in logs/ are 0600 (they were 0664), and a results dir made group-writable
afterwards is refused by `submit` before anything is queued."""
from __future__ import annotations

import os
import stat
import subprocess

import pytest

from results_format import registry
from tests.helpers import cli, tiny_slurm_study, write_study

pytestmark = pytest.mark.slurm

STUDY = tiny_slurm_study("private", batches="8")


def test_the_jobs_calls_are_written_0600_and_a_shared_dir_is_refused(slurm_cluster, in_tmp, capsys, monkeypatch):
    before = os.umask(0o002)
    try:
        study = write_study(in_tmp, STUDY)
        assert cli(capsys, "plan", "--study", study)[0] == 0
        monkeypatch.setenv("SBATCH_HOLD", "1")  # nothing runs: only the files are looked at
        assert cli(capsys, "submit", "--study", study, "--executor", "slurm")[0] == 0
        results = in_tmp / "runs" / "private"
        subprocess.run(["scancel", registry.load(results).submissions[0].job_id.split("_")[0]], check=True)
        loaded = sorted((results / "logs").glob("*.pkl")) + sorted((results / "logs").glob("*.sh"))
        assert loaded and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in loaded)
        assert stat.S_IMODE((results / "logs").stat().st_mode) & 0o022 == 0

        results.chmod(0o775)
        code, _, err = cli(capsys, "submit", "--study", study, "--executor", "slurm", "--retry-failed")
        assert code == 2 and f"{results} is mode 0775" in err and "chmod go-w" in err
    finally:
        os.umask(before)
