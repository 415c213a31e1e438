"""A job's phases add up to its wall time, measured from outside: nothing a job spends is lost."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from jobs.core.phases import LAUNCHED_AT_ENV
from jobs.core.result import read_result
from jobs.core.layout import result_path
from jobs.train.cell import Cell

TINY = dict(model="tiny", dataset="synthetic", train_images=48, loader_workers=1, epochs=2)


def test_a_ddp_jobs_phases_sum_to_its_wall_time(tmp_path):
    cell = Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=8, **TINY)
    (tmp_path / "cell.json").write_text(json.dumps(cell.to_dict()))
    out = tmp_path / "results"
    launched = time.time()
    proc = subprocess.run([sys.executable, "-m", "jobs", "--cell", str(tmp_path / "cell.json"), "--out", str(out),
                           "--data", str(tmp_path / "data")], env=dict(os.environ, **{LAUNCHED_AT_ENV: repr(launched)}),
                          capture_output=True, text=True, timeout=300)
    wall = time.time() - launched
    assert proc.returncode == 0, proc.stderr
    result = read_result(result_path(out, cell.cell_id))
    phases, epochs = result.phases, result.body.epochs
    assert phases is not None and phases.launch_s is not None and phases.start_s > 0.1, "imports take time"
    assert abs(phases.total_s() - wall) <= max(0.05 * wall, 0.3), (phases, wall)
    assert phases.epochs_s >= sum(e.epoch_s for e in epochs) and phases.eval_s >= sum(e.eval_s for e in epochs)
    assert phases.measure_s > 0, "the all-reduce probe and the exposed-communication windows"
    assert phases.body_s >= phases.epochs_s + phases.eval_s + phases.measure_s
    assert phases.setup_s > 0 and phases.write_s > 0, "the model and data; the checkpoint after epoch 1"
