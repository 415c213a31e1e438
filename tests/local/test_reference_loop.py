"""benchmarks/reference_loop.py (the plain homework loop the GPU benchmark holds the faithful
pipeline against) runs and reports its epochs as the jobs define them."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import TESTS

SCRIPT = TESTS.parent / "benchmarks" / "reference_loop.py"


def test_the_reference_loop_times_each_epoch(tmp_path):
    out = tmp_path / "ref.json"
    subprocess.run([sys.executable, str(SCRIPT), "--batch", "32", "--images", "64", "--epochs", "1",
                    "--data", str(tmp_path / "data"), "--out", str(out)], check=True, timeout=300,
                   env={"PYTHONPATH": str(TESTS.parent), "PATH": "/usr/bin:/bin"})
    report = json.loads(out.read_text())
    assert report["gpus"] == 1 and report["batch_per_gpu"] == 32 and len(report["epochs"]) == 1
    epoch = report["epochs"][0]
    assert 0 < epoch["train_s"] <= epoch["epoch_s"]
    assert abs(epoch["train_s"] - (epoch["epoch_s"] - epoch["data_wait_s"])) < 1e-9
