"""The table of paces the repo measured (orchestrator/budget/paces.csv), from result dirs of real
GPU runs: per configuration that sets the speed (model, engine, nodes, GPUs per node, batch per
GPU, pipeline, precision) and GPU model, the median over its ok runs of

    images/s per GPU = images of all its epochs / their wall seconds (epoch_s) / GPUs

(orchestrator.budget.estimate.measured_pace's formula), with how many runs and which dirs.

    python benchmarks/paces.py benchmarks/results/h100x4-run8/hw5 ../shared/data/h100x4-hw5-2026-11-27 \
        > orchestrator/budget/paces.csv
"""
from __future__ import annotations

import csv
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from jobs.core.layout import result_files
from orchestrator.budget.estimate import PACE_COLUMNS


def runs(folder: Path) -> list[tuple[tuple, float]]:
    """(configuration, images/s per GPU) of each ok training result with epochs in `folder`."""
    out = []
    for path in result_files(folder):
        data = json.loads(path.read_text())
        cell, epochs = data.get("cell", {}), data.get("epochs") or []
        if data.get("status") != "ok" or "model" not in cell or not epochs:
            continue
        gpus = cell["nodes"] * cell["gpus_per_node"]
        seconds = sum(e["epoch_s"] for e in epochs)
        key = (cell["model"], cell["engine"], cell["nodes"], cell["gpus_per_node"], cell["batch_per_gpu"],
               cell["pipeline"], cell["precision"], data["env"]["gpu_model"])
        out.append((key, sum(e["images"] for e in epochs) / seconds / gpus))
    return out


def main(folders: list[str]) -> None:
    paces: dict[tuple, list[float]] = defaultdict(list)
    where: dict[tuple, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for folder in folders:
        for key, pace in runs(Path(folder)):
            paces[key].append(pace)
            where[key][folder] += 1
    print(f"# written by benchmarks/paces.py {' '.join(folders)}; do not edit by hand")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(PACE_COLUMNS)
    for key in sorted(paces):
        source = "; ".join(f"{folder} ({n})" for folder, n in where[key].items())
        out.writerow([*key, f"{statistics.median(paces[key]):.0f}", len(paces[key]), source])


if __name__ == "__main__":
    main(sys.argv[1:])
