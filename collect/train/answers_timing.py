"""Part A Q1 and Q2 as records (pure functions of the tables) and their paragraphs: the time of
one epoch by batch size on 1 GPU and why; the weak-scaling speedups, and what strong scaling
would give, from a data point the study already has."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Optional

import pandas as pd

import collect.train.formulas as f
from collect.evidence import Measured, listing
from collect.questions import Record, Tables, Words, against, one_run_note, says
from collect.train.answers_common import at_batches, caveats, cited, part_a, figure, rows_of, secs, where
from collect.train.grids import setup_name
from collect.train.labels import Namer, base_key, missing_reason, present
from collect.train.tables import BASE_KEYS
from collect.verdict import Verdict

BUSIER = 5.0  # GPU utilization points: a rise above this is "the GPU is busier"


class Q1Because(StrEnum):
    FEWER_STEPS = "fewer_steps"  # faster: fewer steps, each step's fixed cost paid fewer times
    SATURATED = "saturated"  # not faster: the GPU is already busy, a step's time grows with its images
    SLOWER = "slower"
    UNDECIDED = "undecided"  # with repeats, the spread does not decide


@dataclass(frozen=True)
class BatchTime:
    batch: int
    status: str  # "ok", or why there is no time (OOM, failed...)
    train_s: Optional[Measured]
    epoch_s: Optional[Measured]
    data_wait_s: float
    steps: int
    util_pct: float  # median GPU utilization of the timed epoch (NaN where not sampled)


@dataclass(frozen=True)
class Q1Answer(Record):
    device: str
    cpu: bool
    batches: tuple[BatchTime, ...]
    largest_fit: Optional[int]
    first_oom: Optional[int]
    trend: Optional[Verdict]  # the largest batch's train time against the smallest's
    plateau: Optional[int]  # the batch past which the train time no longer falls (None: it falls to the end)
    because: Q1Because
    sweeps: int  # batch sweeps in the table (the answer reads the first)


def q1_answer(tables: Tables) -> Optional[Q1Answer]:
    q1 = tables["q1"].reset_index(drop=True)
    if not len(q1):
        return None
    rest = [k for k in BASE_KEYS if k != "batch_per_gpu"]
    codes = q1.groupby(rest, sort=False, dropna=False).ngroup()
    rows = [(i, r) for i, r in rows_of(q1) if codes[i] == 0]
    batches = tuple(_batch(r) for _, r in rows)
    ok = [b for b in batches if b.train_s is not None]
    oom = [b.batch for b in batches if b.status == "oom"]
    first_oom = min(oom) if oom else None
    fits = [b.batch for b in ok if first_oom is None or b.batch < first_oom]
    trend = against(ok[-1].train_s, ok[0].train_s) if len(ok) >= 2 else None  # type: ignore[arg-type]
    device, cpu = where(r.gpu_model for _, r in rows if r.status == "ok")
    missing = tuple(f"batch {b.batch} has no result ({missing_reason(r)})" for b, (_, r) in zip(batches, rows, strict=True)
                    if b.status not in ("ok", "oom"))
    return Q1Answer(cited(Namer(q1, "q1"), rows), missing, device, cpu, batches, max(fits) if fits else None,
                    first_oom, trend, _plateau(ok), _q1_because(trend), int(codes.max()) + 1)


def _batch(r: Any) -> BatchTime:
    steps = f.steps_per_epoch(int(r.train_images), int(r.batch_per_gpu), 1)
    return BatchTime(int(r.batch_per_gpu), str(r.status), figure(r, "train_s"), figure(r, "epoch_s"),
                     float(r.data_wait_s), steps, float(r.gpu_util_median_pct))


def _plateau(ok: list[BatchTime]) -> Optional[int]:
    """The first batch whose next batch is not faster beyond the threshold (collect.verdict)."""
    for a, b in zip(ok, ok[1:], strict=False):
        v = against(b.train_s, a.train_s)  # type: ignore[arg-type]
        faster = v.direction < 0 if not v.one_run else v.ratio < 1 - v.threshold
        if not faster:
            return a.batch
    return None


def _q1_because(trend: Optional[Verdict]) -> Q1Because:
    if trend is None:
        return Q1Because.UNDECIDED
    lower = trend.direction < 0 if not trend.one_run else trend.ratio < 1 - trend.threshold
    higher = trend.direction > 0 if not trend.one_run else trend.ratio > 1 + trend.threshold
    if trend.outcome == "inconclusive" and not trend.one_run:
        return Q1Because.UNDECIDED
    return Q1Because.FEWER_STEPS if lower else Q1Because.SLOWER if higher else Q1Because.SATURATED


def q1_text(a: Q1Answer) -> str:
    ok = [(b, b.train_s) for b in a.batches if b.train_s is not None]
    if not ok:
        return (f"No batch size has a train time yet on {a.device}." + caveats(a.cpu, a.missing)).strip()
    times = [f"{secs(t)} using {'mini-batch' if i == 0 else 'batch'} size {b.batch}" for i, (b, t) in enumerate(ok)]
    text = f"On {a.device}, it takes {listing(times, 8)} to train one epoch (w/o data loading)."
    if a.first_oom is not None:
        text += f" Batch {a.first_oom} does not fit (OOM)" + (f": {a.largest_fit} is the largest that fits." if a.largest_fit
                                                               else ".")
    first, last = ok[0][0], ok[-1][0]
    if a.because == Q1Because.UNDECIDED and a.trend is not None:
        needed = f"; about {a.trend.repeats_needed} repeats each would settle it" if a.trend.repeats_needed else ""
        text += (f" Whether a larger batch trains faster is inconclusive here: the runs of batch {first.batch} and "
                 f"{last.batch} spread wider than their difference{needed}.")
    elif a.trend is not None:
        how = says(a.trend, Words(f"less time ({1 / a.trend.ratio:.2f}x faster from batch {first.batch} to {last.batch})",
                                  f"more time ({a.trend.ratio:.2f}x at batch {last.batch})", "about the same time",
                                  "a time the runs' spread does not separate"))
        text += f" When the batch is larger it takes {how}, {_because(a, first, last)}."
    return text + caveats(a.cpu, a.missing, one_run_note(a.trend))


def _because(a: Q1Answer, first: BatchTime, last: BatchTime) -> str:
    util = (f" (utilization {first.util_pct:.0f}% at batch {first.batch}, {last.util_pct:.0f}% at {last.batch})"
            if present(first.util_pct) and present(last.util_pct) else "")
    if a.because == Q1Because.FEWER_STEPS:
        text = (f"because an epoch takes fewer steps ({first.steps:,} against {last.steps:,}), so each step's fixed cost "
                "(kernel launches, optimizer update, Python loop) is paid fewer times")
        if util and last.util_pct - first.util_pct > BUSIER:
            text += f" and the GPU is busier{util}"
        if a.plateau is not None and a.plateau != last.batch:
            text += f"; past batch {a.plateau} it no longer falls: a step's time grows with its images"
        return text
    if a.because == Q1Because.SATURATED:
        return f"because the GPU is already busy at batch {first.batch}{util}: a step's time grows with its images"
    if a.because == Q1Because.SLOWER:
        return f"because the larger steps do not use the device better{util}"
    return f"so no reason can be given from {first.train_s.repeats if first.train_s else 0} repeats"


# --- Q2 ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Speedup:
    setup: str
    batch: int
    speedup: float
    efficiency: float
    verdict: Verdict  # TN against T1 (below: faster than 1 GPU)


@dataclass(frozen=True)
class StrongPoint:
    """Strong scaling from the study's own cells: N GPUs at b per GPU against 1 GPU at B = b x N."""

    setup: str
    batch: int
    global_batch: int
    t1_global: Measured  # 1 GPU at batch B
    t1_batch: Measured  # 1 GPU at batch b
    strong: float  # T1(B) / TN(b)
    weak: float  # T1(b) / TN(b)
    verdict: Verdict  # T1(B) against T1(b): below -> strong scaling is worse


@dataclass(frozen=True)
class Q2Answer(Record):
    device: str
    cpu: bool
    speedups: tuple[Speedup, ...]
    strong: Optional[StrongPoint]
    largest_gpus: int


def q2_answer(tables: Tables) -> Optional[Q2Answer]:
    t1, q1 = tables["table1"].reset_index(drop=True), tables["q1"].reset_index(drop=True)
    rows = rows_of(t1)
    multi = [(i, r) for i, r in rows if r.engine != "single"]
    if not part_a(tables):
        return None
    namer = Namer(t1, "table1")
    ones = {base_key(r): (i, r) for i, r in rows if r.engine == "single" and figure(r, "epoch_s")}
    speedups, used, missing = [], [], []
    for i, r in multi:
        one = ones.get(base_key(r))
        tn = figure(r, "epoch_s")
        if tn is None or one is None:
            missing.append(f"{namer.name(r)} ({missing_reason(r) if r.status != 'ok' else 'no 1-GPU run at its batch'})")
            continue
        speedups.append(Speedup(namer.name(r, batch=False), int(r.batch_per_gpu), float(r.speedup), float(r.efficiency),
                                against(tn, figure(one[1], "epoch_s"))))  # type: ignore[arg-type]
        used += [(i, r), one]
    device, cpu = where(r.gpu_model for _, r in multi + list(ones.values()) if r.status == "ok")
    if not multi:
        missing.append("no multi-GPU cell: add engine = \"ddp\" with gpus_per_node = [2, 4]")
    strong = _strong(multi, q1)
    evidence = cited(namer, used[:12]) + (cited(Namer(q1, "q1"), []) if strong else ())
    return Q2Answer(evidence, tuple(missing), device, cpu, tuple(speedups), strong,
                    max((int(r.gpus) for _, r in multi), default=1))


def _strong(multi: list[tuple[int, Any]], q1: pd.DataFrame) -> Optional[StrongPoint]:
    """The data point: the most GPUs, the smallest batch per GPU whose global batch Q1 ran on 1 GPU."""
    ones = {base_key(r): r for _, r in rows_of(q1) if figure(r, "epoch_s")}
    for _, r in sorted(multi, key=lambda x: (-x[1].gpus, x[1].batch_per_gpu)):
        small, large = ones.get(base_key(r)), ones.get(base_key(r._replace(batch_per_gpu=r.global_batch)))
        tn = figure(r, "epoch_s")
        t1b, t1g = figure(small, "epoch_s"), figure(large, "epoch_s")
        if t1b is None or t1g is None or tn is None:
            continue
        return StrongPoint(setup_name(r), int(r.batch_per_gpu), int(r.global_batch), t1g, t1b,
                           t1g.value / tn.value, t1b.value / tn.value, against(t1g, t1b))
    return None


def q2_text(a: Q2Answer) -> str:
    text = "Table 1 records one epoch's time (data loading included) and the speedup T1/TN"
    if a.speedups:
        low, high = min(a.speedups, key=lambda s: s.speedup), max(a.speedups, key=lambda s: s.speedup)
        ends = [f"{s.speedup:.2f}x ({s.setup}, batch {s.batch})" for s in ([low] if low is high else [low, high])]
        text += f" on {a.device}: from {ends[0]} to {ends[-1]}." if len(ends) > 1 else f" on {a.device}: {ends[0]}."
    else:
        text += "; no multi-GPU run has a speedup yet."
    slower = [(s.setup, s.batch) for s in a.speedups if says(s.verdict, Words("-", "slower", "-", "-")) == "slower"]
    if slower:
        text += f" Slower than 1 GPU: {at_batches(slower)}."
    text += " This is weak scaling: the batch per GPU is fixed, so the global batch grows with N."
    text += _strong_text(a.strong, a.largest_gpus)
    verdicts = [s.verdict for s in a.speedups] + ([a.strong.verdict] if a.strong else [])
    return text + caveats(a.cpu, a.missing, one_run_note(*verdicts))


def _strong_text(p: Optional[StrongPoint], gpus: int) -> str:
    if p is None:
        return (" Strong scaling (the global batch fixed) would be worse when 1 GPU runs faster at a larger batch (Q1); "
                f"this study has no 1-GPU run at an N-GPU run's global batch to show it (add batch b x {gpus} to Q1's sweep).")
    how = says(p.verdict, Words("worse", "better", "about the same", "not clearly different"))
    return (f" Strong scaling (the global batch fixed) would be {how}: 1 GPU takes {secs(p.t1_global)} at batch "
            f"{p.global_batch} against {secs(p.t1_batch)} at {p.batch}, so {p.setup} at {p.batch} per GPU gives "
            f"{p.strong:.2f}x strong against {p.weak:.2f}x weak.")
