"""Run the plain homework loop (reference_loop.py) for each faithful configuration a plan
times, once per repeat, so the faithful pipeline is measured beside it in the same run.

    python benchmarks/reference_runs.py RESULTS_DIR

Configurations: faithful fp32 cells without a large-batch remedy, engine single or DDP on one
node (DataParallel has no plain counterpart here). Results: RESULTS_DIR/reference/*.json.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from jobs.core.result import read_good_result
from orchestrator.plan.plan import read_plan

HERE = Path(__file__).resolve().parent


def reference_cells(results_dir: Path):
    plan = read_plan(results_dir)
    for cell in plan.cells:
        plain = cell.lr_scaling == "none" and not cell.warmup_epochs and not cell.sync_bn
        if (cell.pipeline, cell.precision, cell.dataset, cell.nodes) == ("faithful", "fp32", "synthetic", 1) \
                and plain and cell.engine in ("single", "ddp") and cell.loader_workers == 2:
            done = read_good_result(results_dir, cell.cell_id)
            if done is not None and done.status == "ok":  # a batch that did not fit has no reference
                yield plan, cell


def command(plan, cell, out: Path) -> list[str]:
    script = [str(HERE / "reference_loop.py"), "--batch", str(cell.batch_per_gpu), "--data", plan.data_dir,
              "--images", str(cell.train_images), "--epochs", str(cell.epochs), "--out", str(out)]
    if cell.engine == "ddp":
        return ["torchrun", "--standalone", f"--nproc_per_node={cell.gpus_per_node}", *script]
    return [sys.executable, *script]


def main(results_dir: Path) -> int:
    worst = 0
    for plan, cell in reference_cells(results_dir):
        out = results_dir / "reference" / f"{cell.engine}-g{cell.gpus}-b{cell.batch_per_gpu}-r{cell.repeat}.json"
        if out.is_file():
            continue
        worst = max(worst, subprocess.run(command(plan, cell, out), timeout=600).returncode)
    return worst


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
