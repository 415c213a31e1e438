"""Where a training cell's set-up goes (issue 46: set-up was 20-23 % of job time in run 11).

    python benchmarks/setup_breakdown.py --out OUT [--images 10000] [--batch 32 --batch 128 ...]

Runs 1-GPU cells (ResNet-18, synthetic CIFAR-10, the faithful pipeline, 1 epoch) one after another
in this process as a packed job runs them (jobs.runtime.reuse.run_cells), with a timer around each
step of the set-up: the device choice, the environment's description, the trainer (model, optimizer,
loader, the resident test set), the GPU monitor, the fit check (one full-size step at the cell's
batch), the checkpoint look-up. Prints one row per cell: its result's setup_s and
the steps' seconds; --profile N: cProfile's top N over the steps of each cell after the first.
"""
from __future__ import annotations

import argparse
import cProfile
import functools
import json
import pstats
import time
from pathlib import Path

from jobs.core.layout import result_files
from jobs.core.kinds import run_cell
from jobs.runtime import environment, reuse
from jobs.train import run as train_run
from jobs.train.cell import Cell

STEPS = {"clean-up": (reuse, "fresh_device"), "device": (train_run, "device_for"), "describe": (environment, "describe"),
         "trainer": (train_run, "make_trainer"), "monitor": (train_run, "GpuMonitor"),
         "fit check": (train_run, "check_fits"), "resume": (train_run, "resume")}


PROFILE: list[cProfile.Profile] = []  # the profile of the cell running now, if any


def timed(spent: dict[str, float], name: str, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        began = time.perf_counter()
        for p in PROFILE:
            p.enable()
        try:
            return function(*args, **kwargs)
        finally:
            for p in PROFILE:
                p.disable()
            spent[name] = spent.get(name, 0.0) + time.perf_counter() - began
    return wrapper


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--images", type=int, default=10_000)
    parser.add_argument("--batch", type=int, action="append", help="default: 32, 128, 512, 32")
    parser.add_argument("--model", default="resnet18", help="tiny: a smoke test on a CPU")
    parser.add_argument("--profile", type=int, default=0, help="print cProfile's top N of each later cell")
    args = parser.parse_args(argv)
    spent: dict[str, float] = {}
    for name, (module, attr) in STEPS.items():
        setattr(module, attr, timed(spent, name, getattr(module, attr)))
    cells = [Cell(engine="single", batch_per_gpu=b, dataset="synthetic", train_images=args.images, epochs=1,
                  timed_epoch=1, model=args.model) for b in args.batch or [32, 128, 512, 32]]
    rows = []
    with reuse.packing():  # what a packed job keeps between its cells
        for cell in cells:
            spent.clear()
            PROFILE[:] = [cProfile.Profile()] if args.profile and rows else []
            run_cell(cell, args.out, args.out / "data")
            for p in PROFILE:
                pstats.Stats(p).sort_stats("cumulative").print_stats(args.profile)
            result = json.loads(next(p for p in result_files(args.out) if p.stem == cell.cell_id).read_text())
            rows.append({"batch": cell.batch_per_gpu, "setup_s": result["phases"]["setup_s"],
                         "cells_before": result["phases"]["cells_before"], **{k: round(v, 3) for k, v in spent.items()}})
            print(json.dumps(rows[-1]), flush=True)
    (args.out / "setup-breakdown.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
