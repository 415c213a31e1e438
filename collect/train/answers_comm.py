"""Part A Q3.1 as a record: compute against communication per epoch (the estimate T1/N and TN - T1/N) beside
what the runs measured (the exposed all-reduce, the compute measured, rank 0's data wait). Its paragraph:
collect.train.answers_comm_text; Q3.2: collect.train.answers_bandwidth."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Optional

from collect.questions import Record, Tables, against
from collect.render import seconds
from collect.train.formulas import GB, t1n_breaks
from collect.train.answers_common import cited, figure, part_a, rows_of, setting_notes, where
from collect.train.labels import Namer, base_key, missing_reason, present
from collect.verdict import SINGLE_RUN_NOISE, Verdict, leaning

BOUND = 0.5  # communication-bound: communication is at least this share of the train time
OVERHEAD = 10  # an all-reduce measured over this multiple of the time its bytes take at the job's busbw holds more than
# the transfer: DDP's per-step host work, the ranks' skew, one step's noise (not measured apart)
EXPLAINS = 0.5  # a measured time explains the estimate TN - T1/N when it is at least this share of it


class Cause(StrEnum):
    """What the N-GPU run measured that explains its estimate TN - T1/N."""

    ALLREDUCE = "allreduce"  # the exposed all-reduce is at least EXPLAINS of it
    LOADER = "loader"  # the all-reduce is not, the run's wait on its data loader is: a rank waiting for its data
    # holds the others at the all-reduce
    OTHER = "other"  # neither (DataParallel's copies of the model and the batch are not measured)
    NONE = "none"  # TN is not above T1/N: nothing to explain


@dataclass(frozen=True)
class Split:
    setup: str
    engine: str
    gpus: int
    batch: int
    steps: int
    compute_s: float  # T1 / N
    comm_s: float  # TN - T1 / N
    share: float  # comm / TN
    measured_s: float  # the exposed all-reduce (NaN: not measured)
    data_wait_s: float  # the N-GPU run's wait on its data loader in the timed epoch (NaN: not measured)
    verdict: Optional[Verdict]  # TN against T1/N: above -> a communication cost is measured
    cause: Cause
    gpu_s: float = float("nan")  # rank 0's GPU time in its steps less the exposed all-reduce (NaN: not measured)
    share_span: tuple[float, float] = (float("nan"), float("nan"))  # the share over the runs' spread (share_span())
    tn_s: float = float("nan")  # TN: the N-GPU run's train time (Table 2's median)
    measured_share: float = float("nan")  # the exposed all-reduce / TN (Table 2's comm measured / TN)
    link_s: float = float("nan")  # the epoch's all-reduce bytes over the job's own busbw (Table 3): the link's time
    nodes: int = 1  # the nodes it was launched on: the homework's plain N-GPU rows are one node's

    @property
    def name(self) -> str:
        return f"{self.setup} at batch {self.batch}"

    @property
    def measured_below_bound(self) -> bool:
        """DDP's all-reduce the run measured is under BOUND of TN (DataParallel runs none): where the estimate is at
        or past BOUND, the run's own measurement does not carry "communication-bound" (TA3 9: 0.508 s of 1.94 s
        against an estimate of 51%)."""
        return self.engine == "ddp" and present(self.measured_s) and self.measured_s < BOUND * self.tn_s

    @property
    def host_overhead(self) -> bool:
        """DDP's all-reduce measured is over OVERHEAD x the time its bytes take at the job's own busbw (Table 3's
        share measured under 1 / OVERHEAD): it is not the transfer alone (TA5 4; what else, not measured: TA7 5).
        Example: 4.74 s measured, 34.95 GB at 244 GB/s = 0.143 s -> True."""
        return self.engine == "ddp" and present(self.measured_s) and present(self.link_s) and \
            self.measured_s > OVERHEAD * self.link_s

    @property
    def unlinked(self) -> bool:
        """DDP's TN - T1/N over twice the all-reduce the run measured (its cause not the all-reduce): mostly not the
        all-reduce, so Q3.2 leaves its rate out (TA7 4, 7). Example: 0.039 s against 0.010 s -> True."""
        return self.engine == "ddp" and present(self.measured_s) and self.cause in (Cause.LOADER, Cause.OTHER)

    @property
    def under_measured(self) -> bool:
        """DDP's TN - T1/N under the all-reduce the run itself measured: the estimate understates it, as Q3.2 leaves
        such a rate out (TA8 12). Example: 2.39 s against 2.59 s -> True."""
        return self.engine == "ddp" and present(self.measured_s) and 0 < self.comm_s < self.measured_s

    @property
    def apart_fold(self) -> float:
        """How many times the larger of DDP's estimate TN - T1/N and its measured all-reduce is the smaller (NaN where
        either is missing or not above 0). Example: 3.71 s against 1.87 s -> 1.98."""
        if self.engine != "ddp" or not present(self.measured_s) or not (self.comm_s > 0 and self.measured_s > 0):
            return float("nan")
        return max(self.comm_s, self.measured_s) / min(self.comm_s, self.measured_s)

    @property
    def splits_disagree(self) -> bool:
        """The estimate and the all-reduce measured differ by more than single runs of one setting can
        (SINGLE_RUN_NOISE), either way: the two splits of TN disagree (TA8 6). Example: 3.71 s, 1.87 s -> True."""
        return self.apart_fold > 1 + SINGLE_RUN_NOISE

    @property
    def splits_agree(self) -> bool:
        """The estimate and the all-reduce measured within SINGLE_RUN_NOISE of each other: a headline to prefer."""
        return self.apart_fold <= 1 + SINGLE_RUN_NOISE

    @property
    def matches_t1n(self) -> bool:
        """Rank 0's compute measured is T1/N as Table 2 prints both (TA3 4: 1.21 s both at batch 16)."""
        return present(self.gpu_s) and seconds(self.gpu_s) == seconds(self.compute_s)

    @property
    def comm_span(self) -> tuple[float, float]:
        """TN - T1/N over every pairing of the runs: from min(TN) - max(T1/N) to max(TN) - min(T1/N).
        Example: T1/N 3.84-4.93 s, TN 5.10 s -> 0.17-1.26 s."""
        s = self.verdict.sides if self.verdict is not None else None
        if not s:
            return self.comm_s, self.comm_s
        return min(s.b_values) - max(s.a_values), max(s.b_values) - min(s.a_values)

    @property
    def breaks_model(self) -> bool:
        """The compute measured is over BREAKS x T1/N or under T1/N / BREAKS (formulas.t1n_breaks, Table 2's rule):
        the homework's model (compute = T1/N) does not hold, so TN - T1/N is no communication time."""
        return t1n_breaks(self.gpu_s, self.compute_s)

    @property
    def every_run_above(self) -> bool:
        """Every N-GPU run's TN above every T1/N, with 2+ runs a side, where the verdict is inconclusive:
        what the runs show though the verdict cannot size the excess (it stays inconclusive)."""
        v = self.verdict
        s = v.sides if v is not None and v.outcome == "inconclusive" else None
        return bool(s and min(len(s.a_values), len(s.b_values)) > 1 and min(s.b_values) > max(s.a_values))


class Q3Because(StrEnum):
    FEWER_STEPS = "fewer_steps"  # the share falls with the batch: fewer all-reduces per epoch
    NOT_FALLING = "not_falling"
    LOADER_AT_LARGE = "loader_at_large"  # not falling: the data loader fills the largest batches' estimate, while
    # the exposed all-reduce the jobs measured falls with the batch
    ONE_BATCH = "one_batch"
    SINGLE_RUNS = "single_runs"  # a cited share is a single run's: no spread, so no trend (TA3 3)
    MEASURED_FALLS = "measured_falls"  # the estimate's share rises, the all-reduce the jobs measured falls: the rise
    # is not communication, and no trend is claimed (TA3 5)
    UNMEASURABLE = "unmeasurable"  # no run's TN is above T1/N by the verdict: no communication cost to trend
    WITHIN_SPREAD = "within_spread"  # the cited setup's smallest and largest batch both: no trend from its ends
    MIXED = "mixed"  # the cited setup's share falls, another's does not: like-for-like rows disagree, no trend
    OVERLAP = "overlap"  # the cited ends' shares overlap over the runs' spread: no trend from them
    MEASURED_RISES = "measured_rises"  # the share falls, but the all-reduce the jobs measured rises: not fewer
    # all-reduces (TA2 24)


@dataclass(frozen=True)
class Q31Answer(Record):
    device: str
    cpu: bool
    splits: tuple[Split, ...]
    bound: tuple[str, ...]  # setups at a batch where TN - T1/N is at least BOUND of the train time and above 0
    loader: tuple[str, ...]  # setups at a batch whose estimate the data loader's wait may explain (Cause.LOADER)
    because: Q3Because
    left_out: tuple[str, ...] = ()  # at or past BOUND but TN not measurably above T1/N: "<setup> at batch <b>"
    trend_setup: str = ""  # the setup whose first and last batch the trend cites
    falls: tuple[int, int] = (0, 0)  # setups (of 2+ batches) whose share falls at every larger batch, of all
    notes: tuple[str, ...] = ()
    rising: tuple[str, ...] = ()  # setups (of 2+ batches) whose share rises at every larger batch
    unsteady: tuple[str, ...] = ()  # setups (of 2+ batches) whose share neither only falls nor only rises
    no_traffic: int = 0  # DataParallel rows left out on a CPU: one process, nothing communicated
    broken: tuple[str, ...] = ()  # "<setup> at batch <b>" whose compute measured is far above T1/N (Split.breaks_model)
    measured_apart: tuple[str, ...] = ()  # at or past BOUND by the estimate, under it by the run's measured all-reduce
    # (Split.measured_below_bound): listed apart with both figures, in neither list above
    bound_single: tuple[str, ...] = ()  # those of `bound` resting on one run a side: said "in the single run of each"
    overhead: tuple[str, ...] = ()  # "<setup> at batch <b>" whose all-reduce measured is mostly host overhead
    # (Split.host_overhead)
    near: tuple[str, ...] = ()  # at or past BOUND on a single run a side, but not clearly (clearly_bound): in no list
    # above, said "near" with its share (TA7 9)
    headline: tuple[str, ...] = ()  # the rows the paragraph opens with (headline_rows), "<setup> at batch <b>"
    margin: float = SINGLE_RUN_NOISE  # the single-run band that "clearly" is judged by (clearly_bound)

    @property
    def valid(self) -> tuple[Split, ...]:
        """The splits where the T1/N model holds: the headline and the trend cite only these (TA3 3)."""
        return tuple(s for s in self.splits if s.name not in self.broken)


def q31_answer(tables: Tables) -> Optional[Q31Answer]:
    t2, t3 = tables["table2"].reset_index(drop=True), tables["table3"].reset_index(drop=True)
    if not part_a(tables) or not len(t2):
        return None
    namer = Namer(t2, "table2")
    steps = {i: int(r.steps) for i, r in rows_of(t3)}
    links = {i: float(r.bytes_per_gpu) / (float(r.busbw_gbps) * GB) for i, r in rows_of(t3)
             if present(r.busbw_gbps) and float(r.busbw_gbps) > 0}
    splits, used, missing = [], [], []
    ones = {base_key(r): r for r in tables["q1"].itertuples(index=False) if figure(r, "train_s")}
    for i, r in rows_of(t2):
        if r.status != "ok" or not present(r.comm_est_s):
            missing.append(f"{namer.name(r)} ({missing_reason(r) if r.status != 'ok' else 'no 1-GPU run at its batch'})")
            continue
        one, tn = ones.get(base_key(r)), figure(r, "train_s")
        v = against(tn, figure(one, "train_s").scaled(1 / r.gpus)) if one and tn else None  # type: ignore[union-attr]
        measured, wait = (float(x) if present(x) else float("nan") for x in (r.comm_measured_s, r.data_wait_s))
        splits.append(Split(namer.name(r, batch=False), str(r.engine), int(r.gpus), int(r.batch_per_gpu), steps.get(i, 0),
                            float(r.compute_est_s), float(r.comm_est_s), float(r.comm_share), measured, wait,
                            v, cause(float(r.comm_est_s), measured, wait, v),
                            float(r.compute_measured_s) if present(r.compute_measured_s) else float("nan"),
                            share_span(v), float(r.train_s), float(r.comm_measured_share), links.get(i, float("nan")),
                            int(r.nodes)))
        used.append((i, r))
    device, cpu = where(r.gpu_model for _, r in used)
    no_traffic = sum(s.engine == "dp" for s in splits) if cpu else 0  # on a CPU DataParallel wraps nothing
    if no_traffic:
        used = [(i, r) for (i, r), s in zip(used, splits, strict=True) if s.engine != "dp"]
        splits = [s for s in splits if s.engine != "dp"]
    bound = communication_bound(splits)
    near = tuple(x for x in bound if not clearly_bound(next(s for s in splits if s.name == x)))
    bound = tuple(x for x in bound if x not in near)
    loader = tuple(s.name for s in ordered(splits) if s.cause == Cause.LOADER)
    apart_ = tuple(s.name for s in ordered(splits) if at_least_bound(s) and not s.breaks_model
                   and s.cause != Cause.NONE and s.measured_below_bound)
    left = tuple(s.name for s in splits
                 if at_least_bound(s) and not s.breaks_model and s.name not in bound + apart_ + near)
    broken = tuple(s.name for s in ordered(splits) if s.breaks_model)  # on a CPU too: no share where it breaks (TA4 1)
    valid = tuple(s for s in splits if s.name not in broken)
    groups = [g for g in by_setup(valid).values() if len(g) >= 2]
    falls = (sum(direction(g) == FALLS for g in groups), len(groups))
    trend = groups[0] if groups else next(iter(by_setup(valid).values()), [])
    named = [s.name for s in trend[:1] + trend[-1:]] + list(loader[:1])
    named += [x for listed in (bound, left, apart_) for x in shown(listed)]
    rows = cited_first(used, [s.name for s in splits], named)
    return Q31Answer(cited(namer, rows), tuple(missing), device, cpu, tuple(splits), bound, loader,
                     _q3_because(valid), left, groups[0][0].setup if groups else "", falls,
                     setting_notes(tables.get("train_cells"), (r for _, r in rows), False),
                     tuple(g[0].setup for g in groups if direction(g) == RISES),
                     tuple(g[0].setup for g in groups if direction(g) == UNSTEADY), no_traffic, broken, apart_,
                     tuple(s.name for s in splits if s.name in bound and (s.verdict is None or s.verdict.one_run)),
                     tuple(s.name for s in ordered(splits) if s.host_overhead), near,
                     tuple(s.name for s in headline_rows(valid)), SINGLE_RUN_NOISE)


def headline_rows(valid: tuple[Split, ...]) -> list[Split]:
    """The rows Q3.1 opens with: the first setup's (by_setup: the homework's plain DDP first) smallest and largest batch
    where T1/N holds; where neither's estimate agrees with its measured all-reduce (Split.splits_agree) and a plain
    one-node DDP row's does, that row alone (TA8 6). One over twice its measured all-reduce (Split.unlinked) is quoted
    by its measured all-reduce only (TA8 12). Example: shared 4 GPUs, DDP at 32 (0.558 s against 1.03 s) and 512
    (0.039 s against 0.010 s) -> 4 GPUs, DDP at 128 (0.428 s against 0.345 s)."""
    first = next(iter(by_setup(valid).values()), [])
    ends = first[:1] + first[1:][-1:]
    if any(s.splits_agree for s in ends):
        return ends
    agree = [s for s in ordered(list(valid)) if s.engine == "ddp" and s.nodes == 1 and s.splits_agree]
    return agree[:1] or ends


FALLS, RISES, UNSTEADY = "falls", "rises", "not monotonic"


def direction(group: list[Split]) -> str:
    """How a setup's share moves over its batches, every step compared (not only the ends).
    Example: 11%, 31%, 6% -> UNSTEADY; 24%, 47%, 54% -> RISES."""
    steps = [b.share - a.share for a, b in zip(group, group[1:], strict=False)]
    return FALLS if all(d < 0 for d in steps) else RISES if all(d > 0 for d in steps) else UNSTEADY


CITED = 24  # evidence rows an answer lists at most: those its paragraph names first


def shown(listed: tuple[str, ...]) -> list[str]:
    """The entries of a "<setup> at batch <b>" list the paragraph names: every one (no list is cut short)."""
    return list(listed)


def cited_first(used: list[tuple[int, Any]], names: list[str], named: list[str]) -> list[tuple[int, Any]]:
    """The rows (`used`, named `names`) the paragraph names first, in its order, then the rest, CITED at most:
    the rows holding the numbers a sentence quotes are among the evidence."""
    order = {name: k for k, name in enumerate(dict.fromkeys(named))}
    ranked = sorted(zip(names, used, strict=True), key=lambda x: order.get(x[0], len(order)))
    return [u for _, u in ranked][:CITED]


def share_span(v: Optional[Verdict]) -> tuple[float, float]:
    """Communication's share 1 - (T1/N) / TN over every pairing of the runs (the verdict's sides: T1/N's
    values, TN's): from 1 - max(T1/N) / min(TN) to 1 - min(T1/N) / max(TN). Example: T1/N 3.84-4.93 s,
    TN 5.10 s -> 3%-25%. NaN without the sides."""
    s = v.sides if v is not None else None
    if s is None:
        return float("nan"), float("nan")
    return 1 - max(s.a_values) / min(s.b_values), 1 - min(s.a_values) / max(s.b_values)


def apart(small: Split, large: Split) -> bool:
    """The larger batch's share lies below the smaller's over both runs' spread (their share_spans do not
    meet); single runs are points, so any fall is apart here and the one-run note says what they are."""
    return large.share_span[1] < small.share_span[0]


def at_least_bound(s: Split) -> bool:
    """The share as shown (a whole percent) at or past BOUND: 49.7% reads 50% and is listed (TA2 16)."""
    return round(100 * s.share) >= round(100 * BOUND)


def clearly_bound(s: Split) -> bool:
    """A run a side of one counts at or past BOUND only where TN is past T1/N / (1 - BOUND) (2 x T1/N) by more than
    single runs of one setting can differ (SINGLE_RUN_NOISE, as Q1 and Q2 judge single runs: TA8 5), a share over 60%.
    With 2+ runs a side the verdict has already settled TN above T1/N.
    Example: T1/N 1.00 s, TN 2.60 s (62%) -> True; TN 2.40 s (58%) -> False."""
    v = s.verdict
    if v is None or not v.one_run:
        return True
    return leaning(dataclasses.replace(v, ratio=v.ratio * (1 - BOUND)), SINGLE_RUN_NOISE) > 0


def communication_bound(splits: list[Split]) -> tuple[str, ...]:
    """The setups at a batch whose estimate TN - T1/N is at least BOUND of the train time and measurably
    above 0 (not Cause.NONE), except where the T1/N model breaks (its estimate is mostly not communication:
    TA2 5), and except where the all-reduce the run measured is under BOUND of TN (TA3 9): all of them, whatever
    the answer then says explains the estimate."""
    return tuple(s.name for s in splits
                 if at_least_bound(s) and s.cause != Cause.NONE and not s.breaks_model and not s.measured_below_bound)


def cause(estimate_s: float, allreduce_s: float, data_wait_s: float, v: Optional[Verdict]) -> Cause:
    """What explains the estimate TN - T1/N: the exposed all-reduce where it is at least EXPLAINS of
    it, else the run's data wait where that is; NONE where TN is not above T1/N (the verdict, or a
    non-positive estimate). NaN (not measured) explains nothing.
    Example: estimate 1.03 s, all-reduce 0.009 s, data wait 1.05 s -> LOADER; 2.39, 2.59, 0.06 -> ALLREDUCE."""
    if not estimate_s > 0 or (v is not None and not _above(v)):
        return Cause.NONE
    if allreduce_s >= EXPLAINS * estimate_s:
        return Cause.ALLREDUCE
    return Cause.LOADER if data_wait_s >= EXPLAINS * estimate_s else Cause.OTHER


def ordered(splits: list[Split]) -> list[Split]:
    return [s for group in by_setup(tuple(splits)).values() for s in group]


def by_setup(splits: tuple[Split, ...]) -> dict[str, list[Split]]:
    """The splits by setup, DDP first, then the homework's plain N-GPU setups (one node) before those launched on
    several (TA7 7), then the most GPUs first; each setup's by batch."""
    out: dict[str, list[Split]] = {}
    for s in sorted(splits, key=lambda s: (s.engine != "ddp", s.nodes > 1, -s.gpus)):
        out.setdefault(s.setup, []).append(s)
    return {k: sorted(v, key=lambda s: s.batch) for k, v in out.items()}


def _above(v: Optional[Verdict]) -> bool:
    """TN above T1/N: beyond by the verdict, or with one run each above it by more than the threshold."""
    return v is not None and leaning(v) > 0


def _q3_because(splits: tuple[Split, ...]) -> Q3Because:
    if splits and all(s.verdict is not None for s in splits) and not any(_above(s.verdict) for s in splits):
        return Q3Because.UNMEASURABLE
    groups = [g for g in by_setup(splits).values() if len(g) >= 2]
    if not groups:
        return Q3Because.ONE_BATCH
    g = groups[0]  # the setup the answer cites: its own ends decide the trend word
    if any(s.verdict is None or s.verdict.one_run for s in (g[0], g[-1])):
        return Q3Because.SINGLE_RUNS
    if all(s.verdict is not None and not _above(s.verdict) for s in (g[0], g[-1])):
        return Q3Because.WITHIN_SPREAD
    if g[-1].share > g[0].share and present(g[0].measured_s) and g[-1].measured_s < g[0].measured_s:
        return Q3Because.MEASURED_FALLS
    ways = {direction(h) for h in groups}
    if ways == {FALLS}:  # a fall only where every like-for-like setup falls at every step, apart over the spread
        if not apart(g[0], g[-1]):
            return Q3Because.OVERLAP
        rises = present(g[0].measured_s) and present(g[-1].measured_s) and g[-1].measured_s > g[0].measured_s
        return Q3Because.MEASURED_RISES if rises else Q3Because.FEWER_STEPS
    if len(ways) > 1 or ways == {UNSTEADY}:
        return Q3Because.MIXED
    if _loader_at_large(g):
        return Q3Because.LOADER_AT_LARGE
    return Q3Because.NOT_FALLING


def _loader_at_large(group: list[Split]) -> bool:
    """The largest batch's estimate is the loader's, and the measured all-reduce falls from the smallest batch."""
    first, last = group[0], group[-1]
    return last.cause == Cause.LOADER and last.measured_s < first.measured_s
