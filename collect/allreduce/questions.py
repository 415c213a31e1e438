"""The all-reduce study's questions as records and paragraphs, from its tables: each setup's peak
bus bandwidth (and whether the sweep reached it), where ResNet-18's gradient (what DDP all-reduces
per step) sits on the size curve, and the sizes of each regime (collect.allreduce.tables.regimes:
by how close busbw is to the setup's peak). Every comparative word is a verdict's (collect.verdict)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Optional

from collect.allreduce.grids import gbps, share
from collect.allreduce.tables import BANDWIDTH, BANDWIDTH_SHARE, BETWEEN, LATENCY, LATENCY_SHARE
from collect.evidence import Evidence, Measured, listing, shown
from collect.questions import Question, Record, Tables, Words, against, one_run_note, says
from collect.verdict import Verdict
from jobs.allreduce.cell import DDP_BUCKET_BYTES, GRADIENT_BYTES, bytes_text
from jobs.core.bandwidth import RESNET18_GRADIENTS

CPU_NOTE = "CPU ranks: the copies go through this machine's memory, not a GPU link"
RISING = Words("still falling", "still rising", "level", "not clearly rising")
REGIME_WORDS = {BETWEEN: "between the latency- and bandwidth-bound regimes"}
UPPER = "the highest measured, an upper bound"


class Allreduce(StrEnum):
    PEAK = "allreduce.peak"
    GRADIENT = "allreduce.gradient"
    REGIMES = "allreduce.regimes"


@dataclass(frozen=True)
class Setup:
    """One setup's sweep, sizes ascending: (position in allreduce_sizes, row)."""

    name: str
    rows: tuple[tuple[int, Any], ...]
    cpu: bool

    def evidence(self, i: int, r: Any) -> Evidence:
        return Evidence("allreduce_sizes", i, f"{self.name}, {bytes_text(int(r.bytes))}")


def _setups(tables: Tables) -> tuple[list[Setup], tuple[str, ...], bool]:
    """The setups with sizes; what has no result (or fewer ok cells than planned); any CPU ranks."""
    sizes, cells = tables["allreduce_sizes"].reset_index(drop=True), tables["allreduce_cells"]
    setups = []
    for name, group in sizes.groupby("setup", sort=False):
        rows = sorted(((int(i), r) for i, r in zip(group.index, group.itertuples(index=False), strict=True)),
                      key=lambda x: x[1].bytes)
        setups.append(Setup(str(name), tuple(rows), bool((cells[cells.setup == name].device == "cpu").any())))
    missing = []
    for name, group in cells.groupby("setup", sort=False):
        others = group[group.status != "ok"]
        if len(others):
            counts = others.status.value_counts(sort=False)
            done = len(group) - len(others)
            if not done and set(counts.index) == {"skipped"}:
                missing.append(f"{name}: not run (this machine has too few GPUs or nodes)")
                continue
            said = ", ".join(f"{n} {_WHY.get(s, s)}" for s, n in counts.items())
            missing.append(f"{name}: {f'{done} of {len(group)} runs have a result' if done else 'no result'} ({said})")
    return setups, tuple(missing), any(s.cpu for s in setups)


_WHY = {"skipped": "not run here", "not submitted": "never submitted"}


@dataclass(frozen=True)
class Top:
    """A setup's highest busbw and whether the sweep reached the peak: `beyond` where that busbw is at the
    largest size and still rising against the size before, by the verdict or by disjoint ranges (every run
    above every run before, where the verdict's threshold cannot tell); the shares against it are then upper
    bounds of the true fraction of the peak."""

    at: int  # position in allreduce_sizes
    row: Any
    before: Optional[tuple[int, Any]]  # the size before, where the highest is the largest size
    rising: Optional[Verdict]
    beyond: bool


def _top(s: Setup) -> Top:
    i, top = max(s.rows, key=lambda x: x[1].busbw_gbps)
    if len(s.rows) < 2 or top.bytes != s.rows[-1][1].bytes:
        return Top(i, top, None, None, False)
    new, old = _busbw(top), _busbw(s.rows[-2][1])
    rising = against(new, old)
    apart = not rising.one_run and new.low > old.high
    return Top(i, top, s.rows[-2], rising, says(rising, RISING) == RISING.above or apart)


def _busbw(r: Any) -> Measured:
    return Measured.of(r, "busbw_gbps")


def _bw(m: Measured) -> str:
    return shown(m, gbps, " GB/s")


def _notes(cpu: bool, missing: tuple[str, ...], *verdicts: Optional[Verdict]) -> str:
    parts = ([CPU_NOTE] if cpu else []) + list(missing) + one_run_note(*verdicts)
    return (" Note: " + "; ".join(parts) + ".") if parts else ""


@dataclass(frozen=True)
class Peak:
    setup: str
    busbw_gbps: Measured
    peak_bytes: int
    largest_bytes: int
    rising: Optional[Verdict]  # the largest size's busbw against the size before, where the peak is the largest
    before: Optional[Measured]  # the size before's busbw, where the peak is the largest
    before_bytes: int
    beyond: bool  # still rising at the largest size (Top.beyond): the highest measured, not the peak


@dataclass(frozen=True)
class PeakAnswer(Record):
    cpu: bool
    peaks: tuple[Peak, ...]


def peak_answer(tables: Tables) -> Optional[PeakAnswer]:
    if not len(tables["allreduce_cells"]):
        return None
    setups, missing, cpu = _setups(tables)
    peaks, evidence = [], []
    for s in setups:
        t = _top(s)
        peaks.append(Peak(s.name, _busbw(t.row), int(t.row.bytes), int(s.rows[-1][1].bytes), t.rising,
                          _busbw(t.before[1]) if t.before else None, int(t.before[1].bytes) if t.before else 0,
                          t.beyond))
        evidence += [s.evidence(t.at, t.row)] + ([s.evidence(*t.before)] if t.before else [])
    return PeakAnswer(tuple(evidence), missing, cpu, tuple(peaks))


def peak_text(a: PeakAnswer) -> str:
    if not a.peaks:
        return "No setup has an all-reduce result yet." + _notes(a.cpu, a.missing)
    parts = []
    for p in a.peaks:
        text = f"{p.setup}: {_bw(p.busbw_gbps)} at {bytes_text(p.peak_bytes)}"
        if p.beyond and p.before is not None:
            text += (f", the highest measured: still rising from {_bw(p.before)} at {bytes_text(p.before_bytes)}, so "
                     "the peak lies beyond the sweep and shares of it are upper bounds")
        elif p.rising is not None:
            text += f", the largest size swept ({says(p.rising, RISING)} against the size before)"
        parts.append(text)
    return ("The peak bus bandwidth (busbw = algbw x 2(N-1)/N, nccl-tests' figure), per setup: " + "; ".join(parts)
            + "." + _notes(a.cpu, a.missing, *(p.rising for p in a.peaks)))


@dataclass(frozen=True)
class AtGradient:
    setup: str
    busbw_gbps: Measured
    share_of_peak: float
    regime: str  # of the gradient's size (collect.allreduce.tables.regimes)
    bucket_busbw_gbps: Optional[Measured]  # at DDP's 25 MiB bucket, where swept
    bucket_share: float
    beyond: bool  # the setup's peak lies beyond the sweep (Top.beyond): the shares are upper bounds


@dataclass(frozen=True)
class GradientAnswer(Record):
    cpu: bool
    gradients: int  # ResNet-18's fp32 parameters that train
    gradient_bytes: int
    setups: tuple[AtGradient, ...]


def gradient_answer(tables: Tables) -> Optional[GradientAnswer]:
    if not len(tables["allreduce_cells"]):
        return None
    setups, missing, cpu = _setups(tables)
    found, evidence = [], []
    for s in setups:
        at = {int(r.bytes): (i, r) for i, r in s.rows}
        if GRADIENT_BYTES not in at:
            continue
        i, r = at[GRADIENT_BYTES]
        bucket = at.get(DDP_BUCKET_BYTES)
        found.append(AtGradient(s.name, _busbw(r), float(r.share_of_peak), str(r.regime),
                                _busbw(bucket[1]) if bucket else None,
                                float(bucket[1].share_of_peak) if bucket else float("nan"), _top(s).beyond))
        evidence += [s.evidence(i, r)] + ([s.evidence(*bucket)] if bucket else [])
    return GradientAnswer(tuple(evidence), missing, cpu, RESNET18_GRADIENTS, GRADIENT_BYTES, tuple(found))


def gradient_text(a: GradientAnswer) -> str:
    head = (f"ResNet-18's gradient, {a.gradients:,} fp32 values ({bytes_text(a.gradient_bytes)}), is what DDP "
            f"all-reduces per step, in {bytes_text(DDP_BUCKET_BYTES)} buckets")
    if not a.setups:
        return head + ": no setup swept that size yet." + _notes(a.cpu, a.missing)
    parts = []
    for g in a.setups:
        of = UPPER if g.beyond else "its peak"
        text = (f"{g.setup}: {_bw(g.busbw_gbps)} at the whole gradient, {share(g.share_of_peak)} of {of} "
                f"({REGIME_WORDS.get(g.regime, g.regime)})")
        if g.bucket_busbw_gbps is not None:
            text += f"; {_bw(g.bucket_busbw_gbps)} at one bucket ({share(g.bucket_share)})"
        parts.append(text)
    return head + ". " + "; ".join(parts) + "." + _notes(a.cpu, a.missing)


@dataclass(frozen=True)
class Regimes:
    setup: str
    latency_bytes: tuple[int, ...]  # sizes whose busbw is below LATENCY_SHARE of the peak
    between_bytes: tuple[int, ...]
    bandwidth_bytes: tuple[int, ...]  # at least BANDWIDTH_SHARE of the peak
    beyond: bool  # the peak lies beyond the sweep (Top.beyond): shares of the highest measured, upper bounds


@dataclass(frozen=True)
class RegimesAnswer(Record):
    cpu: bool
    latency_share: float
    bandwidth_share: float
    setups: tuple[Regimes, ...]


def regimes_answer(tables: Tables) -> Optional[RegimesAnswer]:
    if not len(tables["allreduce_cells"]):
        return None
    setups, missing, cpu = _setups(tables)
    found, evidence = [], []
    for s in setups:
        by = {name: tuple(int(r.bytes) for _, r in s.rows if r.regime == name) for name in (LATENCY, BETWEEN, BANDWIDTH)}
        found.append(Regimes(s.name, by[LATENCY], by[BETWEEN], by[BANDWIDTH], _top(s).beyond))
        evidence += [s.evidence(i, r) for k, (i, r) in enumerate(s.rows)
                     if k in (0, len(s.rows) - 1) or r.regime != s.rows[k - 1][1].regime]
    return RegimesAnswer(tuple(evidence), missing, cpu, LATENCY_SHARE, BANDWIDTH_SHARE, tuple(found))


def _sizes(sizes: tuple[int, ...]) -> str:
    if len(sizes) > 2:
        return f"{len(sizes)} sizes, {bytes_text(sizes[0])} to {bytes_text(sizes[-1])}"
    return listing(bytes_text(b) for b in sizes)


def regimes_text(a: RegimesAnswer) -> str:
    if not a.setups:
        return "No setup has an all-reduce result yet." + _notes(a.cpu, a.missing)
    parts = []
    for r in a.setups:
        named = [(LATENCY, r.latency_bytes), (BETWEEN, r.between_bytes), (BANDWIDTH, r.bandwidth_bytes)]
        parts.append(f"{r.setup}: " + ", ".join(f"{name} {_sizes(sizes)}" for name, sizes in named if sizes))
    open_ = [r.setup for r in a.setups if r.beyond]
    upper = (f" For {listing(open_)} the peak lies beyond the sweep: the shares are upper bounds, so a size may "
             "belong to a lower regime." if open_ else "")
    return (f"By how close busbw comes to the setup's peak: latency-bound below {a.latency_share:.0%} of it (most of a "
            f"call's time is its fixed cost), bandwidth-bound from {a.bandwidth_share:.0%} (the link nearly saturated), "
            "between otherwise. " + "; ".join(parts) + "." + upper + _notes(a.cpu, a.missing))


QUESTIONS = (
    Question(Allreduce.PEAK, "Peak bus bandwidth", ("allreduce_marked",), ("allreduce_marked",), peak_answer, peak_text),
    Question(Allreduce.GRADIENT, "Where the gradient's size sits on the curve", ("allreduce_marked",), (),
             gradient_answer, gradient_text),
    Question(Allreduce.REGIMES, "Latency- and bandwidth-bound sizes", (), (), regimes_answer, regimes_text),
)
