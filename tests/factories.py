"""Results as the jobs write them, one factory per kind (train_result, ptq_result,
allreduce_result, command_result), and the one writer of a results dir of any kind's cells (write_results:
result files, plan.json, registry.jsonl), through the writers the orchestrator and the jobs use.
The dirs the collect tests read, worked by hand, are in tests/collect/dirs.py."""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Optional

from jobs.allreduce.cell import AllreduceCell
from jobs.allreduce.result import AllreduceFindings, SizeTiming
from jobs.command.cell import CommandCell
from jobs.command.result import CommandFindings
from jobs.core.bandwidth import bandwidth_gbps
from jobs.core.cell import StudyCell
from jobs.core.kinds import cell_from_dict
from jobs.core.result import Result, Status, write_result
from jobs.ptq.cell import PTQCell
from jobs.ptq.config import QuantSpec
from jobs.ptq.result import (ActivationLayerStats, Histogram, IntegerAgreement, IntegerCheck, LayerScales, PTQFindings,
                             PTQOutcome, TensorStats, VariantResult, WeightLayerStats)
from jobs.train.cell import Cell
from jobs.train.result import CommStats, EpochStats, Timed, TrainBody
from orchestrator.plan.plan import build_plan, install_plan
from jobs.core.phases import Phases
from orchestrator.plan.study import ClusterSpec, Study

GPU = "NVIDIA H200"
STARTED, ENDED = "2025-04-01T10:00:00+00:00", "2025-04-01T10:05:00+00:00"


# --- the training kind ------------------------------------------------------------------------

def cell(engine: str = "single", b: int = 32, gpus: int = 1, nodes: int = 1, **fields) -> Cell:
    """A training cell with `gpus` GPUs in all, spread over `nodes` nodes."""
    return Cell(engine=engine, batch_per_gpu=b, nodes=nodes, gpus_per_node=gpus // nodes, **fields)


def train_result(c: Cell, status: str = "ok", epoch_s: float = 10.0, train_s: float = 8.0, *,
                 h2d_s: float = 0.5, compute_s: float = 7.0, comm_exposed_s: Optional[float] = None,
                 busbw_gbps: Optional[float] = None, grad_bytes: int = 44_695_848,
                 losses: Optional[Sequence[float]] = None, accuracies: Optional[Sequence[float]] = None,
                 lrs: Optional[Sequence[float]] = None, gpu_model: str = GPU, error: Optional[str] = None,
                 test_accuracies: Optional[Sequence[float]] = None, seeded: bool = True,
                 env: Optional[dict] = None, gpu_util_pct: Optional[float] = None,
                 peak_mem_gib: Optional[float] = None) -> Result:
    """A result of `c`: its timed epoch takes epoch_s (train_s without data wait); other epochs
    take 1.5x (warm-up). comm is filled when busbw_gbps is given. With test_accuracies, each epoch
    has them over c.test_images images, test loss 2 x (1 - accuracy), 1 s of evaluation; without,
    none (as a result written before the job evaluated the test set). Not `seeded`: no run_seed, as a
    result written before repeats were seeded (every repeat trained with the cell's seed). `env`
    replaces the run's environment (default: a node with `gpu_model`, run from 10:00 to 10:05). With
    gpu_util_pct, the timed epoch's GPU samples (spanning it) have that mean utilization; peak_mem_gib
    is torch's peak allocation (None: none, as on a CPU).
    A result that is not ok has `error` (or "<status>: by hand") and no findings, in every kind."""
    if env is None:
        env = {"gpu_model": gpu_model, "gpus_visible": c.gpus_per_node, "driver": "550.54", "torch": "2.5.1",
               "cuda": "12.4", "cudnn": 90100, "nccl": "2.21.5", "python": "3.11.7",
               "hostnames": [f"node{i + 1}" for i in range(c.nodes)],
               "started_at": STARTED, "ended_at": ENDED}
    out = Result(cell_id=c.cell_id, cell=c.to_dict(), status=Status(status), env=env,
                 run_seed=c.run_seed if seeded else None, peak_mem_gib=peak_mem_gib)
    if status != "ok":
        out.error = error or f"{status}: by hand"
        return out
    out.body = body = TrainBody()
    for e in range(1, c.epochs + 1):
        scale = 1.0 if e == c.timed_epoch else 1.5
        body.epochs.append(EpochStats(
            epoch=e, epoch_s=epoch_s * scale, train_s=train_s * scale, images=c.train_images,
            images_per_s=c.train_images / (epoch_s * scale), loss=losses[e - 1] if losses else 2.0 / e,
            accuracy=accuracies[e - 1] if accuracies else 0.1 * e, lr=lrs[e - 1] if lrs else c.lr,
            data_wait_s=max(0.0, epoch_s - train_s) * scale, h2d_s=h2d_s * scale, compute_s=compute_s * scale,
            comm_exposed_s=None if comm_exposed_s is None else comm_exposed_s * scale))
        if test_accuracies:
            last = body.epochs[-1]
            last.test_accuracy, last.test_loss = test_accuracies[e - 1], 2 * (1 - test_accuracies[e - 1])
            last.test_images, last.eval_s = c.test_images, 1.0
    body.timed = Timed(epoch=c.timed_epoch, epoch_s=epoch_s, train_s=train_s)
    if gpu_util_pct is not None:
        body.gpu_util = {"samples": round(epoch_s / 0.05), "interval_s": 0.05,  # samples span the timed epoch
                         "gpus": c.gpus_per_node if c.engine == "dp" else 1,
                         "util_mean_pct": gpu_util_pct, "util_median_pct": gpu_util_pct,
                         "mem_used_max_gib": (peak_mem_gib or 0.0) + 0.5}
    epochs_s, eval_s = sum(e.epoch_s for e in body.epochs), sum(e.eval_s or 0.0 for e in body.epochs)
    out.phases = Phases(start_s=3.0, setup_s=2.0, body_s=epochs_s + eval_s + 1.0, write_s=0.5, launch_s=1.0,
                        epochs_s=epochs_s, eval_s=eval_s, measure_s=1.0 if busbw_gbps is not None else 0.0)
    if busbw_gbps is not None:
        n = c.gpus
        algbw = busbw_gbps / (2 * (n - 1) / n)
        body.comm = CommStats(world_size=n, grad_bytes=grad_bytes, allreduce_s=grad_bytes / algbw / 1e9,
                              algbw_gbps=algbw, busbw_gbps=busbw_gbps, backend="nccl")
    return out


# --- the PTQ kind ---------------------------------------------------------------------------------
# Hand-built outcomes in the shape the job writes (jobs.ptq.result).

NOTEBOOK = ("Net float", "Net W8", "Net W8A8", "NetWithBias float", "NetWithBias W8 float-bias", "NetWithBias W8A8B32")
# The sweep's accuracy = the seed's Net float accuracy - this penalty.
WEIGHT_PENALTY = {("tensor", "max"): 0.04, ("tensor", "mse"): 0.02, ("channel", "max"): 0.01, ("channel", "mse"): 0.0,
                  ("tensor", "percentile"): 0.03, ("channel", "percentile"): 0.01}  # per channel: max's (50 weights)
ACTIVATION_PENALTY = {("max", 16): 0.40, ("max", 400): 0.30, ("mse", 16): 0.20, ("mse", 400): 0.10,
                      ("percentile", 16): 0.35, ("percentile", 400): 0.25}
LAYERS = ("conv1", "conv2", "fc1", "fc2", "fc3")
WEIGHT_SCALES = (700.0, 950.0, 1700.0, 870.0, 820.0)
OUTPUT_SCALES = (37.0, 25.0, 12.0, 22.0, 30.0)  # C_k = 127 / r_k


def ptq_cell(repeat: int = 0, **fields) -> PTQCell:
    """A small PTQ cell: weight bits 8 and 4 (per tensor and channel, max and MSE), activation
    bits 8 and 2 (max and MSE, 16 and 400 calibration images), 1000 test images."""
    settings = dict(dataset="synthetic", train_images=1000, test_images=1000, gpus_per_node=0, weight_bits=[8, 4],
                    activation_bits=[8, 2], range_methods=["max", "mse"], calibration_images=[16, 400])
    return PTQCell(repeat=repeat, **{**settings, **fields})


def sweep_penalty(spec: QuantSpec) -> float:
    if spec.activation_bits is None:
        return 0.0 if spec.weight_bits == 8 else WEIGHT_PENALTY[spec.granularity, spec.weight_method]
    if spec.activation_bits == 8:
        return 0.01 if spec.calibration_images == 16 else 0.0
    return ACTIVATION_PENALTY[spec.activation_method, spec.calibration_images]


def layer_scales(with_bias: bool, activations: bool = True) -> tuple[LayerScales, ...]:
    """W8A8's scales: n_w per tensor, C_0 = 127, C_k = OUTPUT_SCALES[k], n_out = C_k / (n_w C_{k-1});
    a bias only on fc3 (NetWithBias), at scale n_w C_{k-1}. Weights only (activations False): C_0 = 1,
    n_out = 1, so C_k = n_w C_{k-1}, the product of the weight scales so far."""
    scales, c_prev = [], 127.0 if activations else 1.0
    for name, n_w, c_out in zip(LAYERS, WEIGHT_SCALES, OUTPUT_SCALES, strict=True):
        c_out = c_out if activations else n_w * c_prev
        bias = (n_w * c_prev,) if with_bias and name == "fc3" else None
        scales.append(LayerScales(name, (n_w,) * 2, c_prev, (c_out / (n_w * c_prev),) * 2, c_out, bias,
                                  127 / c_out if activations else None))
        c_prev = c_out
    return tuple(scales)


def variant(name: str, model: str, spec: Optional[QuantSpec], accuracy: float, base: float, images: int,
            mismatches: int = 0) -> VariantResult:
    """One variant; integer-checked when it quantizes activations, run integer-only when it is the notebook's."""
    acts = spec is not None and spec.activation_bits is not None
    notebook = name in NOTEBOOK
    checks = tuple(IntegerCheck(layer, 1000, 0, 0) for layer in LAYERS) if acts else ()
    agreement = IntegerAgreement(images, mismatches, mismatches, "int32") if acts and notebook else None
    return VariantResult(name, "notebook" if notebook else "sweep", model, spec, accuracy, 1.5 - accuracy, images,
                         f"{model} float", accuracy - base, 127.0 if acts else None, None if spec is None else "float32",
                         layer_scales(model == "NetWithBias", acts) if spec and notebook else (), checks, agreement, 0.1)


def tensor_stats(name: str, low: float, high: float, mean: float, std: float) -> TensorStats:
    step = (high - low) / 4
    return TensorStats(name, 100, low, high, mean, std, mean - 3 * std, mean + 3 * std,
                       Histogram(tuple(low + i * step for i in range(5)), (10, 40, 40, 10)))


def ptq_outcome(c: PTQCell, accuracies: Sequence[float], mismatches: int = 0) -> PTQOutcome:
    """The six notebook variants at `accuracies`, then the cell's sweep (its float accuracy less
    sweep_penalty). Weights per layer: [-0.2, 0.25], mean 0.01, std 0.1 (3 sigma: [-0.29, 0.31],
    wider than max|w| = 0.25); activations: the input [-1, 1], mean 0, std 0.5 (3 sigma wider),
    conv1..fc3 [0, 9], mean 1, std 2/3 (3 sigma [-1, 3]: narrower than 9)."""
    config = c.config()
    net, bias = accuracies[0], accuracies[3]
    spec = config.notebook
    w8 = dataclasses.replace(spec, activation_bits=None)
    specs = (None, w8, spec, None, dataclasses.replace(w8, bias="float"), spec)
    models = ("Net",) * 3 + ("NetWithBias",) * 3
    variants = [variant(n, m, s, a, net if m == "Net" else bias, c.test_images, mismatches)
                for n, m, s, a in zip(NOTEBOOK, models, specs, accuracies, strict=True)]
    variants += [variant(f"Net {s.label()}", "Net", s, net - sweep_penalty(s), net, c.test_images) for s in config.sweep]
    weights = tuple(WeightLayerStats(tensor_stats(n, -0.2, 0.25, 0.01, 0.1), 8, 0.25, 127 / 0.25, 0.01) for n in LAYERS)
    activations = (ActivationLayerStats(tensor_stats("input", -1.0, 1.0, 0.0, 0.5), 8, 1.0, 127.0),) + tuple(
        ActivationLayerStats(tensor_stats(n, 0.0, 9.0, 1.0, 2 / 3), 8, 9.0, 127 / 9.0) for n in LAYERS)
    return PTQOutcome(config, tuple(variants), weights, activations, 400, 0.5, 3.0)


def ptq_result(c: PTQCell, accuracies: Sequence[float] = (0.50, 0.51, 0.49, 0.55, 0.50, 0.55), status: str = "ok",
               mismatches: int = 0, error: Optional[str] = None) -> Result:
    """A PTQ cell's result: the shared envelope, and under "ptq" the two trained networks and the
    outcome (the notebook's six variants at `accuracies`, `mismatches` of them in the integer runs)."""
    env = {"gpu_model": GPU, "gpus_visible": 1, "driver": "550.54", "torch": "2.5.1", "cuda": "12.4",
           "python": "3.11.7", "hostnames": ["node1"], "device": "cuda",
           "started_at": STARTED, "ended_at": "2025-04-01T10:01:00+00:00"}
    out = Result(cell_id=c.cell_id, cell=c.to_dict(), status=Status(status), env=env, run_seed=c.training_seed)
    if status != "ok":
        out.error = error or f"{status}: by hand"
        return out
    training = [dict(model=m, training_id=f"t{c.training_seed}{m}", reused=False, train_s=20.0, epoch_losses=[2.0, 1.4],
                     cuda_graph=True, device="cuda") for m in ("Net", "NetWithBias")]
    out.body = PTQFindings.from_dict({"training": training, "outcome": ptq_outcome(c, accuracies, mismatches).to_dict()})
    return out


# --- the all-reduce kind ------------------------------------------------------------------------------

def allreduce_result(c: AllreduceCell, seconds: Optional[Mapping[int, float]] = None, status: str = "ok",
                     error: Optional[str] = None) -> Result:
    """`c`'s sweep: each of its sizes took seconds[bytes] per all-reduce (default: 20 us plus the
    bytes at 10 GB/s), algbw and busbw from nccl-tests' formula."""
    env = {"gpu_model": GPU, "hostnames": ["n1", "n2"] if c.nodes > 1 else ["n1"], "started_at": STARTED,
           "ended_at": "2025-04-01T10:01:00+00:00"}
    out = Result(cell_id=c.cell_id, cell=c.to_dict(), status=Status(status), env=env)
    if status != "ok":
        out.error = error or f"{status}: by hand"
        return out
    took = seconds or {n: 20e-6 + n / 10e9 for n in c.sizes()}
    sizes = tuple(SizeTiming(n, took[n], *bandwidth_gbps(n, took[n], c.ranks)) for n in c.sizes())
    out.body = AllreduceFindings(c.ranks, c.backend, c.device, c.warmup, c.iters, sizes)
    return out


# --- the command kind ---------------------------------------------------------------------------------

def command_cell(processes: int = 1, repeat: int = 0, **fields) -> CommandCell:
    """A CPU command cell of `processes` processes on one node; `fields` are the user's (or the cell's)."""
    return CommandCell(command=["python", "train.py"], workdir="/w", gpus_per_node=0, cpu_ranks_per_node=processes,
                       repeat=repeat, **fields)


def command_result(c: CommandCell, lines: Sequence[Mapping[str, float]] = ({"epoch": 1, "epoch_s": 10.0},),
                   status: str = "ok", error: Optional[str] = None) -> Result:
    """`c`'s result: rank 0 wrote `lines`; the timed line is the last."""
    env = {"device": "cpu", "gpu_model": "cpu", "hostnames": ["n1"], "started_at": STARTED, "ended_at": ENDED}
    out = Result(cell_id=c.cell_id, cell=c.to_dict(), status=Status(status), env=env)
    if status != "ok":
        out.error = error or f"{status}: by hand"
        return out
    out.body = CommandFindings(c.ranks, tuple({k: float(v) for k, v in line.items()} for line in lines),
                               len(lines) - 1)
    return out


# --- a results dir -----------------------------------------------------------------------------------

def write_results(path: Path, results: Iterable[Result] = (), planned: Iterable[StudyCell] = (),
                  submitted: Iterable[StudyCell] = (), study: str = "by-hand") -> Path:
    """A results dir: the result files, a plan.json listing every result's cell and `planned`
    (cells of any kind), and a registry.jsonl line for each of `submitted`."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    results = list(results)
    cells = {r.cell_id: cell_from_dict(r.cell) for r in results}
    cells.update({c.cell_id: c for c in planned})
    for r in results:
        write_result(path, r)
    install_plan(build_plan(Study(study, "", "data", ClusterSpec(), tuple(cells.values()), ""), path, path), "", {})
    lines = [json.dumps({"cell_id": c.cell_id, "executor": "slurm", "job_id": f"7_{i}", "array": "a",
                         "submitted_at": "2025-04-01T09:00:00+00:00"}) for i, c in enumerate(submitted)]
    (path / "registry.jsonl").write_text("".join(line + "\n" for line in lines))
    return path


def calibrated_plan(spec: QuantSpec, seed: int = 0):
    """A randomly initialised NetWithBias with a bias that matters, calibrated on 64 random images
    for `spec`: (its simulation plan, the images). Imports torch (only here)."""
    import torch

    from jobs.ptq import lenet
    from jobs.ptq.profile import activation_ranges, profile_activations
    from jobs.ptq.quantize import quantize_weight
    from jobs.ptq.simulate import plan

    net = lenet.build(True, seed)
    with torch.no_grad():
        net.fc3.bias.uniform_(-0.2, 0.2)
    images = torch.rand(64, 3, 32, 32, generator=torch.Generator().manual_seed(seed)) * 2 - 1
    assert spec.activation_bits is not None, "a plan quantizes activations"
    ranges = activation_ranges(profile_activations(net, images), 64, spec.activation_method, spec.activation_bits)
    weights = {n: quantize_weight(net.layer(n).weight, spec.weight_bits, spec.weight_method, spec.granularity)
               for n in lenet.LAYERS}
    return plan(net, spec, weights, ranges), images
