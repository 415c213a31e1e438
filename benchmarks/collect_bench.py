"""Benchmark: `collect` over 10,000 result files (the issue asks under 5 s on a 2-core machine),
and over a grid of 100,000 (issue 21: under 30 s and 1 GB).

    python benchmarks/collect_bench.py [--files 10000] [--runs 3] [--report]
    python benchmarks/collect_bench.py --grid 100000 [--results 1.0] [--runs 3]
    python benchmarks/collect_bench.py --ptq 2000 [--runs 3]

Writes synthetic result files (the hw5 study's configurations, repeated, with some oom and
failed, 5-epoch Q4 runs among them), a plan.json listing them and 1% more cells not run yet
(half of those in registry.jsonl), in a temp dir; then times collect() (load every file,
build every table, write tables.md/.tex and the CSVs) and, with --report, write_report().

--grid N: plans (`python -m orchestrator plan`) a study of N training cells, an lr x
weight_decay x momentum grid (collect_grid), writes a result for the first fraction --results
of them (ids as the plan computed them), and times `python -m orchestrator collect` as its own
process (start-up and console tables included) under /usr/bin/time: wall seconds and peak
memory (maximum resident set) of each run.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jobs.train.cell import Cell  # noqa: E402
from jobs.train.result import CommStats, EpochStats, Timed, TrainBody  # noqa: E402
from jobs.core.result import Result  # noqa: E402

SHAPES = [("single", 1, 1)] + [(e, 1, g) for e in ("dp", "ddp") for g in (2, 4)] + [("ddp", 2, 2)]
BATCHES = (32, 128, 512)


def configurations() -> list[dict]:
    out = [dict(engine=e, nodes=n, gpus_per_node=g, batch_per_gpu=b) for e, n, g in SHAPES for b in BATCHES]
    out += [dict(engine="single", batch_per_gpu=b) for b in (2048, 8192)]
    out += [dict(engine="single", batch_per_gpu=128, epochs=5, timed_epoch=5)]
    out += [dict(engine="ddp", gpus_per_node=4, batch_per_gpu=b, epochs=5, timed_epoch=5, **r)
            for b in (2048, 8192) for r in ({}, {"lr_scaling": "linear"}, {"lr_scaling": "linear", "warmup_epochs": 2})]
    return out


def synthetic(cell: Cell, i: int) -> Result:
    status = "oom" if cell.batch_per_gpu == 8192 else ("failed" if i % 97 == 0 else "ok")
    env = {"gpu_model": "NVIDIA H200", "gpus_visible": cell.gpus_per_node, "torch": "2.5.1", "cuda": "12.4",
           "nccl": "2.21.5", "hostnames": [f"gpu{i % 8}"], "started_at": "2025-04-01T10:00:00+00:00",
           "ended_at": "2025-04-01T10:01:00+00:00"}
    result = Result(cell_id=cell.cell_id, cell=cell.to_dict(), status=status, env=env)
    if status != "ok":
        result.error = f"{status}: synthetic"
        return result
    t1 = 30.0 * 32 / cell.batch_per_gpu ** 0.5 * (1 + (i % 7) / 100)
    epoch_s = t1 / cell.gpus * 1.2 + 1
    result.body = body = TrainBody()
    for e in range(1, cell.epochs + 1):
        body.epochs.append(EpochStats(e, epoch_s, epoch_s - 1, cell.train_images, cell.train_images / epoch_s,
                                        2.0 / e, 0.15 * e, cell.lr, 1.0, 0.2, epoch_s - 1.2,
                                        0.1 * epoch_s if cell.engine == "ddp" else None))
    body.timed = Timed(cell.timed_epoch, epoch_s, epoch_s - 1)
    if cell.engine == "ddp":
        body.comm = CommStats(cell.gpus, 44_695_848, 0.002, 22.3, 33.5, "nccl")
    return result


def write_results(out: Path, files: int) -> None:
    configs = configurations()
    cells = []
    for i in range(files):
        cell = Cell(**configs[i % len(configs)], repeat=i // len(configs))
        cells.append(cell.to_dict())
        (out / f"{cell.cell_id}.json").write_text(json.dumps(synthetic(cell, i).to_dict()))
    pending = [Cell(**configs[i % len(configs)], repeat=files + i) for i in range(files // 100)]
    cells += [c.to_dict() for c in pending]
    (out / "plan.json").write_text(json.dumps({"study": "bench", "cells": cells}))
    registry = "".join(json.dumps({"cell_id": c.cell_id, "executor": "slurm", "job_id": "1"}) + "\n" for c in pending[::2])
    (out / "registry.jsonl").write_text(registry)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--report", action="store_true", help="time write_report() too")
    parser.add_argument("--grid", type=int, metavar="N", help="time the collect CLI over an N-cell grid instead")
    parser.add_argument("--ptq", type=int, metavar="N", help="time the collect CLI over N PTQ results instead")
    parser.add_argument("--results", type=float, default=1.0, help="with --grid: the fraction of cells with a result")
    args = parser.parse_args()
    if args.grid or args.ptq:
        from benchmarks.collect_grid import bench
        bench(args.grid or args.ptq, args.results, args.runs, ptq=bool(args.ptq))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        start = time.perf_counter()
        write_results(out, args.files)
        print(f"wrote {args.files} result files in {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        from collect.report import collect, write_report
        print(f"import collect: {time.perf_counter() - start:.2f} s")
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            collected = collect(out)
            times.append(time.perf_counter() - start)
        print(f"collect() over {args.files} files: " + ", ".join(f"{t:.2f}" for t in times)
              + f" s (median {statistics.median(times):.2f} s); {len(collected.cells)} cells")
        if args.report:
            start = time.perf_counter()
            write_report(collected)
            print(f"write_report(): {time.perf_counter() - start:.2f} s")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}, {platform.system()} {platform.release()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
