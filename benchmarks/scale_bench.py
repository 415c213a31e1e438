"""Benchmark: plan, submit and status over 1,000 cells on the real (local) SLURM.

    python benchmarks/scale_bench.py [--cells 1000] [--max-array-size 0] [--keep]

The issue asks: plan + submit 1,000 cells in at most one sbatch per array chunk and under
15 s; status over 1,000 cells in at most 2 scheduler calls (squeue + sacct) per refresh and
under 2 s. Each verb runs as its own process (`python -m orchestrator ...`, start-up included)
with sbatch, squeue, sacct and scontrol wrapped by shims that count their calls. The study is
1,000 tiny cells in one array, throttled to 2 running tasks (%2) so that running tasks do
not load the 2-core machine while it is measured; after measuring, every job is cancelled
(unless --keep).

After submit, the arrays are held (`scontrol hold`) and the few running tasks allowed to end, so
status is timed on a quiet machine. Status (3 runs each: median, min-max) is timed with 1,000
tasks in squeue; with half the cells done (result files written here) and 100 submissions of
an array SLURM no longer knows, so that sacct is asked too; and after `cancel --all`.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jobs.train.cell import Cell  # noqa: E402
from jobs.core.result import Result, write_result
from jobs.train.result import Timed  # noqa: E402
from orchestrator import registry  # noqa: E402
from orchestrator.registry import Submission  # noqa: E402

SHIMMED = ("sbatch", "squeue", "sacct", "scontrol", "scancel")
STUDY = """name = "scale"
max_cells = {max_cells}
[cluster]
time_min = 5
cpus_per_task = 1
max_array_size = {max_array_size}
array_parallelism = 2  # %2: the measurement is not slowed by 8 tasks starting on a 2-core machine
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 32
epochs = 1
timed_epoch = 1
loader_workers = 0
batch_per_gpu = 16
[[grid]]
engine = "single"
seed = {seeds}
"""


def make_shims(folder: Path, calls: Path) -> None:
    """A shim per SLURM command: append its name to `calls`, then run the real one."""
    for name in SHIMMED:
        real = shutil.which(name)
        if real is None:
            sys.exit(f"no {name} on PATH: start the test cluster (bash tests/cluster/start.sh)")
        shim = folder / name
        shim.write_text(f'#!/bin/sh\necho {name} >> "{calls}"\nexec "{real}" "$@"\n')
        shim.chmod(0o755)


def run(env: dict, *argv: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "orchestrator", *argv], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return seconds, done.stdout


def counted(calls: Path) -> Counter:
    text = calls.read_text() if calls.exists() else ""
    calls.write_text("")
    return Counter(text.split())


def quiesce(results: Path, timeout_s: float = 60) -> None:
    """Hold the arrays' pending tasks and let the few running ones end, so that status is timed
    on a quiet machine (8 tasks starting PyTorch would saturate 2 cores)."""
    arrays = sorted({s.job_id.split("_")[0] for s in registry.load(results).submissions})
    subprocess.run(["scontrol", "hold", ",".join(arrays)], capture_output=True)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        listed = subprocess.run(["squeue", "-h", "-r", "-t", "R,CG", "-j", ",".join(arrays)],
                                capture_output=True, text=True).stdout
        if not listed.strip():
            return
        time.sleep(1)


def timed_status(env: dict, common: list[str], calls: Path, runs: int = 3) -> tuple[str, str]:
    """`status --json` `runs` times: 'median (min-max)' seconds, and the last output. Asserts
    each run made at most one squeue and one sacct."""
    times, out, per_run = [], "", Counter()
    for _ in range(runs):
        seconds, out = run(env, "status", *common, "--json")
        times.append(seconds)
        per_run = counted(calls)
        assert per_run["squeue"] <= 1 and per_run["sacct"] <= 1, per_run
    calls.write_text("".join(f"{k}\n" * v for k, v in per_run.items()))  # the last run's, for the table
    times.sort()
    return f"{times[len(times) // 2]:.2f} ({times[0]:.2f}-{times[-1]:.2f})", out


def fake_done(results: Path, plan: dict, count: int) -> None:
    """Result files for the first `count` cells, as if they had run."""
    for cell_data in plan["cells"][:count]:
        cell = Cell.from_dict(cell_data)
        write_result(results, Result(cell.cell_id, cell.to_dict(), "ok", timed=Timed(1, 1.0, 1.0)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--max-array-size", type=int, default=0, help="the profile's cap (0: the cluster's)")
    parser.add_argument("--keep", action="store_true", help="do not cancel the jobs afterwards")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="scale-bench-"))
    shims, calls = work / "shims", work / "calls"
    shims.mkdir()
    make_shims(shims, calls)
    env = dict(os.environ, PATH=f"{shims}:{os.environ['PATH']}", PYTHONPATH=str(ROOT))
    study = work / "scale.toml"
    study.write_text(STUDY.format(max_array_size=args.max_array_size, seeds=list(range(args.cells)),
                                  max_cells=max(args.cells, 1)))
    results = work / "runs"
    common = ["--study", str(study), "--results", str(results)]
    rows = []

    plan_s, _ = run(env, "plan", *common)
    submit_s, out = run(env, "submit", *common, "--executor", "slurm")
    submit_calls = counted(calls)
    intents = len(registry.load(results).intents)
    rows.append(("plan", f"{plan_s:.2f}", "-"))
    rows.append(("submit", f"{submit_s:.2f}", dict(submit_calls)))
    try:
        quiesce(results)
        counted(calls)
        status_s, out = timed_status(env, common, calls)
        states = Counter(c["state"] for c in json.loads(out)["cells"])
        rows.append((f"status, all queued {dict(states)}", status_s, dict(counted(calls))))

        plan = json.loads((results / "plan.json").read_text())
        fake_done(results, plan, args.cells // 2)
        gone = [Cell.from_dict(c).cell_id for c in plan["cells"][args.cells // 2:args.cells // 2 + 100]]
        registry.append(results, [Submission(cid, "slurm", f"1_{i}", "n1-g1-t1", "2026-01-01T00:00:00+00:00")
                                  for i, cid in enumerate(gone)])
        status_s, out = timed_status(env, common, calls)
        states = Counter(c["state"] for c in json.loads(out)["cells"])
        rows.append((f"status, half done, 100 forgotten by squeue {dict(states)}", status_s, dict(counted(calls))))
    finally:
        if not args.keep:
            cancel_s, _ = run(env, "cancel", *common, "--all")
            rows.append(("cancel --all", f"{cancel_s:.2f}", dict(counted(calls))))
            # the 100 "forgotten" cells' real jobs are no longer in the registry: cancel by name
            for name in sorted({i.job_name for i in registry.load(results).intents.values()}):
                subprocess.run(["scancel", "--name", name], check=False)
            counted(calls)
    status_s, out = timed_status(env, common, calls)
    states = Counter(c["state"] for c in json.loads(out)["cells"])
    rows.append((f"status after cancel {dict(states)}", status_s, dict(counted(calls))))

    print(f"# {args.cells} cells, max_array_size {args.max_array_size or 'cluster'}: {intents} array chunk(s); "
          f"{platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"plan + submit: {plan_s + submit_s:.2f} s")
    print("| step | wall s (own process) | SLURM commands run (status: per run) |\n|---|---|---|")
    for step, seconds, commands in rows:
        print(f"| {step} | {seconds} | {commands} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
