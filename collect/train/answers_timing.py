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
from collect.train.answers_common import (at_batches, caveats, cited, figure, part_a, rows_of, secs, setting_notes,
                                          where)
from collect.train.grids import setup_name
from collect.train.labels import Namer, base_key, missing_reason, present
from collect.train.tables import BASE_KEYS
from collect.verdict import Verdict

BUSIER = 5.0  # GPU utilization points: a rise above this is "the GPU is busier"
LOADER_WAIT = 0.05  # a 1-GPU epoch waiting on its loader at least this share explains an efficiency above 1


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
    util_pct: float  # GPU utilization of the timed epoch (frame.gpu_util_pct; NaN where not shown)


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
    plateau_next: Optional[BatchTime] = None  # the batch after `plateau`: the pair the plateau's words cite
    plateau_verdict: Optional[Verdict] = None  # its train time against the plateau batch's
    notes: tuple[str, ...] = ()  # what the runs' settings make of the numbers (answers_common.setting_notes)


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
    plateau = _plateau(ok)
    after = next((b for a, b in zip(ok, ok[1:], strict=False) if a.batch == plateau), None)
    pv = against(after.train_s, next(b for b in ok if b.batch == plateau).train_s) if after else None  # type: ignore[arg-type]
    return Q1Answer(cited(Namer(q1, "q1"), rows), missing, device, cpu, batches, max(fits) if fits else None,
                    first_oom, trend, plateau, _q1_because(trend), int(codes.max()) + 1, after, pv,
                    setting_notes(tables.get("train_cells"), (r for _, r in rows if r.status == "ok"), False))


def _batch(r: Any) -> BatchTime:
    steps = f.steps_per_epoch(int(r.train_images), int(r.batch_per_gpu), 1)
    return BatchTime(int(r.batch_per_gpu), str(r.status), figure(r, "train_s"), figure(r, "epoch_s"),
                     float(r.data_wait_s), steps, float(r.gpu_util_pct))


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
    if not ok and a.batches and all(b.status == "oom" for b in a.batches):
        return (f"Every batch size ran out of memory: batch {min(b.batch for b in a.batches)} does not fit (OOM), nor "
                "any larger, so none has a train time." + caveats(a.cpu, a.missing))
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
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(a.trend, a.plateau_verdict))


def _because(a: Q1Answer, first: BatchTime, last: BatchTime) -> str:
    util = (f" (utilization {first.util_pct:.0f}% at batch {first.batch}, {last.util_pct:.0f}% at {last.batch})"
            if present(first.util_pct) and present(last.util_pct) else "")
    if a.because == Q1Because.FEWER_STEPS:
        text = (f"because an epoch takes fewer steps ({first.steps:,} against {last.steps:,}): each step's fixed cost "
                "(kernel launches, optimizer update, Python loop) is paid fewer times")
        if util and last.util_pct - first.util_pct > BUSIER:
            text += f" and the GPU is busier{util}"
        if a.plateau is not None and a.plateau != last.batch and a.plateau_next and a.plateau_verdict:
            text += _plateau_text(a.plateau, a.plateau_next, a.plateau_verdict, a.batches)
        return text
    if a.because == Q1Because.SATURATED:
        return f"because the GPU is already busy at batch {first.batch}{util}: a step's time grows with its images"
    if a.because == Q1Because.SLOWER:
        return f"because the larger steps do not use the device better{util}"
    return f"so no reason can be given from {first.train_s.repeats if first.train_s else 0} repeats"


def _plateau_text(batch: int, after: BatchTime, v: Verdict, batches: tuple[BatchTime, ...]) -> str:
    """Past the plateau batch, in the words its own pair's verdict chose (the numbers cited beside them)."""
    before = next(b for b in batches if b.batch == batch)
    pair = f"{secs(before.train_s)} to {secs(after.train_s)}"  # type: ignore[arg-type]
    how = says(v, Words("it falls", "it rises", f"it changes by under "
                        f"{v.threshold:.0%}", "the runs' spread hides any change"))
    if v.one_run and v.ratio < 1 and abs(v.ratio - 1) <= v.threshold:
        how = f"it falls by under {v.threshold:.0%}"
    return f"; from batch {batch} to {after.batch} {how} ({pair})"


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


class StrongClaim(StrEnum):
    """What the study's strong table says of strong against weak scaling, over every row of it."""

    WORSE = "worse"  # every row: 1 GPU faster at the larger global batch (strong below weak)
    BETTER = "better"  # every row: 1 GPU slower at the larger global batch (strong above weak)
    SAME = "same"  # every row within the threshold
    MIXED = "mixed"  # the rows disagree, or a spread does not decide
    NONE = "none"  # no row has both 1-GPU runs


@dataclass(frozen=True)
class Superlinear:
    """A speedup above N (efficiency above 1) and why: the 1-GPU run's share of its epoch spent waiting on
    its loader (NaN: not measured), which N GPUs' N loaders split."""

    setup: str
    batch: int
    efficiency: float
    one_gpu_wait_share: float


@dataclass(frozen=True)
class Q2Answer(Record):
    device: str
    cpu: bool
    speedups: tuple[Speedup, ...]
    strong: Optional[StrongPoint]  # the row the answer cites (the most GPUs, the smallest batch)
    largest_gpus: int
    strongs: tuple[StrongPoint, ...] = ()  # every row of the strong table with both 1-GPU runs
    strong_claim: StrongClaim = StrongClaim.NONE
    superlinear: tuple[Superlinear, ...] = ()
    notes: tuple[str, ...] = ()


def q2_answer(tables: Tables) -> Optional[Q2Answer]:
    t1, q1 = tables["table1"].reset_index(drop=True), tables["q1"].reset_index(drop=True)
    rows = rows_of(t1)
    multi = [(i, r) for i, r in rows if r.engine != "single"]
    if not part_a(tables):
        return None
    namer = Namer(t1, "table1")
    ones = {base_key(r): (i, r) for i, r in rows if r.engine == "single" and figure(r, "epoch_s")}
    speedups, used, missing, fast = [], [], [], []
    for i, r in multi:
        one = ones.get(base_key(r))
        tn = figure(r, "epoch_s")
        if tn is None or one is None:
            missing.append(f"{namer.name(r)} ({missing_reason(r) if r.status != 'ok' else 'no 1-GPU run at its batch'})")
            continue
        speedups.append(Speedup(namer.name(r, batch=False), int(r.batch_per_gpu), float(r.speedup), float(r.efficiency),
                                against(tn, figure(one[1], "epoch_s"))))  # type: ignore[arg-type]
        if float(r.efficiency) > 1:
            wait = one[1].epoch_s - one[1].train_s if present(one[1].train_s) else float("nan")
            fast.append(Superlinear(speedups[-1].setup, int(r.batch_per_gpu), float(r.efficiency), wait / one[1].epoch_s))
        used.append(((i, r), one))
    device, cpu = where(r.gpu_model for _, r in multi + list(ones.values()) if r.status == "ok")
    if not multi:
        missing.append("no multi-GPU cell: add engine = \"ddp\" with gpus_per_node = [2, 4]")
    strongs = _strongs(multi, q1)
    ends = [s for s in (min(speedups, key=lambda s: s.speedup, default=None),
                        max(speedups, key=lambda s: s.speedup, default=None)) if s]
    cited_first = sorted(used, key=lambda u: not any(e.setup == namer.name(u[0][1], batch=False)
                                                       and e.batch == u[0][1].batch_per_gpu for e in ends))
    pairs = [x for u in cited_first[:6] for x in u]
    evidence = cited(namer, pairs) + _strong_evidence(tables, strongs[:1])
    return Q2Answer(evidence, tuple(missing), device, cpu, tuple(speedups), strongs[0] if strongs else None,
                    max((int(r.gpus) for _, r in multi), default=1), tuple(strongs), _strong_claim(strongs),
                    tuple(fast), setting_notes(tables.get("train_cells"), (r for _, r in pairs), False))


def _strongs(multi: list[tuple[int, Any]], q1: pd.DataFrame) -> list[StrongPoint]:
    """Every multi-GPU run whose batch per GPU and global batch both ran on 1 GPU in Q1 (the strong
    table's rows), the most GPUs and the smallest batch per GPU first."""
    ones = {base_key(r): r for _, r in rows_of(q1) if figure(r, "epoch_s")}
    out = []
    for _, r in sorted(multi, key=lambda x: (-x[1].gpus, x[1].batch_per_gpu)):
        small, large = ones.get(base_key(r)), ones.get(base_key(r._replace(batch_per_gpu=r.global_batch)))
        tn = figure(r, "epoch_s")
        t1b, t1g = figure(small, "epoch_s"), figure(large, "epoch_s")
        if t1b is None or t1g is None or tn is None:
            continue
        out.append(StrongPoint(setup_name(r), int(r.batch_per_gpu), int(r.global_batch), t1g, t1b,
                               t1g.value / tn.value, t1b.value / tn.value, against(t1g, t1b)))
    return out


def _strong_evidence(tables: Tables, points: list[StrongPoint]) -> tuple:
    """The strong table's row of each point (the numbers the answer quotes)."""
    strong = tables.get("strong")
    if strong is None or not points:
        return ()
    strong = strong.reset_index(drop=True)
    namer = Namer(strong, "strong")
    keep = [(i, r) for i, r in rows_of(strong) for p in points
            if setup_name(r) == p.setup and int(r.batch_per_gpu) == p.batch]
    return cited(namer, keep[:len(points)])


def strong_word(v: Verdict) -> str:
    """Strong against weak at one row: worse where 1 GPU is faster at the global batch (T1(B) below T1(b))."""
    return says(v, Words("worse", "better", "about the same", "not clearly different"))


def _strong_claim(points: list[StrongPoint]) -> StrongClaim:
    words = {strong_word(p.verdict) for p in points}
    if not words:
        return StrongClaim.NONE
    if len(words) > 1:
        return StrongClaim.MIXED
    return {"worse": StrongClaim.WORSE, "better": StrongClaim.BETTER, "about the same": StrongClaim.SAME}.get(
        words.pop(), StrongClaim.MIXED)


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
    if a.superlinear:
        top = max(a.superlinear, key=lambda s: s.efficiency)
        why = (f"the 1-GPU run waits on its loader {top.one_gpu_wait_share:.0%} of its epoch"
               if present(top.one_gpu_wait_share) and top.one_gpu_wait_share >= LOADER_WAIT else "1 GPU is slower per image")
        text += f" Efficiency above 1 ({top.efficiency:.2f}, {top.setup}, batch {top.batch}): {why}."
    text += " This is weak scaling: the batch per GPU is fixed, so the global batch grows with N."
    text += _strong_text(a)
    verdicts = [s.verdict for s in a.speedups] + [p.verdict for p in a.strongs]
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(*verdicts))


def _strong_text(a: Q2Answer) -> str:
    p = a.strong
    if p is None:
        return (" Strong scaling (the global batch fixed) is worse where 1 GPU runs faster at a larger batch (Q1); "
                f"this study has no 1-GPU run at an N-GPU run's global batch to show it (add batch b x "
                f"{a.largest_gpus} to Q1's sweep).")
    example = (f"1 GPU takes {secs(p.t1_global)} at batch {p.global_batch}, {secs(p.t1_batch)} at {p.batch}: "
               f"{p.setup} at {p.batch} per GPU gives {p.strong:.2f}x strong, {p.weak:.2f}x weak")
    if a.strong_claim in (StrongClaim.WORSE, StrongClaim.BETTER, StrongClaim.SAME):
        how = {StrongClaim.WORSE: "worse", StrongClaim.BETTER: "better", StrongClaim.SAME: "about the same"}[a.strong_claim]
        rows = f" in all {len(a.strongs)} rows of the strong table" if len(a.strongs) > 1 else ""
        return f" Strong scaling (the global batch fixed) would be {how}{rows}: {example}."
    counts = {w: sum(strong_word(q.verdict) == w for q in a.strongs) for w in ("worse", "better")}
    return (f" Strong scaling (the global batch fixed) is worse in {counts['worse']} and better in {counts['better']} of "
            f"the strong table's {len(a.strongs)} rows, as 1 GPU is faster or slower at the global batch; e.g. {example}.")
