"""Part A Q3.1 as a record and a paragraph: compute against communication per epoch (the estimate
T1/N and TN - T1/N) beside what the runs measured (the exposed all-reduce, rank 0's GPU time, its
data wait). Q3.2: collect.train.answers_bandwidth."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Optional

from collect.evidence import listing
from collect.questions import Record, Tables, Words, against, one_run_note, says
from collect.render import number, seconds
from collect.train.answers_common import DP_TRAFFIC, at_batches, caveats, cited, figure, part_a, rows_of, setting_notes, where
from collect.train.labels import Namer, base_key, missing_reason, present
from collect.verdict import Verdict, leaning

BOUND = 0.5  # communication-bound: communication is at least this share of the train time
BREAKS = 1.5  # compute measured over this multiple of T1/N: the T1/N model does not hold for that run
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

    @property
    def compute_span(self) -> tuple[float, float]:
        """T1/N over T1's runs (the verdict's base side); the point where it has no sides."""
        s = self.verdict.sides if self.verdict is not None else None
        return (min(s.a_values), max(s.a_values)) if s else (self.compute_s, self.compute_s)

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
        """The compute measured is over BREAKS times T1/N: the homework's model (compute = T1/N) does not hold,
        so TN - T1/N is mostly not communication."""
        return present(self.gpu_s) and self.gpu_s > BREAKS * self.compute_s

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
    UNMEASURABLE = "unmeasurable"  # no run's TN is above T1/N by the verdict: no communication cost to trend
    WITHIN_SPREAD = "within_spread"  # the cited setup's smallest and largest batch both: no trend from its ends
    MIXED = "mixed"  # the cited setup's share falls, another's does not: like-for-like rows disagree, no trend
    OVERLAP = "overlap"  # the cited ends' shares overlap over the runs' spread: no trend from them


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
                            v, cause(float(r.comm_est_s), measured, wait, v),
                            float(r.compute_measured_s) if present(r.compute_measured_s) else float("nan"),
                            share_span(v)))
        used.append((i, r))
    device, cpu = where(r.gpu_model for _, r in used)
    no_traffic = sum(s.engine == "dp" for s in splits) if cpu else 0  # on a CPU DataParallel wraps nothing
    if no_traffic:
        used = [(i, r) for (i, r), s in zip(used, splits, strict=True) if s.engine != "dp"]
        splits = [s for s in splits if s.engine != "dp"]
    bound = communication_bound(splits)
    loader = tuple(f"{s.setup} at batch {s.batch}" for s in _ordered(splits) if s.cause == Cause.LOADER)
    left = tuple(f"{s.setup} at batch {s.batch}" for s in splits
                 if s.share >= BOUND and f"{s.setup} at batch {s.batch}" not in bound)
    groups = [g for g in _by_setup(tuple(splits)).values() if len(g) >= 2]
    falls = (sum(direction(g) == FALLS for g in groups), len(groups))
    trend = groups[0] if groups else next(iter(_by_setup(tuple(splits)).values()), [])
    named = [f"{s.setup} at batch {s.batch}" for s in trend[:1] + trend[-1:]] + list(loader[:1])
    named += [x for listed in (bound, left) for x in shown(listed)]
    rows = cited_first(used, [f"{s.setup} at batch {s.batch}" for s in splits], named)
    return Q31Answer(cited(namer, rows), tuple(missing), device, cpu, tuple(splits), bound, loader,
                     _q3_because(tuple(splits)), left, groups[0][0].setup if groups else "", falls,
                     setting_notes(tables.get("train_cells"), (r for _, r in rows), False),
                     tuple(g[0].setup for g in groups if direction(g) == RISES),
                     tuple(g[0].setup for g in groups if direction(g) == UNSTEADY), no_traffic,
                     tuple(f"{s.setup} at batch {s.batch}" for s in _ordered(splits) if s.breaks_model and not cpu))


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


def communication_bound(splits: list[Split]) -> tuple[str, ...]:
    """The setups at a batch whose estimate TN - T1/N is at least BOUND of the train time and measurably
    above 0 (not Cause.NONE): all of them, whatever the answer then says explains the estimate."""
    return tuple(f"{s.setup} at batch {s.batch}" for s in splits if s.share >= BOUND and s.cause != Cause.NONE)


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
    return v is not None and leaning(v) > 0


def _q3_because(splits: tuple[Split, ...]) -> Q3Because:
    if splits and all(s.verdict is not None for s in splits) and not any(_above(s.verdict) for s in splits):
        return Q3Because.UNMEASURABLE
    groups = [g for g in _by_setup(splits).values() if len(g) >= 2]
    if not groups:
        return Q3Because.ONE_BATCH
    g = groups[0]  # the setup the answer cites: its own ends decide the trend word
    if all(s.verdict is not None and not _above(s.verdict) for s in (g[0], g[-1])):
        return Q3Because.WITHIN_SPREAD
    ways = {direction(h) for h in groups}
    if ways == {FALLS}:  # a fall only where every like-for-like setup falls at every step, apart over the spread
        return Q3Because.FEWER_STEPS if apart(g[0], g[-1]) else Q3Because.OVERLAP
    if len(ways) > 1 or ways == {UNSTEADY}:
        return Q3Because.MIXED
    if _loader_at_large(g):
        return Q3Because.LOADER_AT_LARGE
    return Q3Because.NOT_FALLING


def _loader_at_large(group: list[Split]) -> bool:
    """The largest batch's estimate is the loader's, and the measured all-reduce falls from the smallest batch."""
    first, last = group[0], group[-1]
    return last.cause == Cause.LOADER and last.measured_s < first.measured_s


def q31_text(a: Q31Answer) -> str:
    text = "Compute = T1/N, communication = TN - T1/N (Table 2)"
    groups = _by_setup(a.splits)
    first = groups.get(a.trend_setup) or next(iter(groups.values()), [])
    if first:
        ends = [first[0]] if len(first) == 1 else [first[0], first[-1]]
        text += f". On {a.device}, {first[0].setup}: " + ", ".join(
            (f"compute {_compute(s)} s and communication " if s is ends[0] else f"{_compute(s)} s and ")
            + _comm(s) + f" at {'batch ' * (s is ends[0])}{s.batch}" for s in ends) + "."
    else:
        text += ". No multi-GPU run has both figures yet."
    text += _trend_text(a, first)
    text += _broken_text(a)
    if a.bound:
        bound = [(s.setup, s.batch) for s in a.splits if f"{s.setup} at batch {s.batch}" in a.bound]
        text += f" Communication is at least {BOUND:.0%} of the train time TN in: {at_batches(bound, len(bound))}."
    if a.left_out:
        left = [(s.setup, s.batch) for s in a.splits if f"{s.setup} at batch {s.batch}" in a.left_out]
        text += (f" Communication is at least {BOUND:.0%} of TN but left out{' of that list' * bool(a.bound)}, as the "
                 f"runs' spread hides the size of TN's excess over T1/N: {at_batches(left, len(left))}.")
    listed = a.because in (Q3Because.MIXED, Q3Because.NOT_FALLING) and all(
        len(g) >= 2 for g in _by_setup(a.splits).values())  # every share is printed above
    if a.splits and not any(s.share >= BOUND for s in a.splits) and not listed:
        every = "every run" if len(a.splits) > 1 else "the one run"
        text += f" Communication is under half of TN in {every}."
    if any(s.engine == "dp" for s in a.splits) and not a.cpu:  # on a CPU DataParallel wraps nothing (the note)
        text += f" DataParallel's TN - T1/N is no all-reduce: it {DP_TRAFFIC}."
    if a.no_traffic:
        text += (f" The {a.no_traffic} DataParallel rows are left out: on a CPU DataParallel runs one process, so "
                 "nothing is communicated.")
    if a.cpu:
        text += _cpu_text(first)
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(*(s.verdict for s in a.splits)))


def _cpu_text(cited: list[Split]) -> str:
    """On a CPU the N ranks are processes sharing its cores: T1/N is no rank's compute (rank 0's own time beside it)."""
    ex = next((s for s in cited if present(s.gpu_s)), None)
    own = f" (rank 0's at batch {ex.batch}: {seconds(ex.gpu_s)} s against {seconds(ex.compute_s)} s)" if ex else ""
    return (f" On one CPU the ranks share its cores, so T1/N is no rank's compute{own}: TN - T1/N likely holds "
            "their contention for the cores.")


def _compute(s: Split) -> str:
    """T1/N, over T1's runs where they spread."""
    lo, hi = s.compute_span
    return f"{number(lo)}-{number(hi)}" if number(lo) != number(hi) else number(s.compute_s)


def _comm(s: Split) -> str:
    """The estimate with its share and what the runs say of it; a negative one is no measurement."""
    if s.comm_s <= 0:
        return f"{number(s.comm_s)} s (below zero: TN under T1/N, within the runs' noise)"
    lo, hi = s.comm_span
    if number(lo) != number(hi):  # T1's or TN's runs spread: the point would claim a precision the runs lack
        return f"{number(lo)}-{number(hi)} s ({_span(s)}{_cost(s)})"
    return f"{number(s.comm_s)} s ({s.share:.0%}{_cost(s)})"


def _trend_text(a: Q31Answer, first: list[Split]) -> str:
    """How communication's share moves with the batch and why (Q3Because), then the data loader's part
    (the setup named where it is not the one listed first)."""
    g = _by_setup(a.splits).get(a.trend_setup, [])
    on = f" on {g[0].setup}" if g and g[0].setup != first[0].setup else ""
    if a.because == Q3Because.LOADER_AT_LARGE:
        return _large_text(g, on)
    if a.because == Q3Because.FEWER_STEPS:
        single = any(s.verdict is not None and s.verdict.one_run for s in (g[0], g[-1]))
        most = f", as in {a.falls[0]} of {a.falls[1]} setups" if a.falls[1] > 1 else ""
        two = all(len(h) == 2 for h in _by_setup(a.splits).values())  # two batches a setup: a difference, no trend
        word = (f" In these single runs, communication's share is smaller at {g[-1].batch} than at {g[0].batch}{on}"
                if single else f" Communication's share is smaller at {g[-1].batch} than at {g[0].batch} over the runs' "
                f"spread{on}{most}" if two else f" Communication's share falls with the batch{on}{most}")
        text = (f"{word}: fewer steps, so fewer all-reduces ({g[0].steps:,} at batch {g[0].batch}, {g[-1].steps:,} "
                f"at {g[-1].batch}).")
    elif a.because in (Q3Because.UNMEASURABLE, Q3Because.WITHIN_SPREAD):
        above = any(s.every_run_above for s in g)
        text = (f" The runs{on} spread too widely to size the excess, so no trend with the batch is claimed." if above else
                f" TN is not measurably above T1/N{on}, so these figures are within the runs' spread and no trend with "
                "the batch is claimed.")
        text += "" if a.cpu else next((_measured_text(s) for s in g[-1:] + g[:1] if _unexplained(s)), "")
    elif a.because == Q3Because.MIXED:
        text = f" Communication's share{_directions_text(a)}: no one trend with the batch."
    elif a.because == Q3Because.OVERLAP:
        text = (f" Over the runs' spread the share at batch {g[0].batch} spans {_span(g[0])} and at {g[-1].batch} "
                f"{_span(g[-1])}{on}: they overlap, so no trend with the batch is claimed.")
    elif a.because == Q3Because.NOT_FALLING:
        text = (f" Communication's share{_directions_text(a)}: it does not fall with the batch, although an epoch has "
                "fewer all-reduces.")
    else:
        text = ""
    return text + _loader_text(a)


def _directions_text(a: Q31Answer) -> str:
    """Every setup of 2+ batches by how its share moves (Q31Answer.falls, rising, unsteady), each with its shares;
    the batches said once where every setup ran the same."""
    groups = {k: g for k, g in _by_setup(a.splits).items() if len(g) >= 2}
    batches = {tuple(s.batch for s in g) for g in groups.values()}
    once = len(batches) == 1
    parts = [f"{way} in " + listing([f"{k} ({_shares(groups[k], once)})" for k in names], len(names))
             for way, names in (("falls", [k for k, g in groups.items() if direction(g) == FALLS]),
                                ("rises", a.rising), (f"is {UNSTEADY}", a.unsteady)) if names]
    at = f" at batch {', '.join(map(str, next(iter(batches))))}" if once else ""
    return at + " " + "; ".join(parts)


def _shares(g: list[Split], once: bool) -> str:
    return ", ".join(f"{s.share:.0%}" for s in g) + ("" if once else f" at batch {', '.join(str(s.batch) for s in g)}")


def _span(s: Split) -> str:
    low, high = s.share_span
    return f"{low:.0%}" if f"{low:.0%}" == f"{high:.0%}" else f"{low:.0%}-{high:.0%}"


def _large_text(g: list[Split], on: str) -> str:
    """The largest batch's estimate beside what its run measured (_measured_text), after the exposed all-reduce's
    fall from the smallest batch."""
    lo, hi = g[0], g[-1]
    return (f" The share does not fall; the all-reduce the backward pass leaves unhidden does{on} "
            f"({seconds(lo.measured_s)} s at {lo.batch}, {seconds(hi.measured_s)} s at {hi.batch}): fewer steps, so "
            "fewer all-reduces." + _measured_text(hi, exposed=False))


def _measured_text(s: Split, exposed: bool = True) -> str:
    """What the run measured beside its estimate: the exposed all-reduce (where not said before), the compute
    measured against T1/N (the model broken where Split.breaks_model), rank 0's data wait. No cause is claimed:
    no run times a rank held at the all-reduce by another."""
    said = f"the all-reduce the backward pass leaves unhidden is {seconds(s.measured_s)} s, " if exposed else ""
    wait = f"; rank 0 waited {seconds(s.data_wait_s)} s on its loader" if present(s.data_wait_s) else ""
    if not present(s.gpu_s):
        return f" At {s.batch} {said}TN - T1/N is {seconds(s.comm_s)} s{wait} (Table 2)."
    broken = (": the homework's model (compute = T1/N) breaks here, so TN - T1/N is mostly not communication"
              if s.breaks_model else "")
    return (f" At {s.batch} {said}the compute measured is {seconds(s.gpu_s)} s against T1/N {seconds(s.compute_s)} s"
            f"{broken}{wait} (Table 2).")


def _unexplained(s: Split) -> bool:
    """An estimate above 0 in every run though the verdict cannot size it, that the exposed all-reduce does not
    explain: what the run measured is said beside it."""
    return s.every_run_above and present(s.measured_s) and s.measured_s < EXPLAINS * s.comm_s


def _broken_text(a: Q31Answer) -> str:
    """Where the compute measured is far above T1/N: the homework's model does not hold there (each run's figures)."""
    said = [s for s in _ordered(list(a.splits)) if f"{s.setup} at batch {s.batch}" in a.broken]
    if not said:
        return ""
    runs = listing([f"{s.setup}, batch {s.batch} ({seconds(s.gpu_s)} against {seconds(s.compute_s)} s)" for s in said],
                   len(said))
    return (f" Compute measured (Table 2) exceeds {BREAKS:g} x T1/N at {runs}: there the homework's T1/N model "
            "breaks, so TN - T1/N is mostly not communication.")


def _loader_text(a: Q31Answer) -> str:
    """Where the data loader's wait may explain the estimate: the first such run's numbers, the cause an inference."""
    if not a.loader or a.because == Q3Because.LOADER_AT_LARGE or a.broken:  # the broken model says it
        return ""
    ex = next(s for s in _ordered(list(a.splits)) if s.cause == Cause.LOADER)
    exposed = (f", its exposed all-reduce {seconds(ex.measured_s)} s" if present(ex.measured_s)
               else " (DataParallel times no all-reduce)")
    return (f" At {ex.setup}, batch {ex.batch}, TN - T1/N is {seconds(ex.comm_s)} s{exposed}, and rank 0 waited "
            f"{seconds(ex.data_wait_s)} s on its loader.")


def _cost(s: Split) -> str:
    v = s.verdict
    if v is None:
        return ""
    if s.every_run_above:
        runs = min(v.n_a, v.n_b)
        return f"; TN above T1/N in {'both' if runs == 2 else f'all {runs}'} runs"
    word = says(v, Words("below T1/N", "", "TN not distinguishable from T1/N", "TN not clearly above T1/N"))
    return f"; {word}" if word else ""
