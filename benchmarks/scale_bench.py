"""Benchmark: plan, submit and status over 1,000 cells on the real (local) SLURM; plan and
status over 100,000 cells with SLURM's answers canned (--big).

    python benchmarks/scale_bench.py [--cells 1000] [--max-array-size 0] [--keep]
    python benchmarks/scale_bench.py --big 100000 [--runs 3] [--code TREE]

--big: the issue's grid (lr x weight_decay x momentum, 100 x 100 x 10) planned --runs times from
scratch; then half of its cells given a result file as a job writes it, and status timed --runs
times each: with no submission in the registry (first without the status cache, each run; then
with it), and with every cell submitted (1,000 to an sbatch, as submit records them) where sacct
lists the done half COMPLETED and 100 more FAILED, and squeue lists the rest pending (canned
squeue and sacct: no real job runs; at most one of each per run is asserted). Each verb runs in
its own process (start-up included): wall time and peak RSS (wait4) as median (min-max), and the
1-minute load at the start of the runs (the machine is shared). --code: time the verbs of another
tree (e.g. `git archive BASE | tar -x -C DIR`) against the same files.

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
import datetime as dt
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

from jobs.core.result import Result, write_result  # noqa: E402
from jobs.train.result import EpochStats, Timed, TrainBody  # noqa: E402
from results_format import registry  # noqa: E402
from orchestrator.plan.plan import Plan, read_plan  # noqa: E402
from orchestrator.slurm.recovery import submission_of  # noqa: E402
from results_format.registry import Intent, Submission  # noqa: E402
from orchestrator.slurm.sbatch import job_name  # noqa: E402

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


def fake_done(results: Path, plan: Plan, count: int) -> None:
    """Result files for the first `count` cells, as if they had run."""
    for cell in plan.cells[:count]:
        write_result(results, Result(cell.cell_id, cell.to_dict(), "ok", body=TrainBody(timed=Timed(1, 1.0, 1.0))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--max-array-size", type=int, default=0, help="the profile's cap (0: the cluster's)")
    parser.add_argument("--keep", action="store_true", help="do not cancel the jobs afterwards")
    parser.add_argument("--big", type=int, metavar="CELLS", help="instead: plan and status over CELLS (a multiple "
                        "of 1,000; the issue's 100000) planned cells, SLURM's answers canned")
    parser.add_argument("--runs", type=int, default=3, help="--big: runs of each row")
    parser.add_argument("--code", type=Path, default=ROOT, help="--big: the tree whose verbs are timed (default this one)")
    args = parser.parse_args()
    if args.big:
        big_main(args.big, args.runs, args.code)
        return

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

        plan = read_plan(results)
        fake_done(results, plan, args.cells // 2)
        gone = plan.cell_ids[args.cells // 2:args.cells // 2 + 100]
        registry.append_entries(results, [Submission(cid, "slurm", f"1_{i}", "n1-g1-t1", "2026-01-01T00:00:00+00:00")
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


# --- 100,000 cells: plan, and status with half of them done (--big) -------------------------------------

BIG_STUDY = """name = "big"
max_cells = {cells}
[cluster]
time_min = 60
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 32
epochs = 1
timed_epoch = 1
loader_workers = 0
batch_per_gpu = 16
engine = "single"
[[grid]]
lr = {lr}
weight_decay = {wd}
momentum = {momentum}
"""
CANNED = "#!/bin/sh\necho {name} >> \"{calls}\"\ncat \"{text}\"\n"


def big_study(cells: int) -> str:
    """The issue's grid, lr x weight_decay x momentum: (cells / 1,000) x 100 x 10."""
    return BIG_STUDY.format(cells=cells, lr=[round(0.001 * (i + 1), 6) for i in range(cells // 1000)],
                            wd=[round(1e-5 * (i + 1), 8) for i in range(100)], momentum=[0.05 * i for i in range(10)])


def timed_run(env: dict, argv: list[str]) -> tuple[float, float, str]:
    """One verb in its own process: wall seconds, its peak RSS (MB, from wait4) and its output."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "orchestrator", *argv], env=env, stdout=out, stderr=err,
                                cwd=env["PYTHONPATH"])  # -m imports from the working dir first
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read()
        if proc.returncode not in (0, 1):
            sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{text[-2000:]}\n{err.read()[-2000:]}")
    return seconds, usage.ru_maxrss / 1024, text


def big_result(cell, n: int) -> dict:
    """A training result as a job writes it: one timed epoch, its run's clock and node."""
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=n)
    env = {"hostname": "n1", "hostnames": ["n1"], "nodes": ["n1"], "gpu_model": "NVIDIA H100", "job_id": "1",
           "started_at": start.isoformat(), "ended_at": (start + dt.timedelta(seconds=40)).isoformat(),
           "torch": "2.11.0", "cuda": "13.0", "world_size": 1}
    epoch = EpochStats(1, 10.0, 9.0, 32, 3.2, 2.3, 0.1, cell.lr, 1.0, 0.1, 8.9, None, 2.3, 0.1, 100, 0.5)
    body = TrainBody([epoch], Timed(1, 10.0, 9.0), None, {"gpus": 1, "util_mean_pct": 50.0})
    return Result(cell.cell_id, cell.to_dict(), "ok", env=env, peak_mem_gib=1.5, run_seed=0, body=body).to_dict()


def fabricate(results: Path, plan: Plan, canned: Path, failed: int = 100) -> None:
    """The first half of the cells done (a result file each, sacct lists their jobs COMPLETED); the
    next `failed` FAILED in sacct without a result; the rest pending in squeue, submitted a minute
    ago. Every cell submitted, 1,000 to an sbatch (intent and submission lines as submit writes)."""
    ids, half = plan.cell_ids, len(plan.cell_ids) // 2
    for n, cell_id in enumerate(ids[:half]):
        (results / f"{cell_id}.json").write_text(json.dumps(big_result(plan.cell(cell_id), n), indent=1, sort_keys=True))
    when = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=60)).isoformat(timespec="seconds")
    records, squeue, sacct = [], [], []
    for a, start in enumerate(range(0, len(ids), 1000)):
        chunk, token = ids[start:start + 1000], f"{a:08x}"
        name = job_name(plan, plan.arrays[0], token)
        intent = Intent(token, plan.arrays[0].name, name, tuple(chunk), when, "logs")
        records.append(intent)
        for i, cell_id in enumerate(chunk):
            sub = submission_of(intent, str(900_000 + a), i, cell_id)
            records.append(sub)
            if start + i < half + failed:
                word = "COMPLETED" if start + i < half else "FAILED"
                sacct.append(f"{sub.job_id}|{word}|40|n1|{'0:0' if word == 'COMPLETED' else '1:0'}|"
                             f"billing=1,cpu=1,gres/gpu=1,node=1|{name}")
            else:
                squeue.append(f"{sub.job_id}|PENDING|0:00||Priority|{name}")
    registry.append_entries(results, records)
    (canned / "squeue.txt").write_text("\n".join(squeue) + "\n")
    (canned / "sacct.txt").write_text("\n".join(sacct) + "\n")


def spread(values: list[float], unit: str = "") -> str:
    """"median (min-max)"."""
    values = sorted(values)
    return f"{values[len(values) // 2]:.2f}{unit} ({values[0]:.2f}-{values[-1]:.2f})"


def big_rows(env: dict, argv: list[str], runs: int, before=None, calls: Path | None = None) -> tuple[str, str, str, str]:
    """`runs` runs of one verb: wall s and peak MB as median (min-max), the 1-minute load at each
    start (min-max), and the SLURM commands of the last run with the first line it printed (what
    status saw). `before` runs first each time."""
    times, mems, loads, out, per_run = [], [], [], "", Counter()
    for _ in range(runs):
        if before:
            before()
        loads.append(os.getloadavg()[0])
        seconds, mb, out = timed_run(env, argv)
        times.append(seconds)
        mems.append(mb)
        if calls is not None:
            per_run = counted(calls)
            assert per_run["squeue"] <= 1 and per_run["sacct"] <= 1, per_run
    saw = out.splitlines()[0].split(": ", 1)[-1].strip() if out and not out.startswith("{") else ""
    return spread(times), spread(mems), f"{min(loads):.1f}-{max(loads):.1f}", f"{dict(per_run) or '-'} {saw}"


def big_main(cells: int, runs: int, code: Path) -> None:
    work = Path(tempfile.mkdtemp(prefix="scale-big-"))
    canned, calls, results = work / "canned", work / "calls", work / "runs"
    canned.mkdir()
    for name in ("squeue", "sacct"):  # SLURM's answers for jobs it never ran: canned, counted
        (canned / name).write_text(CANNED.format(name=name, calls=calls, text=canned / f"{name}.txt"))
        (canned / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{canned}:{os.environ['PATH']}", PYTHONPATH=str(code))
    study = work / "big.toml"
    study.write_text(big_study(cells))
    common = ["--study", str(study), "--results", str(results)]
    rows = [("plan", *big_rows(env, ["plan", *common], runs, before=lambda: shutil.rmtree(results, True)))]
    size = (results / "plan.json").stat().st_size / 1e6
    plan = read_plan(results)
    fabricate(results, plan, canned)
    submitted = (results / "registry.jsonl").rename(work / "registry.jsonl")
    cache = results / ".status-cache"
    cold = lambda: cache.unlink(missing_ok=True)  # noqa: E731
    status = ["status", *common]
    rows.append(("status, half with results, none submitted: first run (no status cache)",
                 *big_rows(env, status, runs, before=cold, calls=calls)))
    rows.append(("status, half with results, none submitted", *big_rows(env, status, runs, calls=calls)))
    submitted.rename(results / "registry.jsonl")
    rows.append(("status, all submitted: half done (sacct), 100 failed (sacct), the rest pending (squeue)",
                 *big_rows(env, status, runs, calls=calls)))
    rows.append(("the same, `status --json`", *big_rows(env, [*status, "--json"], runs, calls=calls)))
    print(f"# {cells:,} cells (lr x weight_decay x momentum, {cells // 1000} x 100 x 10), {runs} runs each; "
          f"code {code}; {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"plan.json {size:.1f} MB")
    print("| step | wall s, median (min-max) | peak RSS MB, median (min-max) | load (1 min) | SLURM commands (per run), "
          "what it saw |")
    print("|---|---|---|---|---|")
    for step, seconds, mb, load, commands in rows:
        print(f"| {step} | {seconds} | {mb} | {load} | {commands} |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
