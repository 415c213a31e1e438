"""collect over a grid of N training cells (issue 21), or over N PTQ results: the study, its
fabricated results, and the timed `collect` runs. Run through benchmarks/collect_bench.py --grid N
(or --ptq N).

The study is one lr x weight_decay x momentum grid on one GPU (N / 1000 x 100 x 10 values),
planned by `python -m orchestrator plan`; each result is written for a cell of that plan (its id as
the plan computed it), 2 epochs with test accuracy that peaks at one (lr, weight_decay), 1 in 97
failed and 1 in 101 OOM. The PTQ study is N training seeds of tests/factories' small PTQ cell, each
result that factory's with histograms of HISTOGRAM_BINS bins (about 230 KB of JSON a result, as
the issue's 2,000 results in 447 MB). `collect` runs as its own process under /usr/bin/time (wall
seconds, peak resident memory) with --out in a temp dir, so every run writes the same files.
"""
from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jobs.core.layout import result_files, result_path  # noqa: E402
from results_format.plan_file import cell_dicts  # noqa: E402
from jobs.core.result import Result  # noqa: E402
from jobs.train.cell import Cell  # noqa: E402
from jobs.train.result import EpochStats, Timed, TrainBody  # noqa: E402

STUDY = """name = "grid"
description = "collect at scale: an lr x weight_decay x momentum grid on one GPU"
max_cells = {cells}
[cluster]
time_min = 10
images_per_s_per_gpu = 8000.0
[defaults]
engine = "single"
batch_per_gpu = 128
[[grid]]
name = "sweep"
lr = {lrs}
weight_decay = {decays}
momentum = {momenta}
"""


PTQ_STUDY = """name = "ptq-scale"
kind = "ptq"
description = "collect at scale: one PTQ setup, N training seeds"
max_cells = {cells}
[cluster]
time_min = 30
[defaults]
dataset = "synthetic"
train_images = 1000
test_images = 1000
gpus_per_node = 0
weight_bits = [8, 4]
activation_bits = [8, 2]
range_methods = ["max", "mse"]
calibration_images = [16, 400]
[[grid]]
name = "seeds"
seed = {seeds}
"""
HISTOGRAM_BINS = 1000


def study_text(cells: int) -> str:
    """lr: cells / 1000 values (at least 1), weight_decay: 100, momentum: 10 (fewer below 1,000 cells)."""
    momenta = [round(0.5 + 0.05 * i, 2) for i in range(min(10, cells))]
    decays = [round(1e-5 * (i + 1), 6) for i in range(min(100, max(1, cells // len(momenta))))]
    lrs = [round(0.01 * (i + 1), 4) for i in range(max(1, cells // (len(momenta) * len(decays))))]
    return STUDY.format(cells=cells, lrs=lrs, decays=decays, momenta=momenta)


def fabricated(cell: Cell, i: int) -> Result:
    """A 2-epoch result: test accuracy 0.9 at lr 0.1, weight decay 5e-4, lower away from them."""
    env = {"gpu_model": "NVIDIA H200", "gpus_visible": 1, "torch": "2.5.1", "cuda": "12.4", "hostnames": [f"gpu{i % 8}"],
           "started_at": "2025-04-01T10:00:00+00:00", "ended_at": "2025-04-01T10:01:00+00:00"}
    status = "failed" if i % 97 == 0 else ("oom" if i % 101 == 0 else "ok")
    result = Result(cell_id=cell.cell_id, cell=cell.to_dict(), status=status, env=env, run_seed=cell.run_seed)
    if status != "ok":
        result.error = f"{status}: fabricated"
        return result
    accuracy = 0.9 - 2 * abs(math.log10(cell.lr / 0.1)) / 10 - abs(math.log10(cell.weight_decay / 5e-4)) / 20
    accuracy -= abs(cell.momentum - 0.9) / 5 + (i % 13) / 1000
    epoch_s = 4.0 * (1 + (i % 7) / 100)
    epochs = [EpochStats(e, epoch_s * (1.5 if e == 1 else 1), epoch_s - 0.5, cell.train_images,
                         cell.train_images / epoch_s, 2.0 / e, 0.4 * e, cell.lr, 0.5, 0.2, epoch_s - 0.7,
                         test_loss=2 * (1 - accuracy), test_accuracy=max(accuracy, 0.1) * e / 2,
                         test_images=cell.test_images, eval_s=1.0)
              for e in (1, 2)]
    result.body = TrainBody(epochs=epochs, timed=Timed(2, epochs[1].epoch_s, epochs[1].train_s))
    return result


def ptq_fabricated(fields: dict) -> Result:
    """tests/factories' PTQ result of the cell, its histograms HISTOGRAM_BINS bins wide."""
    from jobs.ptq.cell import PTQCell
    from tests.factories import ptq_result

    data = ptq_result(PTQCell.from_dict(fields)).to_dict()
    for layer in data["ptq"]["outcome"]["weight_stats"] + data["ptq"]["outcome"]["activation_stats"]:
        low, high = layer["stats"]["min"], layer["stats"]["max"]
        step = (high - low) / HISTOGRAM_BINS
        layer["stats"]["histogram"] = {"edges": [low + i * step for i in range(HISTOGRAM_BINS + 1)],
                                       "counts": [(i * 7919) % 1000 for i in range(HISTOGRAM_BINS)]}
    return Result.from_dict(data)


def prepare(work: Path, cells: int, fraction: float, ptq: bool = False) -> Path:
    """Plan the study in work/runs and write results for its first `fraction` of cells."""
    study, results = work / "grid.toml", work / "runs"
    study.write_text(PTQ_STUDY.format(cells=cells, seeds=list(range(cells))) if ptq else study_text(cells))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-m", "orchestrator", "plan", "--study", str(study), "--results", str(results)],
                   env=env, check=True, capture_output=True)
    planned = cell_dicts(json.loads((results / "plan.json").read_text())["cells"])
    for i, fields in enumerate(planned[:int(len(planned) * fraction)]):
        result = ptq_fabricated(fields) if ptq else fabricated(Cell.from_dict(fields), i)
        result_path(results, result.cell_id).write_text(json.dumps(result.to_dict()))
    return results


def timed_collect(results: Path, runs: int) -> list[tuple[float, float]]:
    """(wall seconds, peak resident MB) of each `collect` run, as its own process."""
    measured = []
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="160")
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as out, tempfile.NamedTemporaryFile("r") as usage:
            argv = ["/usr/bin/time", "-o", usage.name, "-f", "%e %M", sys.executable, "-m", "orchestrator", "collect",
                    "--results", str(results), "--out", out]
            done = subprocess.run(argv, env=env, capture_output=True, text=True)
            if done.returncode not in (0, 1):
                sys.exit(f"collect failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
            seconds, kib = usage.read().split()[-2:]
            measured.append((float(seconds), int(kib) / 1024))
            lines = done.stdout.count("\n")
    print(f"collect printed {lines:,} lines")
    return measured


def spread(values: list[float], fmt: str) -> str:
    """"median (min-max)"."""
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def load_average() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.split("load average:")[-1].strip()


def bench(cells: int, fraction: float, runs: int, ptq: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results = prepare(Path(tmp), cells, fraction, ptq)
        files = result_files(results)
        print(f"{len(files):,} {'PTQ ' if ptq else ''}result files: {sum(p.stat().st_size for p in files) / 1e6:,.0f} MB "
              f"of JSON; plan.json {(results / 'plan.json').stat().st_size / 1e6:,.0f} MB")
        written = len(files)
        load_before = load_average()
        measured = timed_collect(results, runs)
        print(f"| {cells:,} planned, {written:,} results | {spread([s for s, _ in measured], '{:.1f}')} | "
              f"{spread([m for _, m in measured], '{:.0f}')} | {load_before} / {load_average()} |")
        print("runs (s, MB): " + ", ".join(f"{s:.1f} s {m:.0f} MB" for s, m in measured))
