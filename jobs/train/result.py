"""A training result's findings: every epoch's figures, the timed one, the all-reduce measured,
and the GPUs sampled. Kept at the top of the result JSON, as every result before kinds."""
from __future__ import annotations

import dataclasses
import math
import reprlib
from dataclasses import dataclass, field
from typing import Any, Optional

from jobs.core.atomic import NON_FINITE
from jobs.core.phases import MAX_PHASE_S
from jobs.core.result import Result


@dataclass
class EpochStats:
    epoch: int  # 1-based
    epoch_s: float  # wall time of the whole epoch, data loading included (the homework's Q2 figure)
    train_s: float  # the steps' copies and compute (h2d_s + compute_s): the epoch with its data ready (Q1's figure)
    images: int  # images this epoch, all ranks together
    images_per_s: float
    loss: float  # mean training loss over the epoch, all ranks
    accuracy: float  # training accuracy over the epoch, all ranks, 0..1
    lr: float  # learning rate at the end of the epoch
    data_wait_s: float  # blocked on the data loader
    h2d_s: float  # host-to-device copies
    compute_s: float  # forward, backward, optimizer step (exposed communication included)
    comm_exposed_s: Optional[float] = None  # exposed all-reduce: comm.exposed_per_step_s x steps
    # The test set after the epoch (jobs.runtime.evaluate); None when not evaluated (test_images = 0, or
    # a result written before evaluation existed). eval_s is not part of epoch_s.
    test_loss: Optional[float] = None  # mean cross-entropy over the test images
    test_accuracy: Optional[float] = None  # top-1, 0..1
    test_images: Optional[int] = None  # images evaluated, all ranks together (each once)
    eval_s: Optional[float] = None  # wall seconds the evaluation took


@dataclass
class Timed:
    """The figure the homework asks for, so the collector never guesses."""

    epoch: int
    epoch_s: float  # Q2: the whole epoch
    train_s: float  # Q1: without waiting on data


@dataclass
class CommStats:
    world_size: int
    grad_bytes: int  # bytes of gradients all-reduced per step (fp32)
    allreduce_s: float  # one all-reduce of grad_bytes, mean of back-to-back runs
    algbw_gbps: float  # grad_bytes / allreduce_s / 1e9
    busbw_gbps: float  # algbw x 2(N-1)/N, as nccl-tests define it
    backend: str
    exposed_per_step_s: Optional[float] = None  # step time with all-reduce minus without (no_sync)
    sizes: list[dict[str, float]] = field(default_factory=list)  # the same figures per buffer size


@dataclass
class DDPEvidence:
    """Q5-Q7, measured once per multi-GPU DDP run, outside the timed epoch.

    bn_rank_spread = max over the BatchNorm layers L of
        max_c (max_r v[r, L, c] - min_r v[r, L, c]) / mean_{r, c} |v[r, L, c]|
    where v[r, L, c] is rank r's running_var of channel c in layer L: the widest disagreement
    between ranks on one channel, relative to the layer's typical variance (0: every rank holds
    the same statistics)."""

    world_size: int
    grad_bytes: int  # gradient bytes all-reduced per step (fp32, parameters that require grad)
    # bytes of module buffers (BatchNorm running_mean/var/num_batches_tracked) DDP broadcasts from rank 0
    # before every forward; 0 when broadcast_buffers is off
    buffer_bytes: int
    init_bytes: int  # parameters + buffers broadcast once when DDP wraps the model
    broadcast_buffers: bool  # the run's DDP setting
    steps_per_epoch: int
    # share of a rank's sample positions that are identical in epochs 1 and 2 when set_epoch is never
    # called (1.0: the order repeats exactly)
    order_overlap_without_set_epoch: float
    order_overlap_with_set_epoch: float  # the same when set_epoch(epoch) is called each epoch (near 1/len(shard) by chance)
    bn_rank_spread: Optional[float]  # the formula above, after training; None when not measured

    @classmethod
    def from_dict(cls, data: Any) -> DDPEvidence:
        """Every field present, of its type and in its range; TypeError or ValueError naming it."""
        if not isinstance(data, dict):
            raise TypeError(f"ddp_evidence must be an object or null, got {reprlib.repr(data)}")
        names = [f.name for f in dataclasses.fields(cls)]
        missing, unknown = [n for n in names if n not in data], sorted(set(data) - set(names))
        if missing or unknown:
            wrong = f"missing {missing}" if missing else f"unknown {unknown}"
            raise ValueError(f"ddp_evidence: {wrong}; valid fields: {names}")
        for name in names:
            _check_evidence(name, data[name])
        values: dict[str, Any] = {n: float(data[n]) if _EVIDENCE_KINDS[n] in ("fraction", "spread") and data[n] is not None
                                  else data[n] for n in names}
        return cls(**values)


# Each field of DDPEvidence: what it holds (every count >= 0, world_size >= 2).
_EVIDENCE_KINDS = {"world_size": "count", "grad_bytes": "count", "buffer_bytes": "count", "init_bytes": "count",
                   "broadcast_buffers": "bool", "steps_per_epoch": "count", "order_overlap_without_set_epoch":
                   "fraction", "order_overlap_with_set_epoch": "fraction", "bn_rank_spread": "spread"}


def _check_evidence(name: str, value: Any) -> None:
    kind, where = _EVIDENCE_KINDS[name], f"ddp_evidence.{name}"
    if kind == "bool":
        if not isinstance(value, bool):
            raise TypeError(f"{where} must be true or false, got {reprlib.repr(value)}")
    elif kind == "count":
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{where} must be a whole number, got {reprlib.repr(value)}")
        if value < (2 if name == "world_size" else 0):
            raise ValueError(f"{where} must be >= {2 if name == 'world_size' else 0}, got {value}")
    elif not (kind == "spread" and value is None):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{where} must be a number{' or null' if kind == 'spread' else ''}, got {reprlib.repr(value)}")
        if not math.isfinite(value) or value < 0 or (kind == "fraction" and value > 1):
            raise ValueError(f"{where} must be in {'0 .. 1' if kind == 'fraction' else '>= 0, finite'}, got {value!r}")


@dataclass
class TrainBody:
    """What a training run found (the result's Body for the training kind)."""

    epochs: list[EpochStats] = field(default_factory=list)
    timed: Optional[Timed] = None
    comm: Optional[CommStats] = None
    gpu_util: Optional[dict[str, Any]] = None  # jobs.runtime.gpu_monitor's summary of the timed epoch
    ddp_evidence: Optional[DDPEvidence] = None  # Q5-Q7's figures; None: not DDP on 2+ ranks, or written before

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Optional[TrainBody]:
        """Every field's type and range checked (RANGES), NaN and infinities back from their strings;
        TypeError or ValueError naming the field. None when the run recorded nothing (a failed or OOM run)."""
        if "epochs" in data and not isinstance(data["epochs"], list):
            raise TypeError(f"epochs must be a list, got {reprlib.repr(data['epochs'])}")
        for name in ("timed", "comm", "gpu_util", "ddp_evidence"):
            if data.get(name) is not None and not isinstance(data[name], dict):
                raise TypeError(f"{name} must be an object or null, got {reprlib.repr(data[name])}")
        epochs = [EpochStats(**checked(e, f"epochs[{i}]")) for i, e in enumerate(data.get("epochs") or [])]
        comm = CommStats(**checked(data["comm"], "comm")) if data.get("comm") else None
        if comm is not None:
            if not isinstance(comm.sizes, list):
                raise TypeError(f"comm.sizes must be a list, got {reprlib.repr(comm.sizes)}")
            comm.sizes = [checked(size, f"comm.sizes[{i}]", "size") for i, size in enumerate(comm.sizes)]
        body = cls(epochs=epochs, timed=Timed(**checked(data["timed"], "timed", "timed")) if data.get("timed") else None,
                   comm=comm, gpu_util=checked(data["gpu_util"], "gpu_util", "gpu") if data.get("gpu_util") else None,
                   ddp_evidence=None if data.get("ddp_evidence") is None else DDPEvidence.from_dict(data["ddp_evidence"]))
        if body.timed is not None and body.timed.epoch not in {e.epoch for e in epochs}:  # its rows would drop it
            raise ValueError(f"timed.epoch {body.timed.epoch} is none of its epochs "
                             f"({reprlib.repr([e.epoch for e in epochs])})")
        return body if body != cls() else None


# What each entry of a training result may hold, by its key (BLOCK_RANGES: in a block whose keys mean
# other things): a whole number from its least, a number within its bounds (a time from a nanosecond to
# a year, a rate 0 or from 1e-9 to 1e12: a ratio of two never overflows nor reaches 0), a loss (>= 0;
# NaN or inf: a diverged run), text or a list; "null": or None.
WHOLE_MAX = 2**53  # beyond this a count is no count a run made (10**400 would overflow every float)
YEAR_S = MAX_PHASE_S
TIME = ("number", 1e-9, YEAR_S)  # a whole epoch, an all-reduce
SPAN = ("number", 0.0, YEAR_S)  # a part of one: may be 0
RATE = ("rate", 1e-9, 1e12)  # images/s, GB/s, GiB, a learning rate: 0, or within these
FRACTION, PERCENT = ("number", 0.0, 1.0), ("number", 0.0, 100.0)
NUMBERS = ("number", "rate")  # the kinds with bounds (low, high)
RANGES: dict[str, tuple] = {
    "epoch": ("whole", 1), "images": ("whole", 0), "test_images": ("whole", 0, "null"),
    "epoch_s": TIME, "train_s": TIME, "images_per_s": RATE, "lr": RATE, "data_wait_s": SPAN, "h2d_s": SPAN,
    "compute_s": SPAN, "comm_exposed_s": SPAN + ("null",), "eval_s": SPAN + ("null",),
    "loss": ("loss",), "test_loss": ("loss", "null"), "accuracy": FRACTION, "test_accuracy": FRACTION + ("null",),
    "world_size": ("whole", 1), "grad_bytes": ("whole", 0), "allreduce_s": TIME, "algbw_gbps": RATE,
    "busbw_gbps": RATE, "exposed_per_step_s": SPAN + ("null",), "backend": ("text",), "sizes": ("list",),
}
BLOCK_RANGES: dict[str, dict[str, tuple]] = {
    "timed": {"epoch": ("whole", 1), "epoch_s": TIME, "train_s": TIME},
    "size": {"bytes": ("whole", 0), "seconds": TIME, "algbw_gbps": RATE, "busbw_gbps": RATE},
    "gpu": {"samples": ("whole", 0), "gpus": ("whole", 0), "util_mean_pct": PERCENT, "util_median_pct": PERCENT,
            "interval_s": SPAN, "mem_used_max_gib": RATE},
}


def checked(data: Any, where: str, block: str = "") -> dict[str, Any]:
    """`data`'s entries, each checked against its range (RANGES, or BLOCK_RANGES[block] where given, whose
    keys are the only ones known there), floats as floats; TypeError or ValueError naming `where`.key."""
    if not isinstance(data, dict):
        raise TypeError(f"{where} must be an object, got {reprlib.repr(data)}")
    ranges = BLOCK_RANGES[block] if block else RANGES
    out = {}
    for key, value in data.items():
        rule = ranges.get(key)
        if rule is None and block != "gpu":  # a GPU sampler may add figures: each a number >= 0
            raise ValueError(f"{where}.{key} is not a field of it; valid fields: {', '.join(ranges)}")
        if rule is not None and (value is None and rule[-1] == "null" or type(value) is float and rule[0] in NUMBERS
                                 and rule[1] <= value <= rule[2] or type(value) is int and rule[0] == "whole"
                                 and rule[1] <= value <= WHOLE_MAX):
            out[key] = value  # the common cases, without a call (100,000 results hold millions of them)
            continue
        value = NON_FINITE.get(value, value) if isinstance(value, str) else value  # NaN and infinities as written
        out[key] = in_range(value, f"{where}.{key}", rule or RATE + ("null",))
    return out


def in_range(value: Any, where: str, rule: tuple) -> Any:
    """`value` when it holds what `rule` allows (RANGES' words), a number as a float; else TypeError or
    ValueError naming `where` and what it may hold."""
    kind, nullable = rule[0], rule[-1] == "null"
    if value is None and nullable:
        return None
    if kind in ("text", "list"):
        if not isinstance(value, str if kind == "text" else list):
            raise TypeError(f"{where} must be a {'string' if kind == 'text' else 'list'}, got {reprlib.repr(value)}")
        return value
    if kind == "whole":
        if isinstance(value, bool) or not isinstance(value, int) or not rule[1] <= value <= WHOLE_MAX:
            raise ValueError(f"{where} must be a whole number in {rule[1]} .. 2**53, got {reprlib.repr(value)}")
        return value
    number = _float(value, where)
    if kind == "loss" and (number >= 0 or math.isnan(number)) or kind == "rate" and number == 0:
        return number  # a loss of NaN or inf: a diverged run; a rate of 0: nothing moved
    low, high = (0.0, math.inf) if kind == "loss" else rule[1:3]
    if not low <= number <= high:
        span = ">= 0" if kind == "loss" else f"{'0 or ' if kind == 'rate' else ''}{low:g} .. {high:g}"
        raise ValueError(f"{where} must be a number {span}{' or null' if nullable else ''}, got {reprlib.repr(value)}")
    return number


def _float(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{where} must be a number, got {reprlib.repr(value)}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{where} must be a finite number, got {reprlib.repr(value)}") from None


def train_body(result: Result) -> TrainBody:
    """A training result's findings; empty for a run that recorded none (failed, oom)."""
    body = result.body
    if body is None:
        return TrainBody()
    if not isinstance(body, TrainBody):
        raise TypeError(f"cell {result.cell_id} is not a training result")
    return body
