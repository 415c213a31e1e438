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
        """A loader-bound T1(B) decides nothing (TA3 16), unless the row is worse with T1(b) not loader-bound: a
        loader-slowed T1(B) only raises the strong speedup, so strong scaling is worse still without it."""
        return self.loader_bound and not (decided(self.verdict) < 0 and not _bound(self.batch_wait_share))


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
                               waits.get(base_key(r), (float("nan"), 0))[0]))
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
                invalid: tuple[StrongPoint, ...]) -> str:
    """The strong-scaling sentences: the claim with the row it cites (`p`), the rows that decide nothing (`invalid`),
    or the usual argument where no row decides."""
    lead = " Strong scaling (a fixed global batch) would be"
    if p is not None and claim in (StrongClaim.WORSE, StrongClaim.BETTER, StrongClaim.MIXED):
        example = (f"{p.setup}, {p.batch} per GPU: {p.strong:.2f}x strong against {p.weak:.2f}x weak (1 GPU "
                   f"{secs(p.t1_global)} at batch {p.global_batch}, {secs(p.t1_batch)} at {p.batch})")
        if claim == StrongClaim.BETTER:
            why = _loader_why([p])
            return f"{lead} better in this study: {example}{why}."
        text = f"{lead} worse: {REASON}; e.g. {example}." + _invalid_text(invalid)
        if claim == StrongClaim.MIXED:
            better = [q for q in strongs if decided(q.verdict) > 0]
            q = max(better, key=lambda q: q.strong)
            text += (f" Rows at {listing(sorted({str(q.batch) for q in better}, key=int))} per GPU come out better (e.g. "
                     f"{q.setup}, {q.batch} per GPU: {q.strong:.2f}x strong against {q.weak:.2f}x weak){_loader_why([q])}.")
        return text
    why = ("its strong rows are within run-to-run noise" if claim == StrongClaim.SAME
           else "its strong rows' 1-GPU runs wait on their loader" if invalid
           else NO_PAIR)
    return (f"{lead} worse by the usual argument ({REASON}); this study holds no data point for it: {why}."
            + _invalid_text(invalid))


def _invalid_text(points: tuple[StrongPoint, ...]) -> str:
    """Strong rows whose 1-GPU run at the global batch is loader-bound (Q2Answer.loader_invalid): named with why
    they are no evidence."""
    if not points:
        return ""
    q = max(points, key=lambda q: q.strong)
    batches = sorted({p.global_batch for p in points})
    waits = [f"{max(p.global_wait_share for p in points if p.global_batch == b):.0%}" for b in batches]
    return (f" Rows at {listing(sorted({str(p.batch) for p in points}, key=int))} per GPU (e.g. {q.strong:.2f}x strong "
            f"against {q.weak:.2f}x weak) do not count: 1 GPU at their global batch {listing(map(str, batches))} waits "
            f"on its loader {listing(waits)} of its epoch.")


def _loader_why(points: list[StrongPoint]) -> str:
    """The loader's wait as a possible cause, with its measure: 1 GPU's wait at the global batch, where at least
    LOADER_BOUND of its epoch (the data-wait column of Q1's table)."""
    q = points[0] if points else None
    if q is None or not present(q.global_wait_share) or q.global_wait_share < LOADER_BOUND:
        return ""
    return f"; 1 GPU's loader wait ({q.global_wait_share:.0%} of its epoch at batch {q.global_batch}) may explain it"
