"""Set-up paid once, measured on this machine's GPU (or CPU): the cells of a study's first shape
run one after another in one process (CellsRun, as a packed task runs them), then each again in a
fresh process (`python -m jobs`), and per cell: start + set-up, epochs, and the packed run's
largest difference in loss / accuracy from the fresh one.

    python benchmarks/pack_reuse.py STUDY.toml DIR [--cells 3]

e.g. benchmarks/h100x4-hw5.toml (its 1-GPU cells): start + set-up should be under 1 s from the
second cell on, and the numbers those of a fresh process (bit for bit where cuDNN picks the same
kernels: its benchmark cache outlives a cell, jobs/runtime/reuse.py).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from jobs.core.layout import result_path
from jobs.core.result import read_result
from orchestrator.plan.plan import build_plan
from orchestrator.plan.study import load_study

PACK = """
import json, sys
from jobs.core.kinds import cell_from_dict
from orchestrator.slurm.submitit_adapter import CellsRun
CellsRun()([cell_from_dict(c) for c in json.load(open(sys.argv[1]))], sys.argv[2], sys.argv[3])
"""


def numbers(path: Path) -> list[float]:
    return [v for e in read_result(path).body.epochs for v in (e.loss, e.accuracy, e.test_loss or 0, e.test_accuracy or 0)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", type=Path)
    parser.add_argument("dir", type=Path)
    parser.add_argument("--cells", type=int, default=3)
    parser.add_argument("--data", type=Path, default=Path("data"))
    args = parser.parse_args()
    plan = build_plan(load_study(args.study), args.dir / "plan", Path.cwd())
    cells = [plan.cell(c) for c in plan.arrays[0].cell_ids[:args.cells]]
    args.dir.mkdir(parents=True, exist_ok=True)
    (args.dir / "cells.json").write_text(json.dumps([c.to_dict() for c in cells]))
    subprocess.run([sys.executable, "-c", PACK, str(args.dir / "cells.json"), str(args.dir / "packed"),
                    str(args.data)], check=True)
    for i, cell in enumerate(cells):
        (args.dir / f"cell{i}.json").write_text(json.dumps(cell.to_dict()))
        subprocess.run([sys.executable, "-m", "jobs", "--cell", str(args.dir / f"cell{i}.json"), "--out",
                        str(args.dir / "fresh"), "--data", str(args.data)], check=True)
    print(f"{'cell':<40} {'packed start+setup':>18} {'fresh start+setup':>17} {'epochs packed/fresh':>20} {'max diff':>9}")
    for cell in cells:
        packed, fresh = result_path(args.dir / "packed", cell.cell_id), result_path(args.dir / "fresh", cell.cell_id)
        p, f = read_result(packed).phases, read_result(fresh).phases
        diff = max(abs(a - b) for a, b in zip(numbers(packed), numbers(fresh), strict=True))
        print(f"{cell.label[:40]:<40} {(p.start_s or 0) + p.setup_s:17.2f}s {(f.start_s or 0) + f.setup_s:16.2f}s "
              f"{p.epochs_s or 0:9.2f}/{f.epochs_s or 0:.2f}s {diff:9.2g}")


if __name__ == "__main__":
    main()
