"""The results dirs the collect tests read, worked by hand (their numbers are in the docstrings):
the mixed training dir (every status, Q4's runs), the seed's own timings, a PTQ study of three
training seeds and an all-reduce study; and `by`, the one row of a table."""
from __future__ import annotations

import tarfile
from collections.abc import Iterable
from pathlib import Path

from jobs.allreduce.cell import DDP_BUCKET_BYTES as BUCKET, GRADIENT_BYTES as GRADIENT, AllreduceCell
from jobs.core.result import Result
from jobs.ptq.cell import PTQCell
from jobs.train.cell import Cell
from tests.factories import allreduce_result, cell, ptq_cell, ptq_result, train_result, write_results


def q4(b: int, **remedy) -> Cell:
    return cell("ddp", b, 4, epochs=5, timed_epoch=5, **remedy)


def mixed_results() -> list[Result]:
    """The mixed dir's results: ok cells (one with three repeats), oom, failed, timeout, pending (in the
    registry, no result) and not submitted (planned only), and Q4's 5-epoch runs.

    1 GPU   b32: 40 s (train 32)   b128: repeats 20/22/30 s (train 16/17/25) -> median 22 (17)
            GPU sampled: b32 utilization 55%, peak 2.5 GiB; b128 80/90/85% -> 85%, 6 GiB (the rest: none)
            b512, b2048: OOM       b8192: pending
    2 GPUs  DDP b32: 25 s (train 20; h2d 1, compute 16, exposed comm 2; busbw 40 GB/s)   DDP b128: failed
            DP  b32: 30 s (train 24)                                                      DP  b128: pending
    4 GPUs  DDP b32: 12.5 s (train 10; h2d 0.5, compute 8, exposed comm 1.5; busbw 50)   DDP b128: not submitted
            DP  b32: timeout                                                              DP  b128: not in study
    Q4 (5 epochs): 1 GPU b128 (loss 0.8, acc 0.70); 4 GPUs DDP b2048 none (1.6, 0.42), linear (1.5, 0.52),
            linear + 2 warmup (1.4, 0.62); b8192: OOM. Test accuracy after epoch 5: 0.68, 0.40, 0.50, 0.60
            (only Q4's runs recorded test figures: the others read as results from before test evaluation)
    Every other epoch takes 1.5x the timed one; the GPU is an NVIDIA H200.
    """
    single = [train_result(cell("single", 32), epoch_s=40.0, train_s=32.0, gpu_util_pct=55.0, peak_mem_gib=2.5)]
    single += [train_result(cell("single", 128, repeat=i), epoch_s=e, train_s=t, gpu_util_pct=u, peak_mem_gib=6.0)
               for i, (e, t, u) in enumerate([(20.0, 16.0, 80.0), (22.0, 17.0, 90.0), (30.0, 25.0, 85.0)])]
    single += [train_result(cell("single", 512), status="oom"), train_result(cell("single", 2048), status="oom")]
    multi = [
        train_result(cell("ddp", 32, 2), epoch_s=25.0, train_s=20.0, h2d_s=1.0, compute_s=16.0, comm_exposed_s=2.0,
                     busbw_gbps=40.0),
        train_result(cell("ddp", 128, 2), status="failed", error="Traceback ...\nRuntimeError: NCCL error"),
        train_result(cell("dp", 32, 2), epoch_s=30.0, train_s=24.0),
        train_result(cell("ddp", 32, 4), epoch_s=12.5, train_s=10.0, h2d_s=0.5, compute_s=8.0, comm_exposed_s=1.5,
                     busbw_gbps=50.0),
        train_result(cell("dp", 32, 4), status="timeout"),
    ]
    large = [
        train_result(cell("single", 128, epochs=5, timed_epoch=5), losses=[2.0, 1.5, 1.2, 1.0, 0.8],
                     accuracies=[0.3, 0.45, 0.55, 0.62, 0.70], test_accuracies=[0.35, 0.5, 0.58, 0.63, 0.68]),
        train_result(q4(2048), losses=[2.3, 2.1, 1.9, 1.7, 1.6], accuracies=[0.1, 0.2, 0.3, 0.38, 0.42],
                     test_accuracies=[0.1, 0.18, 0.27, 0.33, 0.40]),
        train_result(q4(2048, lr_scaling="linear"), losses=[2.2, 2.0, 1.8, 1.6, 1.5],
                     accuracies=[0.15, 0.25, 0.35, 0.48, 0.52], lrs=[6.4] * 5, test_accuracies=[0.12, 0.22, 0.3, 0.44, 0.5]),
        train_result(q4(2048, lr_scaling="linear", warmup_epochs=2), losses=[2.2, 2.0, 1.7, 1.5, 1.4],
                     accuracies=[0.2, 0.3, 0.4, 0.58, 0.62], lrs=[3.25, 6.4, 6.4, 6.4, 6.4],
                     test_accuracies=[0.18, 0.28, 0.38, 0.55, 0.6]),
        train_result(q4(8192), status="oom"),
    ]
    return single + multi + large


PENDING = (cell("single", 8192), cell("dp", 128, 2))
MISSING = (cell("ddp", 128, 4),)


def write_mixed(path: Path) -> Path:
    return write_results(path, mixed_results(), planned=PENDING + MISSING, submitted=PENDING, study="mixed")


# The seed's own timings (reference/h200-baseline.md: a naive script on H200s): engine, batch per GPU,
# GPUs, epoch seconds, of which waiting on data. Written as results: train time = epoch - data wait.
SEED_TIMINGS = (("single", 32, 1, 15.43, 1.76), ("single", 128, 1, 5.98, 2.47), ("single", 512, 1, 4.64, 2.88),
                ("dp", 128, 2, 9.41, 0.38), ("dp", 128, 4, 7.18, 1.12), ("dp", 512, 4, 5.56, 3.77),
                ("ddp", 128, 4, 1.88, 0.26), ("ddp", 512, 4, 1.73, 1.43))


def seed_results() -> list[Result]:
    return [train_result(cell(e, b, g), epoch_s=t, train_s=round(t - w, 2)) for e, b, g, t, w in SEED_TIMINGS]


# Per training seed (repeat 0, 1, 2), the six notebook variants' accuracies (factories.NOTEBOOK's order).
NOTEBOOK_ACCURACY = ((0.50, 0.51, 0.49, 0.55, 0.50, 0.55),
                     (0.54, 0.53, 0.52, 0.52, 0.47, 0.53),
                     (0.52, 0.52, 0.52, 0.56, 0.50, 0.55))
PTQ_MISSING = (ptq_cell(4),)


def ptq_results(mismatches: int = 0) -> list[Result]:
    """Three ok seeds (NOTEBOOK_ACCURACY; `mismatches` predictions differ on seed 1's integer runs)
    and a failed one (repeat 3)."""
    ok = [ptq_result(ptq_cell(i), a, mismatches=mismatches if i == 1 else 0) for i, a in enumerate(NOTEBOOK_ACCURACY)]
    return ok + [ptq_result(ptq_cell(3), status="failed", error="Traceback ...\nRuntimeError: CUDA error")]


def write_ptq(path: Path, results: Iterable[Result] = (), planned: Iterable[PTQCell] = PTQ_MISSING) -> Path:
    """A PTQ results dir: ptq_results() (or `results`), a plan listing them and `planned` (missing)."""
    return write_results(path, list(results) or ptq_results(), planned, study="ptq-by-hand")


# An all-reduce study: 4 GPUs (three repeats) and 2 nodes x 2 GPUs (one ok, one failed, one not submitted).

ONE_NODE = dict(gpus_per_node=4, min_bytes=8, max_bytes=32)  # sizes 8, 16, 32, the bucket, the gradient
TWO_NODES = dict(nodes=2, gpus_per_node=2, min_bytes=8, max_bytes=32)
# Seconds per size (us for the small ones; algbw in GB/s for the big ones: seconds = bytes / algbw / 1e9).
# 4 GPUs, three repeats:   8 B: 10, 12, 14 us -> 12;  16 B: 20, 22, 30 -> 22;  32 B: 30, 30, 30 -> 30
#                          bucket: algbw 8, 10, 12 -> busbw x 1.5 = 12, 15, 18 -> 15 (12-18)
#                          gradient: algbw 10, 12, 11 -> busbw 15, 18, 16.5 -> 16.5 (15-18)
#   gradient time: 44,695,848 B / (10, 12, 11) GB/s = 4,470, 3,725, 4,063 us -> 4,063 (3,725-4,470)
#   peak 16.5; latency-bound: time <= 2 x 12 = 24 us: 8 B, 16 B; bandwidth-bound: busbw >= 13.2: both big ones
# 2 nodes x 2 GPUs, one ok repeat: 8, 16, 32 B: 20 us each; bucket algbw 5 -> busbw 7.5; gradient algbw 6 -> 9
#   peak 9; latency-bound: the three small ones (<= 40 us); bandwidth-bound (>= 7.2): both big ones
SMALL = {0: (10e-6, 20e-6, 30e-6), 1: (12e-6, 22e-6, 30e-6), 2: (14e-6, 30e-6, 30e-6)}
BIG = {0: (8.0, 10.0), 1: (10.0, 12.0), 2: (12.0, 11.0)}  # algbw at (bucket, gradient)
ALLREDUCE_NOT_SUBMITTED = (AllreduceCell(**TWO_NODES, repeat=2),)  # planned, no result


def seconds(small: tuple[float, ...], big: tuple[float, float]) -> dict[int, float]:
    """Seconds per size: `small` at 8, 16, 32 B; the bucket and the gradient at algbw big[0], big[1] GB/s."""
    return dict(zip((8, 16, 32), small, strict=True)) | {BUCKET: BUCKET / big[0] / 1e9, GRADIENT: GRADIENT / big[1] / 1e9}


def allreduce_results() -> list[Result]:
    """4 GPUs: three ok repeats (SMALL, BIG); 2 nodes x 2 GPUs: one ok (20 us; algbw 5, 6), one failed."""
    one = [AllreduceCell(**ONE_NODE, repeat=r) for r in range(3)]
    two = [AllreduceCell(**TWO_NODES, repeat=r) for r in range(2)]
    results = [allreduce_result(c, seconds(SMALL[c.repeat], BIG[c.repeat])) for c in one]
    return results + [allreduce_result(two[0], seconds((20e-6,) * 3, (5.0, 6.0))),
                      allreduce_result(two[1], status="failed",
                                       error="Traceback ...\nRuntimeError: NCCL error: unhandled system error")]


def write_allreduce(path: Path, results: Iterable[Result] = (),
                    planned: Iterable[AllreduceCell] = ALLREDUCE_NOT_SUBMITTED) -> Path:
    """An all-reduce results dir: allreduce_results() (or `results`), a plan listing them and `planned`."""
    return write_results(path, list(results) or allreduce_results(), planned, study="allreduce-by-hand")


def by(table, **match):
    """The one row of `table` whose columns hold these values."""
    rows = table
    for key, value in match.items():
        rows = rows[rows[key] == value]
    assert len(rows) == 1, f"{match}: {len(rows)} rows"
    return rows.iloc[0]


# A full hw5 result set (orchestrator/studies/hw5.toml, every cell) from a student's Part A hand-in
# (reference/000_3cea5690a804fb3d.txt): per-GPU epoch times (Table 1), train times without data
# loading (Q1; Table 2's first column for the multi-GPU runs, so TN - T1/N is its second column),
# Q4.1's 5th epoch. DataParallel is the hand-in's numbers; DDP takes 0.9x its epoch, its exposed
# all-reduce is Table 2's communication, busbw 40 GB/s. Batch 2048 on 1 GPU (205 s, 204 s training)
# and 2 nodes x 2 GPUs (90, 70, 65 s; train 0.9x) are made up; 8192 and up: OOM.
HW5_Q1 = {32: (271.984, 269.804), 128: (229.739, 228.871), 512: (211.854, 211.488), 2048: (205.0, 204.0)}
HW5_EPOCH = {(2, 32): 153.240, (2, 128): 125.222, (2, 512): 116.669, (4, 32): 79.637, (4, 128): 63.705, (4, 512): 58.438}
HW5_TRAIN = {(2, 32): 152.249, (2, 128): 124.729, (2, 512): 116.121, (4, 32): 78.910, (4, 128): 63.170, (4, 512): 57.686}
HW5_NODES = {32: 90.0, 128: 70.0, 512: 65.0}
HW5_Q4 = {"baseline": (0.685, 0.7955), "none": (0.6444, 0.2750), "linear": (0.60, 0.55), "warmup": (0.55, 0.78)}
HW5_SPREAD = (1.0, 0.98, 1.02)  # repeat r's times are these x the figure (three repeats: the middle is the median)


def _curve(last: float) -> list[float]:
    return [last * k for k in (0.5, 0.7, 0.8, 0.9, 1.0)]


def _falling(last: float) -> list[float]:
    return [last * k for k in (2.0, 1.6, 1.3, 1.1, 1.0)]


def hw5_results(repeats: int = 1, q4: dict = HW5_Q4) -> list[Result]:
    """Every cell of hw5.toml with a result (module comment: the numbers); `repeats` of each."""
    out: list[Result] = []
    for r in range(repeats):
        k = HW5_SPREAD[r]
        for b in (32, 128, 512, 2048):
            epoch, train = HW5_Q1[b]
            out.append(train_result(cell("single", b, repeat=r), epoch_s=epoch * k, train_s=train * k,
                                    gpu_util_pct=60.0 + b / 64, peak_mem_gib=b / 200))
        out += [train_result(cell("single", b, repeat=r), status="oom") for b in (8192, 32768)]
        for (n, b), epoch in HW5_EPOCH.items():
            t = HW5_TRAIN[n, b]
            out.append(train_result(cell("dp", b, n, repeat=r), epoch_s=epoch * k, train_s=t * k))
            out.append(train_result(cell("ddp", b, n, repeat=r), epoch_s=0.9 * epoch * k, train_s=t * k, h2d_s=1.0,
                                    compute_s=HW5_Q1[b][1] / n * k, comm_exposed_s=max(0.0, t - HW5_Q1[b][1] / n) * k,
                                    busbw_gbps=40.0))
        for b, epoch in HW5_NODES.items():
            out.append(train_result(cell("ddp", b, 4, nodes=2, repeat=r), epoch_s=epoch * k, train_s=0.9 * epoch * k,
                                    comm_exposed_s=5.0 * k, busbw_gbps=20.0))
        five = dict(epochs=5, timed_epoch=5, repeat=r)
        loss, acc = q4["baseline"]
        out.append(train_result(cell("single", 128, **five), losses=_falling(loss), accuracies=_curve(acc * k)))
        for remedy, fields in (("none", {}), ("linear", {"lr_scaling": "linear"}),
                               ("warmup", {"lr_scaling": "linear", "warmup_epochs": 2})):
            loss, acc = q4[remedy]
            out.append(train_result(cell("ddp", 2048, 4, **five, **fields), losses=_falling(loss),
                                    accuracies=_curve(acc * k)))
            out.append(train_result(cell("ddp", 8192, 4, **five, **fields), status="oom"))
    return out


def write_hw5(path: Path, repeats: int = 1, **kwargs) -> Path:
    return write_results(path, hw5_results(repeats, **kwargs), study="hw5")


# The lab study (orchestrator/studies/lab.toml), every cell, one repeat: ResNet-18, 5 epochs, batch 128
# per GPU, LR x global batch / 128. Time to train (5 epochs, all but the timed 2nd 1.5x: 7 x the timed one):
# 1 GPU 60 s timed epoch (data wait 6 s), 2 GPUs 32 s, 4 GPUs 17 s (data wait 2 s, exposed all-reduce
# 6 s), 2 nodes x 2 GPUs 20 s (exposed all-reduce 8 s). Test accuracy after the 5th epoch: 0.80, 0.79,
# 0.78, 0.77; the 2-node sweep: linear + warmup 1 epoch 0.81, the others 0.70-0.77.
LAB_TIMES = {(1, 1): (60.0, 6.0, None), (1, 2): (32.0, 3.0, 3.0), (1, 4): (17.0, 2.0, 6.0), (2, 2): (20.0, 2.0, 8.0)}
LAB_SWEEP = {("linear", 0): 0.77, ("linear", 1): 0.81, ("linear", 2): 0.79, ("sqrt", 0): 0.74, ("sqrt", 1): 0.75,
             ("sqrt", 2): 0.76, ("none", 0): 0.70}


def _lab(engine: str, nodes: int, per_node: int, accuracy: float, **fields) -> Result:
    epoch, wait, comm = LAB_TIMES[nodes, per_node]
    c = cell(engine, 128, nodes * per_node, nodes=nodes, epochs=5, timed_epoch=2, **fields)
    return train_result(c, epoch_s=epoch, train_s=epoch - wait, comm_exposed_s=comm,
                        busbw_gbps=40.0 if comm else None, gpu_util_pct=70.0 - 5 * per_node,
                        test_accuracies=[accuracy * k for k in (0.5, 0.7, 0.8, 0.9, 1.0)])


def lab_results() -> list[Result]:
    linear = dict(lr_scaling="linear", lr_ref_batch=128)
    out = [_lab("single", 1, 1, 0.80, **linear), _lab("ddp", 1, 2, 0.79, **linear), _lab("ddp", 1, 4, 0.78, **linear)]
    return out + [_lab("ddp", 2, 2, acc, lr_scaling=rule, lr_ref_batch=128, warmup_epochs=warmup)
                  for (rule, warmup), acc in LAB_SWEEP.items()]


def write_lab(path: Path) -> Path:
    return write_results(path, lab_results(), study="lab")


# A real result set: the hw5 study on a node of 4 NVIDIA H100 80GB HBM3 (run 8: synthetic CIFAR-10 at
# full size, one repeat, the local executor; 27 results, the 5-epoch DDP cell at 8192 per GPU with linear
# scaling and warmup ended without a result). Committed; collect writes into a results dir: copy it first.
REAL_HW5 = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "h100x4-run8" / "hw5"
# Run 7's result sets on 2 NVIDIA H200s (a tarball of runs/<name>/): r7a is the faithful pipeline, batch 128
# and 512 on 1 and 2 GPUs, three repeats (collect --compare's real baseline for REAL_HW5).
RUN7_TGZ = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "h200x2-run7-results.tgz"


def untar_run(tgz: Path, name: str, root: Path) -> Path:
    """One run's result set (runs/<name>/) of a committed tarball, unpacked under `root`."""
    with tarfile.open(tgz) as tar:
        tar.extractall(root, members=[m for m in tar.getmembers() if m.name.split("/")[1:2] == [name]], filter="data")
    return root / "runs" / name


# Two sets to compare (collect --compare): a configuration's repeats, 1% apart.
JITTER = (1.0, 1.01, 0.99)
SINGLE = dict(engine="single", b=128, gpus=1)
DDP = dict(engine="ddp", b=128, gpus=2)


def repeats(c_fields: dict, epoch_s: float, gpu_model: str = "NVIDIA H200", status: str = "ok", runs: int = 3):
    """`runs` repeats of the cell of `c_fields`, its timed epoch epoch_s x JITTER (train 0.8 x that)."""
    return [train_result(cell(repeat=r, **c_fields), status, epoch_s=epoch_s * JITTER[r], train_s=0.8 * epoch_s * JITTER[r],
                         gpu_model=gpu_model) for r in range(runs)]
