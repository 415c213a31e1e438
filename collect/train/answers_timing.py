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
from collect.render import seconds
from collect.train.answers_common import (at_batches, caveats, cited, figure, part_a, rows_of, secs, setting_notes,
                                          where)
from collect.train.labels import Namer, base_key, missing_reason, present
from collect.train.tables import BASE_KEYS
from collect.verdict import Verdict

BUSIER = 5.0  # GPU utilization points: a rise above this is "the GPU is busier"
LOADER_WAIT = 0.05  # a 1-GPU epoch waiting on its loader at least this share explains an efficiency above 1
LOADER_BOUND = 0.25  # a 1-GPU epoch waiting on its loader at least this share: its speedups measure loader scaling
FIRST_BATCH = 32  # the assignment's sweep starts at batch 32 and grows x4 until one does not fit


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
    peak_mem_gib: float = float("nan")  # the device memory the batch took at most (NaN: not measured)

    @property
    def step_s(self) -> float:
        """The median train time of one step: train_s / steps."""
        return self.train_s.value / self.steps if self.train_s else float("nan")


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
                     float(r.data_wait_s), steps, float(r.gpu_util_pct), float(getattr(r, "peak_mem_gib", float("nan"))))


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
        text += _unsettled(a.trend, first, last)
    elif a.trend is not None:
        how = says(a.trend, Words(f"less time ({1 / a.trend.ratio:.2f}x faster from batch {first.batch} to {last.batch})",
                                  f"more time ({a.trend.ratio:.2f}x at batch {last.batch})", "about the same time",
                                  "a time the runs' spread does not separate"))
        text += f" When the batch is larger it takes {how}, {_because(a, first, last)}."
    text += _sweep(a, [b for b, _ in ok])
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(a.trend, a.plateau_verdict))


def _runs(v: Verdict) -> str:
    return f"{v.n_a} runs each" if v.n_a == v.n_b else f"{v.n_b} and {v.n_a} runs"


def _unsettled(v: Verdict, first: BatchTime, last: BatchTime) -> str:
    """Repeats that do not decide: why (the ratio's interval, not the runs' ranges), and the per-step
    figure that would be the reason if the difference held."""
    needed = f"; about {v.repeats_needed} runs each would settle it" if v.repeats_needed else ""
    return (f" Whether a larger batch is faster is not settled: batch {last.batch} took {v.ratio:.2f}x the time of "
            f"batch {first.batch}, but with {_runs(v)} that ratio's 95% interval ({v.low:.2f}x-{v.high:.2f}x) is too "
            f"wide to rule out no change{needed}. {_per_step(first, last, 'If it holds, the reason is per step')}.")


def _per_step(first: BatchTime, last: BatchTime, lead: str) -> str:
    """One step's time at the larger batch against the smaller's, beside their images' ratio."""
    return (f"{lead}: one step of {last.batch} images took {last.step_s / first.step_s:.2f}x one of {first.batch} "
            f"({last.batch / first.batch:g}x the images)")


def _sweep(a: Q1Answer, ok: list[BatchTime]) -> str:
    """Where the sweep falls short of the assignment's: one batch only, not from batch 32, no OOM."""
    if len(ok) == 1:
        return (f" Only batch {ok[0].batch} ran on 1 GPU, so these runs cannot show how a larger batch changes the "
                "time.")
    parts = [f"starts at batch {ok[0].batch}, not the assignment's {FIRST_BATCH}"] if ok[0].batch != FIRST_BATCH else []
    if a.first_oom is None:
        mem = f" ({ok[-1].peak_mem_gib:.1f} GiB at most)" if present(ok[-1].peak_mem_gib) else ""
        parts.append(f"stops at batch {ok[-1].batch} with no batch out of memory{mem}, so the largest batch that fits "
                     "was not found")
    return f" This sweep {', and '.join(parts)}." if parts else ""


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
        return _per_step(first, last, "because a step's time grows faster than its images") + util
    return f"so no reason can be given from {first.train_s.repeats if first.train_s else 0} repeats"


def _plateau_text(batch: int, after: BatchTime, v: Verdict, batches: tuple[BatchTime, ...]) -> str:
    """Past the plateau batch, in the words its own pair's verdict chose (the numbers cited beside them)."""
    before = next(b for b in batches if b.batch == batch)
    pair = f"{secs(before.train_s)} to {secs(after.train_s)}"  # type: ignore[arg-type]
    how = says(v, Words("it falls", "it rises", f"the time stays within {v.threshold:.0%}",
                        "the runs' spread hides any change"))
    return f"; from batch {batch} to {after.batch} {how} ({pair})"


# --- Q2 ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Speedup:
    setup: str
    batch: int
    speedup: float
    efficiency: float
    verdict: Verdict  # TN against T1 (below: faster than 1 GPU); its sides hold both epochs' repeats


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
    global_wait_share: float = float("nan")  # the 1-GPU epoch at B: its share waiting on the loader (data-wait column)
    nodes: int = 1

    @property
    def setup_multi_host(self) -> bool:
        """Launched as several nodes (an example is clearer from one node's setup)."""
        return self.nodes > 1


class StrongClaim(StrEnum):
    """What the study's data says of strong against weak scaling: the strong table's rows that decide (past
    the threshold), or, without such rows, Q1's first pair of batches."""

    WORSE = "worse"  # rows (or Q1's pair) decide worse, none better
    BETTER = "better"  # rows (or Q1's pair) decide better, none worse
    SAME = "same"  # rows, none deciding either way: no data point
    MIXED = "mixed"  # rows decide both ways
    NONE = "none"  # no row and no deciding Q1 pair: no data point


@dataclass(frozen=True)
class Superlinear:
    """A speedup above N (efficiency above 1), decided against 1 GPU, and why: the 1-GPU run's share of its
    epoch spent waiting on its loader (the data-wait column; NaN: not measured)."""

    setup: str
    batch: int
    efficiency: float
    one_gpu_wait_share: float


@dataclass(frozen=True)
class LoaderBound:
    """A batch whose 1-GPU epoch waits on its loader at least LOADER_BOUND of the time: each of N ranks
    brings its own loader workers, so the speedups at this batch measure the loaders' scaling too."""

    batch: int
    wait_share: float  # data-wait column over the epoch
    workers: int


@dataclass(frozen=True)
class Unpaired:
    """A multi-GPU run with a time but no 1-GPU run at its batch: its time, no speedup."""

    setup: str
    batch: int
    tn: Measured


@dataclass(frozen=True)
class Q2Answer(Record):
    device: str
    cpu: bool
    speedups: tuple[Speedup, ...]
    strong: Optional[StrongPoint]  # the row the answer cites (a deciding one where any)
    largest_gpus: int
    strongs: tuple[StrongPoint, ...] = ()  # every row of the strong table with both 1-GPU runs
    strong_claim: StrongClaim = StrongClaim.NONE
    superlinear: tuple[Superlinear, ...] = ()
    notes: tuple[str, ...] = ()
    loader_bound: tuple[LoaderBound, ...] = ()
    unpaired: tuple[Unpaired, ...] = ()
    q1_pair: Optional[tuple[BatchTime, BatchTime]] = None  # Q1's first two batches: the data point without rows
    q1_verdict: Optional[Verdict] = None  # the larger batch's train time against the smaller's


def decided(v: Verdict) -> int:
    """-1 / +1 where the verdict (or one run past the threshold) puts b below / above a, else 0."""
    word = says(v, Words("below", "above", "-", "-"))
    return -1 if word == "below" else 1 if word == "above" else 0


def q2_answer(tables: Tables) -> Optional[Q2Answer]:
    t1, q1 = tables["table1"].reset_index(drop=True), tables["q1"].reset_index(drop=True)
    rows = rows_of(t1)
    multi = [(i, r) for i, r in rows if r.engine != "single"]
    if not part_a(tables):
        return None
    namer = Namer(t1, "table1", cells=tables.get("train_cells"))
    ones = {base_key(r): (i, r) for i, r in rows if r.engine == "single" and figure(r, "epoch_s")}
    waits = _wait_shares(q1)
    speedups, used, missing, fast, unpaired, alone = [], [], [], [], [], []
    for i, r in multi:
        one = ones.get(base_key(r))
        tn = figure(r, "epoch_s")
        if tn is not None and one is None:
            unpaired.append(Unpaired(namer.name(r, batch=False), int(r.batch_per_gpu), tn))
            alone.append((i, r))
            continue
        if tn is None or one is None:
            missing.append(f"{namer.name(r)} ({missing_reason(r)})")
            continue
        t1n = figure(one[1], "epoch_s")
        speedups.append(Speedup(namer.name(r, batch=False), int(r.batch_per_gpu), float(r.speedup), float(r.efficiency),
                                against(tn, t1n)))  # type: ignore[arg-type]
        if float(r.efficiency) > 1 and decided(speedups[-1].verdict) < 0:
            fast.append(Superlinear(speedups[-1].setup, int(r.batch_per_gpu), float(r.efficiency),
                                    waits.get(base_key(one[1]), (float("nan"), 0))[0]))
        used.append(((i, r), one))
    device, cpu = where(r.gpu_model for _, r in multi + list(ones.values()) if r.status == "ok")
    if not multi:
        missing.append("no multi-GPU cell: add engine = \"ddp\" with gpus_per_node = [2, 4]")
    strongs = _strongs(multi, q1, namer, waits)
    ends = [s for s in (min(speedups, key=lambda s: s.speedup, default=None),
                        max(speedups, key=lambda s: s.speedup, default=None)) if s]
    named = {(s.setup, s.batch) for s in ends} | {(s.setup, s.batch) for s in speedups if decided(s.verdict) > 0}
    # the rows the text names (the range's ends, the slower list) first, then the rest up to six pairs
    cited_first = sorted(used, key=lambda u: (namer.name(u[0][1], batch=False), int(u[0][1].batch_per_gpu)) not in named)
    pairs = [x for u in cited_first[:max(6, len(named))] for x in u]
    bound = _loader_bound(waits, {base_key(o[1]) for o in ones.values()}, {s.batch for s in speedups})
    claim, cite = _strong_claim(strongs)
    q1a = q1_answer(tables)
    ok = [b for b in q1a.batches if b.train_s is not None] if q1a else []
    pair = (ok[0], ok[1]) if len(ok) >= 2 else None
    pv = against(pair[1].train_s, pair[0].train_s) if pair else None  # type: ignore[arg-type]
    if claim == StrongClaim.NONE and pv is not None and not strongs:
        claim = {-1: StrongClaim.WORSE, 1: StrongClaim.BETTER}.get(decided(pv), StrongClaim.NONE)
    evidence = cited(namer, pairs + alone) + _strong_evidence(tables, [cite] if cite else [])
    return Q2Answer(evidence, tuple(missing), device, cpu, tuple(speedups), cite,
                    max((int(r.gpus) for _, r in multi), default=1), tuple(strongs), claim,
                    tuple(fast), setting_notes(tables.get("train_cells"), (r for _, r in pairs), False, named=True),
                    bound, tuple(unpaired), pair, pv)


def _wait_shares(q1: pd.DataFrame) -> dict[tuple, tuple[float, int]]:
    """Each 1-GPU run's share of its epoch waiting on its loader (the data-wait column) and its workers."""
    out = {}
    for _, r in rows_of(q1):
        epoch = figure(r, "epoch_s")
        if epoch is not None and present(r.data_wait_s):
            out[base_key(r)] = (float(r.data_wait_s) / epoch.value, int(r.loader_workers))
    return out


def _loader_bound(waits: dict[tuple, tuple[float, int]], baselines: set[tuple], batches: set[int]) -> tuple:
    """The 1-GPU baselines of a speedup that wait on their loader at least LOADER_BOUND of the epoch."""
    at = BASE_KEYS.index("batch_per_gpu")
    return tuple(LoaderBound(int(key[at]), w, n) for key, (w, n) in waits.items()
                 if w >= LOADER_BOUND and key in baselines and int(key[at]) in batches)


def _strongs(multi: list[tuple[int, Any]], q1: pd.DataFrame, namer: Namer,
             waits: dict[tuple, tuple[float, int]]) -> list[StrongPoint]:
    """Every multi-GPU run whose batch per GPU and global batch both ran on 1 GPU in Q1 (the strong
    table's rows), the most GPUs and the smallest batch per GPU first."""
    ones = {base_key(r): r for _, r in rows_of(q1) if figure(r, "epoch_s")}
    out = []
    for _, r in sorted(multi, key=lambda x: (-x[1].gpus, x[1].batch_per_gpu)):
        global_key = base_key(r._replace(batch_per_gpu=r.global_batch))
        small, large = ones.get(base_key(r)), ones.get(global_key)
        tn = figure(r, "epoch_s")
        t1b, t1g = figure(small, "epoch_s"), figure(large, "epoch_s")
        if t1b is None or t1g is None or tn is None:
            continue
        out.append(StrongPoint(namer.name(r, batch=False), int(r.batch_per_gpu), int(r.global_batch), t1g, t1b,
                               t1g.value / tn.value, t1b.value / tn.value, against(t1g, t1b),
                               waits.get(global_key, (float("nan"), 0))[0], int(r.nodes)))
    return out


def _strong_evidence(tables: Tables, points: list[StrongPoint]) -> tuple:
    """The strong table's row of each point (the numbers the answer quotes)."""
    strong = tables.get("strong")
    if strong is None or not points:
        return ()
    strong = strong.reset_index(drop=True)
    namer = Namer(strong, "strong", cells=tables.get("train_cells"))
    keep = [(i, r) for i, r in rows_of(strong) for p in points
            if namer.name(r, batch=False) == p.setup and int(r.batch_per_gpu) == p.batch]
    return cited(namer, keep[:len(points)])


def strong_word(v: Verdict) -> str:
    """Strong against weak at one row: worse where 1 GPU is faster at the global batch (T1(B) below T1(b))."""
    return says(v, Words("worse", "better", "about the same", "not clearly different"))


def _strong_claim(points: list[StrongPoint]) -> tuple[StrongClaim, Optional[StrongPoint]]:
    """The claim from the rows that decide (rows within the threshold or the spread are no evidence) and
    the row cited: a worse one where any (the clearest: one node's setup, 1 GPU's largest gain from the larger
    batch, the highest weak speedup), else the first."""
    worse = [p for p in points if decided(p.verdict) < 0]
    better = [p for p in points if decided(p.verdict) > 0]
    if not points:
        return StrongClaim.NONE, None
    cite = min(worse, key=lambda p: (p.setup_multi_host, p.verdict.ratio, -p.weak)) if worse else (better or points)[0]
    claim = (StrongClaim.MIXED if worse and better else StrongClaim.WORSE if worse else StrongClaim.BETTER if better
             else StrongClaim.SAME)
    return claim, cite


def q2_text(a: Q2Answer) -> str:
    text = "Table 1 gives the epoch time (with data loading) and speedup T1/TN"
    if a.speedups:
        low, high = min(a.speedups, key=lambda s: s.speedup), max(a.speedups, key=lambda s: s.speedup)
        ends = [f"{s.speedup:.2f}x ({s.setup}, batch {s.batch}{_undecided(s)})" for s in ([low] if low is high else [low, high])]
        text += f" on {a.device}: from {ends[0]} to {ends[-1]}." if len(ends) > 1 else f" on {a.device}: {ends[0]}."
    else:
        text += "; no multi-GPU run has a speedup yet."
    slower = [(s.setup, s.batch) for s in a.speedups if decided(s.verdict) > 0]
    if slower:
        text += f" Slower than 1 GPU: {at_batches(slower)}."
    text += _unpaired(a.unpaired) + _loader_text(a)
    text += " This is weak scaling (a fixed batch per GPU)."
    text += _strong_text(a)
    verdicts = [s.verdict for s in a.speedups] + [p.verdict for p in a.strongs]
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(*verdicts))


def _span(values: tuple[float, ...]) -> str:
    return f"{seconds(min(values))}-{seconds(max(values))} s"


def _undecided(s: Speedup) -> str:
    """A cited speedup whose time the threshold or the runs' spread does not separate from 1 GPU's: said,
    with both ranges where there are repeats."""
    if decided(s.verdict):
        return ""
    sides = s.verdict.sides
    spread = f": 1 GPU {_span(sides.a_values)} against {_span(sides.b_values)}" if sides and not s.verdict.one_run else ""
    return f"; not distinguishable from 1 GPU{spread}"


def _unpaired(runs: tuple[Unpaired, ...]) -> str:
    if not runs:
        return ""
    groups: dict[str, list[Unpaired]] = {}
    for u in runs:
        groups.setdefault(u.setup, []).append(u)
    said = "; ".join(f"{s} took {listing([f'{secs(u.tn)} at batch {u.batch}' for u in us])}" for s, us in groups.items())
    return f" {said} per GPU, with no 1-GPU run at those batches to give a speedup."


def _loader_text(a: Q2Answer) -> str:
    """An efficiency above 1, and where 1 GPU waits on its loader: the speedups there measure the loaders'
    scaling (each rank has its own workers)."""
    top = max(a.superlinear, key=lambda s: s.efficiency) if a.superlinear else None
    lead = f" Efficiency above 1 ({top.efficiency:.2f}, {top.setup}, batch {top.batch})" if top else ""
    bound = a.loader_bound
    if not bound:
        return f"{lead}: 1 GPU is slower per image." if top else ""
    workers = {b.workers for b in bound}
    each = f"{workers.pop()} loader workers" if len(workers) == 1 else "its loader workers"
    text = (f"1 GPU waits on {each} {listing([f'{b.wait_share:.0%}' for b in bound])} of its epoch at batch "
            f"{listing([str(b.batch) for b in bound])}, and each GPU brings its own: those speedups scale the "
            "loaders.")
    return f"{lead}: {text}" if top else f" {text}"


REASON = "each GPU's smaller batch runs less efficiently, yet each step all-reduces the whole gradient"


def _strong_text(a: Q2Answer) -> str:
    p, claim = a.strong, a.strong_claim
    lead = " Strong scaling (a fixed global batch) would be"
    if p is not None and claim in (StrongClaim.WORSE, StrongClaim.BETTER, StrongClaim.MIXED):
        example = (f"{p.setup}, {p.batch} per GPU: {p.strong:.2f}x strong against {p.weak:.2f}x weak (1 GPU "
                   f"{secs(p.t1_global)} at batch {p.global_batch}, {secs(p.t1_batch)} at {p.batch})")
        if claim == StrongClaim.BETTER:
            why = _loader_why([p])
            return f"{lead} better in this study: {example}" + (f", {why}." if why else ".")
        text = f"{lead} worse: {REASON}; e.g. {example}."
        if claim == StrongClaim.MIXED:
            better = [q for q in a.strongs if decided(q.verdict) > 0]
            text += (f" Rows at {listing(sorted({str(q.batch) for q in better}, key=int))} per GPU come out better "
                     f"{_loader_why(better) or 'as 1 GPU is slower at their global batch'}.")
        return text
    if p is None and a.q1_pair and claim in (StrongClaim.WORSE, StrongClaim.BETTER):
        small, large = a.q1_pair
        times = (f"1 GPU trains an epoch in {secs(small.train_s)} at batch {small.batch} against "  # type: ignore[arg-type]
                 f"{secs(large.train_s)} at {large.batch}")  # type: ignore[arg-type]
        if claim == StrongClaim.BETTER:
            return f"{lead} better in this study: {times}."
        return f"{lead} worse: {REASON}; e.g. {times}, so GPUs that split batch {large.batch} run at the slower rate."
    why = ("its strong rows are within the threshold or the runs' spread" if claim == StrongClaim.SAME
           else "it ran one batch size on 1 GPU" if a.q1_pair is None
           else f"Q1's runs do not separate batch {a.q1_pair[0].batch} from {a.q1_pair[1].batch}")
    return f"{lead} worse by the usual argument ({REASON}); this study holds no data point for it: {why}."


def _loader_why(points: list[StrongPoint]) -> str:
    shares = [q.global_wait_share for q in points if present(q.global_wait_share)]
    if shares and min(shares) >= LOADER_BOUND:
        return "only through 1 GPU's loader wait"
    return ""
