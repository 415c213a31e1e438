"""Part A Q1 as a record (a pure function of the tables) and its paragraph: the time of one epoch
by batch size on 1 GPU and why (Q2, the speedups: collect.train.answers_speedup)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Optional


from collect.evidence import Measured, listing
from collect.questions import Record, Tables, Words, against, one_run_note, says
from collect.render import number, seconds
from collect.train.answers_common import (SINGLE_BAND, caveats, cited, figure, rows_of, secs, setting_notes,
                                          where)
from collect.train.labels import Namer, missing_reason, present
from collect.train.tables import BASE_KEYS
from collect.verdict import SINGLE_RUN_NOISE, Verdict, leaning

BUSIER = 5.0  # GPU utilization points: a rise above this is "the GPU is busier"
FIRST_BATCH = 32  # the assignment's sweep starts at batch 32 and grows x4 until one does not fit
CIFAR_TRAIN = 50_000  # CIFAR-10's training images: the epoch the assignment times


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
class Step:
    """One step of the sweep: the larger batch's train time against the smaller's."""

    before: BatchTime
    after: BatchTime
    verdict: Verdict


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
    images: int = 0  # the training images of one epoch (a smoke test's epoch is far smaller than CIFAR-10's 50,000)
    # every step past `plateau` is between single runs and under SINGLE_RUN_NOISE: none of them tells (TA7 8)
    untold_beyond: bool = False
    # the first step past the plateau's pair with repeats on both sides, where that pair is a single run's
    settled_step: Optional[Step] = None


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
    beyond = [Step(a, b, against(b.train_s, a.train_s)) for a, b in zip(ok, ok[1:], strict=False)  # type: ignore[arg-type]
              if plateau is not None and a.batch >= plateau]
    settled = next((s for s in beyond[1:] if not s.verdict.one_run), None) if pv and pv.one_run else None
    return Q1Answer(cited(Namer(q1, "q1"), rows), missing, device, cpu, batches, max(fits) if fits else None,
                    first_oom, trend, plateau, _q1_because(trend), int(codes.max()) + 1, after, pv,
                    setting_notes(tables.get("train_cells"), (r for _, r in rows if r.status == "ok"), False),
                    max((int(r.train_images) for _, r in rows if present(r.train_images)), default=0),
                    bool(beyond) and all(s.verdict.one_run and not leaning(s.verdict, SINGLE_RUN_NOISE) for s in beyond),
                    settled)


def _batch(r: Any) -> BatchTime:
    return BatchTime(int(r.batch_per_gpu), str(r.status), figure(r, "train_s"), figure(r, "epoch_s"),
                     float(r.data_wait_s), int(r.steps), float(r.gpu_util_pct),
                     float(getattr(r, "peak_mem_gib", float("nan"))))


def _plateau(ok: list[BatchTime]) -> Optional[int]:
    """The first batch whose next batch is not faster beyond the threshold (collect.verdict); between single runs,
    beyond SINGLE_RUN_NOISE (a 7% step of two single runs is no trend: TA7 8)."""
    for a, b in zip(ok, ok[1:], strict=False):
        v = against(b.train_s, a.train_s)  # type: ignore[arg-type]
        if leaning(v, SINGLE_RUN_NOISE) >= 0:
            return a.batch
    return None


def _q1_because(trend: Optional[Verdict]) -> Q1Because:
    if trend is None:
        return Q1Because.UNDECIDED
    lower, higher = leaning(trend, SINGLE_RUN_NOISE) < 0, leaning(trend, SINGLE_RUN_NOISE) > 0
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
    epoch = f" of {a.images:,} images" if a.images else ""
    if 0 < a.images < CIFAR_TRAIN:
        epoch += f", a small test epoch, not CIFAR-10's {CIFAR_TRAIN:,}"
    text = f"On {a.device}, it takes {listing(times, 8)} to train one epoch (w/o data loading){epoch}."
    if a.first_oom is not None:
        text += f" Batch {a.first_oom} does not fit (OOM)" + (f": {a.largest_fit} is the largest that fits." if a.largest_fit
                                                               else ".")
    first, last = ok[0][0], ok[-1][0]
    if a.because == Q1Because.UNDECIDED and a.trend is not None:
        text += _unsettled(a.trend, first, last, a.device)
    elif a.trend is not None and a.trend.one_run:  # no verdict from one run a side: the times, no ratio (TA4 7)
        text += _single_runs(a, first, last)
    elif a.trend is not None:
        how = says(a.trend, Words(f"less time ({1 / a.trend.ratio:.2f}x faster from batch {first.batch} to {last.batch})",
                                  f"more time ({a.trend.ratio:.2f}x at batch {last.batch})", "about the same time",
                                  "a time the runs' spread does not separate"))
        text += f" When the batch is larger it takes {how}, {_because(a, first, last)}."
    text += _sweep(a, [b for b, _ in ok])
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(a.trend, a.plateau_verdict))


def _runs(v: Verdict) -> str:
    return f"{v.n_a} runs each" if v.n_a == v.n_b else f"{v.n_b} and {v.n_a} runs"  # the subject of "give"


def _unsettled(v: Verdict, first: BatchTime, last: BatchTime, device: str) -> str:
    """Repeats that do not decide: why (too few runs for the verdict; its interval is in no printed table: TA2
    20), and the per-step
    figure that would be the reason if the difference held."""
    needed = f"; about {v.repeats_needed} runs each would settle it" if v.repeats_needed else ""
    a, b = first.train_s, last.train_s
    apart = a is not None and b is not None and (a.high < b.low or b.high < a.low)
    raw = (f"the runs themselves do not overlap ({seconds(a.low)}-{seconds(a.high)} s against "  # type: ignore[union-attr]
           f"{seconds(b.low)}-{seconds(b.high)} s), but " if apart else "")  # type: ignore[union-attr]
    # the speedup (the inverted ratio of times), as `submit --settle` prints this very comparison
    return (f" Whether a larger batch is faster is not settled: batch {last.batch}'s speedup over batch {first.batch} "
            f"is {1 / v.ratio:.2f}x; {raw}{_runs(v)} are too few for the verdict to conclude{needed}. "
            f"{_if_it_holds(first, last, device)}.")


@dataclass(frozen=True)
class PerStep:
    """One step's time at the larger batch over the smaller's, against their images' ratio (TA5 6): a step whose
    time grows as fast as its images (or faster) has no fixed per-step cost for a larger batch to amortise."""

    step_ratio: float
    image_ratio: float

    @property
    def amortises(self) -> bool:
        return self.step_ratio < self.image_ratio


def per_step(first: BatchTime, last: BatchTime) -> PerStep:
    return PerStep(last.step_s / first.step_s, last.batch / first.batch)


def _if_it_holds(first: BatchTime, last: BatchTime, device: str) -> str:
    """The reason an unsettled "larger is faster" would have, if it held: a per-step cost the larger batch spreads
    over more images; where the step's time grows at least as fast as its images there is none (TA5 6)."""
    if per_step(first, last).amortises:
        return _per_step(first, last, "If it holds, the reason is per step")
    return (_per_step(first, last, "A step's time grows with its images") + ", so there is no per-step overhead for a "
            f"larger batch to amortise on {device}")


def _per_step(first: BatchTime, last: BatchTime, lead: str) -> str:
    """One step's time at the larger batch against the smaller's, as the Q1 table's time / step column prints
    them (TA4 20), beside their images' ratio."""
    return (f"{lead}: one step of {last.batch} images took {number(1000 * last.step_s, 2)} ms against "
            f"{number(1000 * first.step_s, 2)} ms for one of {first.batch} ({last.step_s / first.step_s:.2f}x, for "
            f"{last.batch / first.batch:g}x the images)")


def _single_runs(a: Q1Answer, first: BatchTime, last: BatchTime) -> str:
    """A single run at an end: one run a side is no verdict (collect.verdict), so the times as measured, no ratio;
    where each single run fell past the band single runs need (`leaning`, SINGLE_RUN_NOISE), the steps of the sweep
    over which it fell."""
    way = leaning(a.trend, SINGLE_RUN_NOISE)  # type: ignore[arg-type]
    if way < 0 and a.plateau == first.batch:  # the ends apart, but no single step past the band
        return (f" When the batch is larger the single runs took less time ({secs(first.train_s)} at batch "  # type: ignore[arg-type]
                f"{first.batch}, {secs(last.train_s)} at {last.batch}), {_because(a, first, last)}.")  # type: ignore[arg-type]
    if way < 0:
        to = next(b for b in a.batches if b.batch == (a.plateau or last.batch))
        return (f" When the batch is larger the single runs took less time, falling with each larger batch from "
                f"{first.batch} to {to.batch} ({secs(first.train_s)} to {secs(to.train_s)}), "  # type: ignore[arg-type]
                f"{_because(a, first, last)}.")
    took = f"{secs(first.train_s)} at batch {first.batch} and {secs(last.train_s)} at {last.batch}"  # type: ignore[arg-type]
    if way > 0:
        return f" When the batch is larger the single runs took more time ({took}), {_because(a, first, last)}."
    return (f" The single runs took {took}: single runs cannot tell whether a larger batch is faster. "
            f"{_per_step(first, last, 'Per step')}.")


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
        # the step counts as the Q1 table prints them (TA4 20), with the batches they divide the epoch into (TA3 23)
        text = (f"because an epoch takes fewer steps ({first.steps:,} of {first.batch} images against {last.steps:,} of "
                f"{last.batch}): each step's fixed cost "
                f"({'operator dispatch' if a.cpu else 'kernel launches'}, optimizer update, Python loop) is paid fewer "
                "times")
        if util and last.util_pct - first.util_pct > BUSIER:
            text += f" and the GPU is busier{util}"
        if a.plateau not in (None, first.batch, last.batch) and a.plateau_next and a.plateau_verdict:
            text += _plateau_text(a.plateau, a.plateau_next, a.plateau_verdict, a.batches, a.untold_beyond)
            text += _plateau_text(s.before.batch, s.after, s.verdict, a.batches, False) if (s := a.settled_step) else ""
        return text
    if a.because == Q1Because.SATURATED:
        return f"because the GPU is already busy at batch {first.batch}{util}: a step's time grows with its images"
    if a.because == Q1Because.SLOWER:
        return _per_step(first, last, "because a step's time grows faster than its images") + util
    return f"so no reason can be given from {first.train_s.repeats if first.train_s else 0} repeats"


def _plateau_text(batch: int, after: BatchTime, v: Verdict, batches: tuple[BatchTime, ...], untold: bool) -> str:
    """Past the plateau batch, in the words its own pair's verdict chose (the numbers cited beside them); where
    every step past it is a single run's within SINGLE_RUN_NOISE (Q1Answer.untold_beyond), all of them at once."""
    before = next(b for b in batches if b.batch == batch)
    pair = f"{secs(before.train_s)} to {secs(after.train_s)}"  # type: ignore[arg-type]
    if untold:
        later = [f"{secs(b.train_s)} at {b.batch}" for b in batches if b.train_s is not None and b.batch > batch]
        return (f"; beyond batch {batch} ({listing(later)}) single runs cannot tell whether it still falls: each step "
                f"is under {SINGLE_RUN_NOISE:.0%}, {SINGLE_BAND}")
    if v.one_run:  # no "within 5%" from one run a side (TA4 7)
        return f"; from batch {batch} to {after.batch} ({pair}) single runs cannot tell whether it still falls"
    how = says(v, Words("it falls", "it rises", f"the time stays within {v.threshold:.0%}",
                        "the runs' spread hides any change"))
    return f"; from batch {batch} to {after.batch} {how} ({pair})"
