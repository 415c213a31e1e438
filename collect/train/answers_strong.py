"""Part A Q2's strong scaling: the strong table's rows as data points (1 GPU at the global batch B against
1 GPU at the batch per GPU b), which of them a loader-bound 1-GPU run leaves without evidence, the claim the rest
decide, and its sentences (the weak-scaling speedups: collect.train.answers_speedup)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Optional

import pandas as pd

from collect.evidence import Measured, listing
from collect.questions import Tables, Words, against, says
from collect.train.answers_common import cited, figure, rows_of, secs
from collect.train.labels import Namer, base_key, present
from collect.verdict import Verdict

LOADER_BOUND = 0.25  # a 1-GPU epoch waiting on its loader at least this share: its speedups measure loader scaling


def decided(v: Verdict) -> int:
    """-1 / +1 where the verdict (or one run past the threshold) puts b below / above a, else 0."""
    word = says(v, Words("below", "above", "-", "-"))
    return -1 if word == "below" else 1 if word == "above" else 0


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
    batch_wait_share: float = float("nan")  # the 1-GPU epoch at b: the same share
    # a run of 1 GPU at B, 1 GPU at b, N GPUs ran beside other cells (collect.packing: †)
    global_beside: bool = False
    batch_beside: bool = False
    tn_beside: bool = False

    @property
    def upper_bounds(self) -> tuple[str, ...]:
        """"strong", "weak": the speedups whose 1-GPU run ran beside other cells and TN alone, so a T1 slowed by its
        neighbours may overstate them (TA7 2)."""
        return tuple(w for w, t1 in (("strong", self.global_beside), ("weak", self.batch_beside))
                     if t1 and not self.tn_beside)

    @property
    def setup_multi_host(self) -> bool:
        """Launched as several nodes (an example is clearer from one node's setup)."""
        return self.nodes > 1

    @property
    def loader_bound(self) -> bool:
        """1 GPU at the global batch waits on its loader at least LOADER_BOUND of its epoch: its T1(B) is slowed
        by the loader, not the GPU, so a strong speedup above the weak one here is no evidence."""
        return _bound(self.global_wait_share)

    @property
    def no_evidence(self) -> bool:
        """One rule for both speedups (TA4 6): a loader-bound 1-GPU run measures no GPU scaling, so a row resting on
        one decides nothing (TA3 16), except the way the loader cannot have made: a loader-slowed T1(B) only raises
        the strong speedup, so a row worse with T1(b) not loader-bound is worse still without it; a loader-slowed
        T1(b) only raises the weak one, so a row better with T1(B) not loader-bound is better still."""
        way = decided(self.verdict)
        if self.loader_bound:
            return not (way < 0 and not _bound(self.batch_wait_share))
        return _bound(self.batch_wait_share) and not way > 0

    @property
    def bound_runs(self) -> tuple[tuple[int, float], ...]:
        """(batch, wait share) of the row's loader-bound 1-GPU runs: at b (the weak T1), at B (the strong T1)."""
        return tuple((b, w) for b, w in ((self.batch, self.batch_wait_share), (self.global_batch,
                                                                                self.global_wait_share)) if _bound(w))


CUTOFF = f"{LOADER_BOUND:.0%} of its epoch or more"  # the loader rule's cutoff, said with its number (TA4 6)
LOADER_RULE = (f"A 1-GPU run waiting on its loader {CUTOFF} is loader-bound (each GPU brings its own loader): a "
               "speedup over it measures no GPU scaling")


def _bound(wait_share: float) -> bool:
    return present(wait_share) and wait_share >= LOADER_BOUND


class StrongClaim(StrEnum):
    """What the study's data says of strong against weak scaling: the strong table's rows that decide (past
    the threshold). Without a row, none: 1 GPU's two batch sizes are no N-GPU run (TA3 19)."""

    WORSE = "worse"  # rows decide worse, none better
    BETTER = "better"  # rows decide better, none worse
    SAME = "same"  # rows, none deciding either way: no data point
    MIXED = "mixed"  # rows decide both ways
    NONE = "none"  # no row: no data point


def strong_points(multi: list[tuple[int, Any]], q1: pd.DataFrame, namer: Namer,
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
                               waits.get(global_key, (float("nan"), 0))[0], int(r.nodes),
                               waits.get(base_key(r), (float("nan"), 0))[0],
                               *(bool(getattr(x, "beside", 0)) for x in (large, small, r))))
    return out


def strong_evidence(tables: Tables, points: list[StrongPoint]) -> tuple:
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


def strong_claim(points: list[StrongPoint]) -> tuple[StrongClaim, Optional[StrongPoint]]:
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


REASON = "each GPU's smaller batch runs less efficiently, yet each step all-reduces the whole gradient"
NO_PAIR = "no 1-GPU run at any N-GPU run's global batch, so the strong-scaling table has no pair"


def strong_text(p: Optional[StrongPoint], claim: StrongClaim, strongs: tuple[StrongPoint, ...],
                invalid: tuple[StrongPoint, ...], rule_said: bool = False) -> str:
    """The strong-scaling sentences: the claim with the row it cites (`p`), the rows that decide nothing (`invalid`),
    or the usual argument where no row decides; led by the loader rule (LOADER_RULE) where they call a 1-GPU run
    loader-bound and the answer has not said it (`rule_said`)."""
    text = _strong_text(p, claim, strongs, invalid)
    return f" {LOADER_RULE}.{text}" if "loader-bound" in text and not rule_said else text


def _strong_text(p: Optional[StrongPoint], claim: StrongClaim, strongs: tuple[StrongPoint, ...],
                 invalid: tuple[StrongPoint, ...]) -> str:
    lead = " Strong scaling (a fixed global batch) would be"
    counted = [q for q in strongs if q not in invalid]
    if p is not None and claim in (StrongClaim.WORSE, StrongClaim.BETTER, StrongClaim.MIXED):
        example = (f"{p.setup}, {p.batch} per GPU: {p.strong:.2f}x strong against {p.weak:.2f}x weak (1 GPU "
                   f"{secs(p.t1_global)} at batch {p.global_batch}, {secs(p.t1_batch)} at {p.batch}{_bounds(p)})")
        if claim == StrongClaim.BETTER:
            return f"{lead} better in this study: {example}{clean_text(p, counted)}." + _invalid_text(invalid)
        text = f"{lead} worse: {REASON}; e.g. {example}{clean_text(p, counted)}." + _invalid_text(invalid)
        if claim == StrongClaim.MIXED:
            better = [q for q in strongs if decided(q.verdict) > 0 and q not in invalid]
            q = max(better, key=lambda q: q.strong)
            text += (f" Rows at {listing(sorted({str(q.batch) for q in better}, key=int))} per GPU come out better (e.g. "
                     f"{q.setup}, {q.batch} per GPU: {q.strong:.2f}x strong against {q.weak:.2f}x weak).")
        return text
    repeated = all(not q.verdict.one_run for q in strongs if q not in invalid)  # noise is measured only over repeats
    why = ("its strong rows are within run-to-run noise" if claim == StrongClaim.SAME and repeated
           else "its strong rows decide nothing (single runs, within the verdict's threshold)"
           if claim == StrongClaim.SAME else "its strong rows' 1-GPU runs wait on their loader" if invalid
           else NO_PAIR)
    return (f"{lead} worse by the usual argument ({REASON}); this study holds no data point for it: {why}."
            + _invalid_text(invalid))


def _bounds(p: StrongPoint) -> str:
    """Which of the row's two speedups are upper bounds (StrongPoint.upper_bounds), and whether its two 1-GPU runs
    shared their machine alike (else strong against weak is not like for like)."""
    bounds = p.upper_bounds
    words = ("both upper bounds" if len(bounds) == 2 else f"the {bounds[0]} one an upper bound") if bounds else ""
    if bounds:
        words += ": 1 GPU ran beside other cells, the N-GPU run alone (†)"
    if p.global_beside != p.batch_beside:
        words += ("; " if words else "") + "the two 1-GPU runs did not share their machine alike (†)"
    return f"; {words}" if words else ""


def _invalid_text(points: tuple[StrongPoint, ...]) -> str:
    """Strong rows on a loader-bound 1-GPU run (Q2Answer.loader_invalid): named with the runs and their waits."""
    if not points:
        return ""
    q = max(points, key=lambda q: q.strong)
    waits = dict(sorted({b: w for p in points for b, w in p.bound_runs}.items()))
    return (f" Rows at {listing(sorted({str(p.batch) for p in points}, key=int))} per GPU (e.g. {q.strong:.2f}x strong "
            f"against {q.weak:.2f}x weak) rest on loader-bound 1-GPU runs ({listing([f'{w:.0%}' for w in waits.values()])}"
            f" at batch {listing(map(str, waits))}).")


def clean_text(p: StrongPoint, counted: list[StrongPoint]) -> str:
    """Why the cited row is a data point by the loader rule (TA4 6): its 1-GPU runs' waits, and which way a
    loader-bound one could only have moved it; the batches of the rows that count (`counted`) named."""
    if not p.bound_runs:  # nothing the rule sets aside
        return ""
    (b, w), = p.bound_runs
    clean = p.global_wait_share if b == p.batch else p.batch_wait_share
    which = "weak" if b == p.batch else "strong"
    rows = listing(sorted({str(q.batch) for q in counted}, key=int))
    return (f"; only the rows at {rows} per GPU count: 1 GPU waits {clean:.0%} at batch "
            f"{p.global_batch if b == p.batch else p.batch}, and its {w:.0%} at {b} only raises the {which} speedup "
            f"({'better' if which == 'weak' else 'worse'} still without it)")
