"""The GPU benchmark's numbers and the issue's targets, as Markdown: python benchmarks/summarize.py RESULTS_DIR"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from collect.details import verdict_text
from collect.verdict import BEYOND, verdict
from jobs.core.layout import result_files
from jobs.core.result import Result, read_result
from jobs.train.result import train_body


def fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def row(r: Result) -> str:
    c, e = r.cell, (train_body(r).epochs[-1] if train_body(r).epochs else None)
    graph = "graph" if r.env.get("cuda_graph") else "eager"
    util = train_body(r).gpu_util["util_mean_pct"] if train_body(r).gpu_util else None
    first = train_body(r).epochs[0].epoch_s if train_body(r).epochs else None
    busbw = train_body(r).comm.busbw_gbps if train_body(r).comm else None
    return (f"| {c['pipeline']} | {c['engine']} | {c['nodes'] * c['gpus_per_node']} | {c['batch_per_gpu']} | {c['repeat']} "
            f"| {r.status} | {fmt(first)} | {fmt(train_body(r).timed.epoch_s if train_body(r).timed else None)} | {fmt(train_body(r).timed.train_s if train_body(r).timed else None)} "
            f"| {fmt(e.data_wait_s if e else None)} | {fmt(e.h2d_s if e else None)} | {fmt(e.compute_s if e else None)} "
            f"| {fmt(e.comm_exposed_s if e else None, 4)} | {fmt(busbw, 1)} | {fmt(util, 0)} | {fmt(r.peak_mem_gib, 1)} | {graph} |")


def timed(results, **want):
    hits = [train_body(r).timed.epoch_s for r in results if train_body(r).timed and all(r.cell[k] == v for k, v in want.items())]
    return hits


def spread(values: list[float]) -> str:
    values = sorted(values)
    return f"{statistics.median(values):.3f} ({values[0]:.3f}-{values[-1]:.3f})" if len(values) > 1 else f"{values[0]:.3f}"


def reference_table(results_dir: Path, results: list[Result]) -> list[str]:
    """The plain homework loop against the faithful cells, per configuration: medians over
    repeats with their range, and faithful / reference of the medians with the one rule's verdict
    (collect.verdict, threshold 2%: the target is "not slower beyond 2%"; MISS where it is, PASS
    where it is not, UNSETTLED where the repeats cannot tell). Both sides' "epoch - wait" is the
    epoch less the time blocked on the loader (host clock), the one figure the plain loop can give
    without timing its steps."""
    runs: dict[tuple, list[dict]] = {}
    for path in sorted((results_dir / "reference").glob("*.json")):
        ref = json.loads(path.read_text())
        engine = "single" if ref["gpus"] == 1 else "ddp"
        runs.setdefault((engine, ref["gpus"], ref["batch_per_gpu"]), []).append(ref["epochs"][-1])
    lines = ["| engine | GPUs | batch/GPU | runs | reference epoch s | faithful epoch s | ratio | reference epoch - wait s "
             "| faithful epoch - wait s | ratio | verdict (2%) | target |", "|" + "---|" * 12]
    for (engine, gpus, batch), refs in sorted(runs.items()):
        mine = [{"epoch_s": e.epoch_s, "train_s": e.epoch_s - e.data_wait_s}
                for r in results if train_body(r).timed and r.cell["pipeline"] == "faithful" and r.cell["engine"] == engine
                and r.cell["nodes"] * r.cell["gpus_per_node"] == gpus and r.cell["batch_per_gpu"] == batch
                for e in [train_body(r).epochs[train_body(r).timed.epoch - 1]]]
        if not mine:
            continue
        verdicts = [verdict([e[k] for e in refs], [t[k] for t in mine], threshold=0.02) for k in ("epoch_s", "train_s")]
        lines.append(f"| {engine} | {gpus} | {batch} | {len(refs)} + {len(mine)} | {spread([e['epoch_s'] for e in refs])} "
                     f"| {spread([t['epoch_s'] for t in mine])} | {verdicts[0].ratio:.3f} "
                     f"| {spread([e['train_s'] for e in refs])} "
                     f"| {spread([t['train_s'] for t in mine])} | {verdicts[1].ratio:.3f} "
                     f"| {'; '.join(verdict_text(v) for v in verdicts)} | {target(verdicts)} |")
    return lines if len(lines) > 2 else []


def target(verdicts) -> str:
    """MISS where a verdict finds the faithful side slower beyond the threshold; UNSETTLED where one
    cannot tell (one run a side, or an interval reaching past the threshold); PASS otherwise."""
    if any(v.outcome == BEYOND and v.direction > 0 for v in verdicts):
        return "MISS"
    return "PASS" if all(v.outcome == BEYOND or v.outcome == "equivalent" for v in verdicts) else "UNSETTLED"


def main(results_dir: Path) -> None:
    results = [read_result(p) for p in result_files(results_dir)]
    env = next((r.env for r in results if r.env.get("gpu_model")), {})
    print(f"GPU: {env.get('gpu_model')} x{env.get('gpus_visible')}, driver {env.get('driver')}, torch {env.get('torch')}, "
          f"CUDA {env.get('cuda')}, cuDNN {env.get('cudnn')}, NCCL {env.get('nccl')}\n")
    print("| pipeline | engine | GPUs | batch/GPU | repeat | status | epoch 1 s | epoch 2 s | train s | data s | h2d s "
          "| compute s | exposed comm s | busbw GB/s | GPU util % | peak GiB | step |")
    print("|" + "---|" * 17)
    for r in sorted(results, key=lambda r: (r.cell["pipeline"], r.cell["engine"], r.cell["gpus_per_node"], r.cell["batch_per_gpu"], r.cell["repeat"])):
        print(row(r))
    comparison = reference_table(results_dir, results)
    if comparison:
        print("\nThe plain homework loop (benchmarks/reference_loop.py) against the faithful cells, timed epoch;"
              " median (min-max) over repeats; ratio = faithful / reference of the medians:\n")
        print("\n".join(comparison))
    print("\nTargets (second epoch):")
    checks = []
    faithful = timed(results, pipeline="faithful", engine="ddp", gpus_per_node=4, batch_per_gpu=128)
    checks.append(("faithful DDP 4 GPUs b128 <= 2.0 s", faithful, faithful and faithful[0] <= 2.0))
    one = timed(results, pipeline="fast", engine="single", batch_per_gpu=512)
    checks.append(("fast 1 GPU b512 <= 0.40 s (median of repeats)", one, one and sorted(one)[len(one) // 2] <= 0.40))
    four = timed(results, pipeline="fast", engine="ddp", gpus_per_node=4, batch_per_gpu=512)
    checks.append(("fast DDP 4 GPUs b512 <= 0.12 s", four, four and four[0] <= 0.12))
    for n in (2, 4):
        for b in (128, 512):
            t1 = timed(results, pipeline="fast", engine="single", batch_per_gpu=b)
            tn = timed(results, pipeline="fast", engine="ddp", gpus_per_node=n, batch_per_gpu=b)
            eff = min(t1) / (n * tn[0]) if t1 and tn else None
            checks.append((f"fast weak-scaling efficiency T1/({n} T{n}) at b{b} >= 0.85", eff, eff is not None and eff >= 0.85))
    if len(one) >= 3:
        spread = (max(one) - min(one)) / min(one)
        checks.append(("three repeats agree within 5%", f"{spread:.1%}", spread <= 0.05))
    plain_file = results_dir / "allreduce-plain.json"
    job = next((train_body(r).comm for r in results if train_body(r).comm and r.cell["pipeline"] == "fast"), None)
    if plain_file.is_file() and job:
        plain = next(p for p in json.loads(plain_file.read_text()) if p["bytes"] == job.grad_bytes)
        v = verdict([plain["busbw_gbps"]], [job.busbw_gbps], threshold=0.15)  # one figure a side: never settled
        checks.append((f"in-job busbw (44.7 MB, {job.world_size} GPUs) within 15% of plain",
                       f"{job.busbw_gbps:.1f} vs {plain['busbw_gbps']:.1f} GB/s: {verdict_text(v)}", v.outcome == "equivalent"))
    for name, value, ok in checks:
        outcome = "not run" if value in ([], None) else ("PASS" if ok else "MISS")
        print(f"- {outcome} {name}: {value}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
