"""Part A Q3.1 and Q3.2 as records and paragraphs: compute against communication per epoch (the
estimate T1/N and TN - T1/N, the exposed all-reduce where measured), and the bandwidth the
gradients' all-reduce used, against the busbw the job measured."""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Optional

from collect.questions import Record, Tables, Words, against, one_run_note, says
from collect.render import number, seconds
from collect.train.answers_common import at_batches, caveats, cited, figure, part_a, rows_of, setting_notes, where
from collect.train.labels import Namer, base_key, missing_reason, present
from collect.verdict import Verdict

SETUPS = 2  # setups an answer names one by one, each with its batches (the table has them all)
BOUND = 0.5  # communication-bound: communication is at least this share of the train time
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


class Q3Because(StrEnum):
    FEWER_STEPS = "fewer_steps"  # the share falls with the batch: fewer all-reduces per epoch
    NOT_FALLING = "not_falling"
    LOADER_AT_LARGE = "loader_at_large"  # not falling: the data loader fills the largest batches' estimate, while
    # the exposed all-reduce the jobs measured falls with the batch
    ONE_BATCH = "one_batch"
    UNMEASURABLE = "unmeasurable"  # no run's TN is above T1/N by the verdict: no communication cost to trend
    WITHIN_SPREAD = "within_spread"  # the cited setup's smallest and largest batch both: no trend from its ends


@dataclass(frozen=True)
class Q31Answer(Record):
    device: str
    cpu: bool
    splits: tuple[Split, ...]
    bound: tuple[str, ...]  # setups at a batch where communication is at least BOUND of the train time (but loader)
    loader: tuple[str, ...]  # setups at a batch whose estimate the data loader's wait explains (Cause.LOADER)
    because: Q3Because
    left_out: tuple[str, ...] = ()  # at or past BOUND but not communication: "<setup> at batch <b>" (its cause)
    trend_setup: str = ""  # the setup whose first and last batch the trend cites
    falls: tuple[int, int] = (0, 0)  # setups (of 2+ batches) whose share falls from the smallest batch, of all
    notes: tuple[str, ...] = ()


def _setup_groups(rows: list[tuple[int, Any]], namer: Namer) -> dict[str, list[tuple[int, Any]]]:
    groups: dict[str, list[tuple[int, Any]]] = {}
    for i, r in rows:
        groups.setdefault(namer.name(r, batch=False), []).append((i, r))
    return groups


def q31_answer(tables: Tables) -> Optional[Q31Answer]:
    t2, t3 = tables["table2"].reset_index(drop=True), tables["table3"].reset_index(drop=True)
    if not part_a(tables) or not len(t2):
        return None
    namer = Namer(t2, "table2")
    steps = {i: int(r.steps) for i, r in rows_of(t3)}
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
                            float(r.compute_est_s), float(r.comm_est_s), float(r.comm_est_s / r.train_s), measured, wait,
                            v, cause(float(r.comm_est_s), measured, wait, v)))
        used.append((i, r))
    device, cpu = where(r.gpu_model for _, r in used)
    bound = communication_bound(splits)
    loader = tuple(f"{s.setup} at batch {s.batch}" for s in _ordered(splits) if s.cause == Cause.LOADER)
    left = tuple(f"{s.setup} at batch {s.batch}" for s in _ordered(splits)
                 if s.share >= BOUND and f"{s.setup} at batch {s.batch}" not in bound)
    groups = [g for g in _by_setup(tuple(splits)).values() if len(g) >= 2]
    falls = (sum(g[-1].share < g[0].share for g in groups), len(groups))
    trend = groups[0] if groups else next(iter(_by_setup(tuple(splits)).values()), [])
    named = [f"{s.setup} at batch {s.batch}" for s in trend[:1] + trend[-1:]] + list(loader[:1])
    named += [x for listed in (bound, left) for x in shown(listed)]
    rows = cited_first(used, [f"{s.setup} at batch {s.batch}" for s in splits], named)
    return Q31Answer(cited(namer, rows), tuple(missing), device, cpu, tuple(splits), bound, loader,
                     _q3_because(tuple(splits)), left, groups[0][0].setup if groups else "", falls,
                     setting_notes(tables.get("train_cells"), (r for _, r in rows), False))


CITED = 24  # evidence rows an answer lists at most: those its paragraph names first


def shown(listed: tuple[str, ...]) -> list[str]:
    """The entries of a "<setup> at batch <b>" list the paragraph names (at_batches: its first SETUPS setups)."""
    setups = list(dict.fromkeys(x.split(" at batch ")[0] for x in listed))[:SETUPS]
    return [x for x in listed if x.split(" at batch ")[0] in setups]


def cited_first(used: list[tuple[int, Any]], names: list[str], named: list[str]) -> list[tuple[int, Any]]:
    """The rows (`used`, named `names`) the paragraph names first, in its order, then the rest, CITED at most:
    the rows holding the numbers a sentence quotes are among the evidence."""
    order = {name: k for k, name in enumerate(dict.fromkeys(named))}
    ranked = sorted(zip(names, used, strict=True), key=lambda x: order.get(x[0], len(order)))
    return [u for _, u in ranked][:CITED]


def communication_bound(splits: list[Split]) -> tuple[str, ...]:
    """The setups at a batch whose communication estimate is at least BOUND of the train time and is
    communication: measurably above T1/N (not Cause.NONE) and not the data loader's wait (Cause.LOADER)."""
    return tuple(f"{s.setup} at batch {s.batch}" for s in splits
                 if s.share >= BOUND and s.cause not in (Cause.LOADER, Cause.NONE))


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


def _ordered(splits: list[Split]) -> list[Split]:
    return [s for group in _by_setup(tuple(splits)).values() for s in group]


def _by_setup(splits: tuple[Split, ...]) -> dict[str, list[Split]]:
    """The splits by setup, DDP first, then the most GPUs first; each setup's by batch."""
    out: dict[str, list[Split]] = {}
    for s in sorted(splits, key=lambda s: (s.engine != "ddp", -s.gpus)):
        out.setdefault(s.setup, []).append(s)
    return {k: sorted(v, key=lambda s: s.batch) for k, v in out.items()}


def _above(v: Optional[Verdict]) -> bool:
    """TN above T1/N: beyond by the verdict, or with one run each above it by more than the threshold."""
    return v is not None and (v.direction > 0 or (v.one_run and v.ratio > 1 + v.threshold))


def _q3_because(splits: tuple[Split, ...]) -> Q3Because:
    if splits and all(s.verdict is not None for s in splits) and not any(_above(s.verdict) for s in splits):
        return Q3Because.UNMEASURABLE
    groups = [g for g in _by_setup(splits).values() if len(g) >= 2]
    if not groups:
        return Q3Because.ONE_BATCH
    g = groups[0]  # the setup the answer cites: its own ends decide the trend word
    if all(s.verdict is not None and not _above(s.verdict) for s in (g[0], g[-1])):
        return Q3Because.WITHIN_SPREAD
    if g[-1].share < g[0].share:
        return Q3Because.FEWER_STEPS
    if _loader_at_large(g):
        return Q3Because.LOADER_AT_LARGE
    return Q3Because.NOT_FALLING


def _loader_at_large(group: list[Split]) -> bool:
    """The largest batch's estimate is the loader's, and the measured all-reduce falls from the smallest batch."""
    first, last = group[0], group[-1]
    return last.cause == Cause.LOADER and last.measured_s < first.measured_s


def q31_text(a: Q31Answer) -> str:
    text = ("Compute = T1/N (Q1's 1-GPU train time over N GPUs); communication = TN - T1/N, TN the N-GPU train "
            "time (Table 2)")
    groups = _by_setup(a.splits)
    first = groups.get(a.trend_setup) or next(iter(groups.values()), [])
    if first:
        ends = [first[0]] if len(first) == 1 else [first[0], first[-1]]
        text += f". On {a.device}, {first[0].setup}: " + ", ".join(
            (f"compute {number(s.compute_s)} s and communication " if s is ends[0] else f"{number(s.compute_s)} s and ")
            + f"{number(s.comm_s)} s ({s.share:.0%}{_cost(s.verdict)}) at {'batch ' * (s is ends[0])}{s.batch}"
            for s in ends) + "."
    else:
        text += ". No multi-GPU run has both figures yet."
    text += _trend_text(a, first)
    if a.bound:
        bound = [(s.setup, s.batch) for s in a.splits if f"{s.setup} at batch {s.batch}" in a.bound]
        text += f" Communication-bound (at least {BOUND:.0%}): {at_batches(bound, SETUPS)}."
    if a.left_out and set(a.left_out) <= set(a.loader):
        text += f" The loader's runs are left out of that list, though at {BOUND:.0%} or more."
    elif a.left_out:
        left = [(s.setup, s.batch) for s in a.splits if f"{s.setup} at batch {s.batch}" in a.left_out]
        text += f" Left out though at {BOUND:.0%} or more (the loader, or TN not above T1/N): {at_batches(left, SETUPS)}."
    if a.splits and not any(s.share >= BOUND for s in a.splits):
        every = "Every run is" if len(a.splits) > 1 else "The one run is"
        text += f" {every} computation-bound (communication under half its train time)."
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(*(s.verdict for s in a.splits)))


def _trend_text(a: Q31Answer, first: list[Split]) -> str:
    """How communication's share moves with the batch and why (Q3Because), then the data loader's part
    (the setup named where it is not the one listed first)."""
    g = _by_setup(a.splits).get(a.trend_setup, [])
    on = f" on {g[0].setup}" if g and g[0].setup != first[0].setup else ""
    if a.because == Q3Because.LOADER_AT_LARGE:
        more = len([x for x in a.loader if x != f"{g[-1].setup} at batch {g[-1].batch}"])
        return (f" The share does not fall with the batch: the exposed all-reduce does ({seconds(g[0].measured_s)} s at "
                f"{g[0].batch}, {seconds(g[-1].measured_s)} s at {g[-1].batch}{on}: fewer steps), but at {g[-1].batch} the "
                f"rest is the data loader's wait ({seconds(g[-1].data_wait_s)} s), not the network" + (f", as in {more} more runs"
                                                                                              if more else "") + _STALLS)
    if a.because == Q3Because.FEWER_STEPS:
        most = f", as in {a.falls[0]} of {a.falls[1]} setups" if a.falls[1] > 1 else ""
        text = (f" Communication's share falls with the batch{on}{most}: fewer steps, so fewer all-reduces "
                f"({g[0].steps:,} at batch {g[0].batch}, {g[-1].steps:,} at {g[-1].batch}).")
    elif a.because == Q3Because.UNMEASURABLE:
        text = (" No run's time is measurably above T1/N, so these communication figures are within the runs' "
                "spread and no trend with the batch is claimed.")
    elif a.because == Q3Because.WITHIN_SPREAD:
        text = (f" Neither end's time{on} is measurably above T1/N, so its communication figures are within the "
                "runs' spread and no trend with the batch is claimed.")
    elif a.because == Q3Because.NOT_FALLING:
        text = (f" Communication's share does not fall with the batch{on} ({g[0].share:.0%} to {g[-1].share:.0%}), although "
                "an epoch has fewer all-reduces" + (f"; it falls in {a.falls[0]} of {a.falls[1]} setups." if a.falls[1] > 1
                                                    else "."))
    else:
        text = ""
    return text + _loader_text(a)


_STALLS = " (a rank waiting for data stalls the all-reduce)."


def _loader_text(a: Q31Answer) -> str:
    """Where the data loader's wait explains the estimate: says so, with the first such run's numbers."""
    if not a.loader:
        return ""
    ex = next(s for s in _ordered(list(a.splits)) if s.cause == Cause.LOADER)
    numbers = (f"{seconds(ex.data_wait_s)} s against {seconds(ex.measured_s)} s of exposed all-reduce" + _STALLS
               if present(ex.measured_s) else f"{seconds(ex.data_wait_s)} s of data wait (DataParallel measures no "
               "all-reduce).")
    more = f" and {len(a.loader) - 1} more runs" if len(a.loader) > 1 else ""
    return f" At {ex.setup}, batch {ex.batch}{more}, it is mostly the data loader's wait, not the network: {numbers}"


def _cost(v: Optional[Verdict]) -> str:
    if v is None:
        return ""
    word = says(v, Words("below T1/N", "", "TN not distinguishable from T1/N", "TN not clearly above T1/N"))
    return f"; {word}" if word else ""


# --- Q3.2 ------------------------------------------------------------------------------------------


class BusbwBecause(StrEnum):
    BELOW = "below"  # every share cited under FAR_BELOW: the time holds more than bytes on the link
    NEAR = "near"  # every share cited between NEAR and 1
    SPREAD = "spread"  # the shares cited run from under FAR_BELOW to NEAR or more
    ABOVE = "above"  # above: the backward pass hides part of the all-reduce
    UNMEASURED = "unmeasured"


FAR_BELOW = 0.5  # a utilization under this share of the busbw is far below the link
NEAR = 0.5  # every share cited at least this: within a factor of two of the link's speed


@dataclass(frozen=True)
class Utilization:
    setup: str
    engine: str
    gpus: int
    batch: int
    gbps: float  # measured communication time where measured, else the estimate
    basis: str  # "measured" | "estimated"
    busbw_gbps: float
    share: float
    cause: Cause  # what explains the communication time it divides by (Q3.1's rule)


@dataclass(frozen=True)
class Q32Answer(Record):
    device: str
    cpu: bool
    gradients: int
    utilizations: tuple[Utilization, ...]
    because: BusbwBecause
    loader: tuple[str, ...]  # estimated rates whose time the data loader's wait explains: lower bounds
    basis: str = ""  # the column the range and shares are read from: "measured" where any run measured, else "estimated"
    other: int = 0  # rows of the other column (left out of the range, counted)
    notes: tuple[str, ...] = ()

    @property
    def ranged(self) -> tuple[Utilization, ...]:
        """The rows the range and the shares cite: those of `basis`."""
        return tuple(u for u in self.utilizations if u.basis == self.basis)


def q32_answer(tables: Tables) -> Optional[Q32Answer]:
    t3 = tables["table3"].reset_index(drop=True)
    if not part_a(tables) or not len(t3):
        return None
    namer = Namer(t3, "table3")
    found, used, missing = [], [], []
    for i, r in rows_of(t3):
        measured = _rate(r.util_measured_gbps)  # an exposed all-reduce of 0 s (all hidden) gives no rate
        gbps = r.util_measured_gbps if measured else r.util_est_gbps
        if r.status != "ok" or not _rate(gbps):
            missing.append(f"{namer.name(r)} ({missing_reason(r) if r.status != 'ok' else 'no communication time'})")
            continue
        share = r.share_measured if measured else r.share_est
        wait = float(r.data_wait_s) if present(r.data_wait_s) else float("nan")
        why = cause(float(r.comm_est_s), float(r.comm_measured_s) if measured else float("nan"), wait, None)
        found.append(Utilization(namer.name(r, batch=False), str(r.engine), int(r.gpus), int(r.batch_per_gpu), float(gbps),
                                 "measured" if measured else "estimated", float(r.busbw_gbps), float(share), why))
        used.append((i, r))
    device, cpu = where(r.gpu_model for _, r in used)
    gradients = int(t3.gradients.iloc[0]) if "gradients" in t3 and len(t3) else 0
    loader = tuple(f"{u.setup} at batch {u.batch}" for u in found if u.basis == "estimated" and u.cause == Cause.LOADER)
    basis = "measured" if any(u.basis == "measured" for u in found) else "estimated" if found else ""
    ranged = [u for u in found if u.basis == basis]
    ends = [u for u in (min(ranged, key=lambda u: u.gbps, default=None), max(ranged, key=lambda u: u.gbps, default=None))
            if u]
    rows = cited_first(used, [f"{u.setup} at batch {u.batch}" for u in found],
                       [f"{u.setup} at batch {u.batch}" for u in ends] + shown(loader))
    return Q32Answer(cited(namer, rows), tuple(missing), device, cpu, gradients, tuple(found),
                     busbw_because(ranged), loader, basis, len(found) - len(ranged),
                     setting_notes(tables.get("train_cells"), (r for _, r in rows), False))


def _rate(value: Any) -> bool:
    """A rate that can be cited: there, finite and above 0."""
    return present(value) and math.isfinite(float(value)) and float(value) > 0


def busbw_because(ranged: list[Utilization]) -> BusbwBecause:
    """The word for the shares of busbw the answer cites (one column's): BELOW where all are under
    FAR_BELOW, NEAR where all lie in [NEAR, 1], ABOVE where one passes 1, SPREAD otherwise."""
    shares = [u.share for u in ranged if present(u.share)]
    if not shares:
        return BusbwBecause.UNMEASURED
    if max(shares) > 1:
        return BusbwBecause.ABOVE
    if max(shares) < FAR_BELOW:
        return BusbwBecause.BELOW
    return BusbwBecause.NEAR if min(shares) >= NEAR else BusbwBecause.SPREAD


def q32_text(a: Q32Answer) -> str:
    text = (f"A ring all-reduce (Patarasuk and Yuan) of P = {a.gradients:,} 4-byte gradients over N GPUs takes "
            "t = 2(N-1)/N x 4P / B at link bandwidth B. Utilization = steps x 2(N-1)/N x 4P / communication time.")
    ranged = a.ranged
    if ranged:
        low, high = min(ranged, key=lambda u: u.gbps), max(ranged, key=lambda u: u.gbps)
        ends = [f"{number(u.gbps)} GB/s ({u.setup}, batch {u.batch})" for u in ([low] if low is high else [low, high])]
        column = "DDP's measured all-reduce" if a.basis == "measured" else "the estimate TN - T1/N"
        other = f" ({a.other} more from the estimate)" if a.other and a.basis == "measured" else ""
        text += (f" Table 3 on {a.device}, from {column}{other}: " + (f"from {ends[0]} to {ends[1]}." if len(ends) > 1
                                                                 else f"{ends[0]}."))
    shares = [u.share for u in ranged if present(u.share)]
    if a.because == BusbwBecause.UNMEASURED:
        text += " No run measured the link's busbw, so there is nothing to hold these against (DDP cells measure it)."
    else:
        bus = max(u.busbw_gbps for u in ranged if present(u.busbw_gbps))
        span = f"{min(shares):.0%}-{max(shares):.0%}" if len(shares) > 1 else f"{shares[0]:.0%}"
        text += f" That is {span} of the busbw the jobs measured (up to {bus:.1f} GB/s)"
        text += {BusbwBecause.BELOW: ", far below the link: the time holds more than bytes on the wire (bucket "
                                     "latency, the slowest rank).",
                 BusbwBecause.NEAR: ": within a factor of two of the link's speed in every run.",
                 BusbwBecause.SPREAD: ": from far below the link to within a factor of two of it (bucket latency, "
                                      "the slowest rank).",
                 BusbwBecause.ABOVE: "; above 1, the backward pass hides part of the all-reduce, so the time left "
                                     "exposed is shorter than the transfer."}[a.because]
        if a.basis == "measured" and a.because != BusbwBecause.ABOVE:
            text += " (DDP hides part of its all-reduce in the backward pass: a rate from the exposed time is no link speed.)"
    if a.loader:
        loader = [(u.setup, u.batch) for u in a.utilizations if f"{u.setup} at batch {u.batch}" in a.loader]
        text += (f" Rates from TN - T1/N are lower bounds where the data loader's wait fills that time (Q3.1): "
                 f"{at_batches(loader, SETUPS)}.")
    return text + caveats(a.cpu, a.missing, list(a.notes))
