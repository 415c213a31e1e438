"""What `submit --pack` saves and costs on a SLURM cluster: the same cells queued one a task and
packed, on a free cluster and on a busy one (emulated: array_parallelism = 1 lets one task of the
array run at a time, so each task waits in the queue for the one before it).

    source /tmp/orchestrator-slurm/env.sh; python benchmarks/pack_slurm.py DIR [--cells 6] [--pack 6]

Prints, per case, the wall time from `submit` to the last result and the cells' start + set-up
(the seconds they spend before training) summed, from their results' phases.
"""
from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
import time
from pathlib import Path

from jobs.core.layout import result_path
from jobs.core.result import read_result
from orchestrator.plan.plan import read_plan
from results_format import registry

STUDY = """name = "{name}"
[cluster]
time_min = 10
cpus_per_task = 1
array_parallelism = {parallelism}
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 2000
epochs = 2
loader_workers = 0
batch_per_gpu = 32
engine = "single"
[[grid]]
seed = [{seeds}]
"""


def orchestrator(*argv: str) -> None:
    subprocess.run([sys.executable, "-m", "orchestrator", *argv], check=True, stdout=subprocess.DEVNULL)


def one_case(where: Path, name: str, cells: int, pack: int, parallelism: int) -> str:
    study = where / f"{name}.toml"
    study.write_text(STUDY.format(name=name, parallelism=parallelism, seeds=", ".join(map(str, range(cells)))))
    results = where / "runs" / name
    orchestrator("plan", "--study", str(study), "--results", str(results))
    began = time.monotonic()
    orchestrator("submit", "--study", str(study), "--results", str(results), "--executor", "slurm",
                 "--pack", str(pack), "--wait", "--interval", "1")
    wall = time.monotonic() - began
    waits = queue_waits({s.job_id for s in registry.load(results).submissions if s.job_id})
    phases = [read_result(result_path(results, c.cell_id)).phases for c in read_plan(results).cells]
    before = sum((p.launch_s or 0) + (p.start_s or 0) + p.setup_s for p in phases if p is not None)
    epochs = sum(p.epochs_s or 0 for p in phases if p is not None)
    return (f"{name:<12} pack {pack}: {wall:6.1f} s submit -> last result; {len(waits)} task(s) waited "
            f"{sum(waits):6.1f} s in the queue; cells' launch+start+set-up {before:6.1f} s, epochs {epochs:5.1f} s "
            f"(sums over {cells} cells)")


def queue_waits(job_ids: set[str]) -> list[float]:
    """Each task's Start - Submit (sacct), in seconds."""
    out = subprocess.run(["sacct", "-n", "-X", "-P", "-o", "JobID,Submit,Start", "-j",
                          ",".join(sorted({j.split("_")[0] for j in job_ids}))], capture_output=True, text=True,
                         check=True).stdout
    waits = []
    for line in out.splitlines():
        job, submit, start = line.split("|")
        if job in job_ids:
            waits.append((dt.datetime.fromisoformat(start) - dt.datetime.fromisoformat(submit)).total_seconds())
    return waits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--cells", type=int, default=6)
    parser.add_argument("--pack", type=int, default=6)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    for parallelism, cluster in ((0, "free"), (1, "busy")):
        for pack in (1, args.pack):
            print(one_case(args.dir, f"{cluster}-pack{pack}", args.cells, pack, parallelism), flush=True)


if __name__ == "__main__":
    main()
