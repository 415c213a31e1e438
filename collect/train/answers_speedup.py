"""Part A Q2 as a record (a pure function of the tables) and its paragraph: the weak-scaling speedups
(what a loader-bound 1-GPU run makes of them), and whether strong scaling would be better or worse,
with a data point the study already has (a strong-table row; without one, the usual argument alone)."""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

import pandas as pd

from collect.evidence import Measured, listing
from collect.questions import Record, Tables, against, one_run_note
from collect.render import seconds
from collect.train.answers_common import (SINGLE_BAND, at_batches, caveats, cited, figure, part_a, rows_of, secs,
                                          setting_notes, where)
from collect.train.answers_strong import (CUTOFF, LOADER_BOUND, StrongClaim, StrongPoint, decided, strong_claim,
                                          strong_evidence, strong_points, strong_text)
from collect.train.labels import Namer, base_key, missing_reason, present
from collect.train.tables import BASE_KEYS
from collect.verdict import SINGLE_RUN_NOISE, Verdict, leaning, verdict


@dataclass(frozen=True)
class Speedup:
    setup: str
    engine: str  # the cell's engine ("dp": why it is slower than 1 GPU is said)
    batch: int
    speedup: float
    efficiency: float
    t1_wait_share: float  # T1's epoch share waiting on its loader (Table 1's data wait / epoch; NaN: not measured)
    verdict: Verdict  # TN against T1 (below: faster than 1 GPU); its sides hold both epochs' repeats
    t1_beside: bool = False  # a 1-GPU run of T1 ran beside other cells on its machine (collect.packing: † in Table 1)
    tn_beside: bool = False  # an N-GPU run of TN did
    row: int = -1  # the row's position in Table 1 (the speedup plot marks it from these fields)

    @property
    def loader_bound(self) -> bool:
        """T1 waits on its loader at least LOADER_BOUND of its epoch: the speedup measures no GPU scaling (TA4 6)."""
        return present(self.t1_wait_share) and self.t1_wait_share >= LOADER_BOUND

    @property
    def upper_bound(self) -> bool:
        """T1 ran beside other cells and TN alone: a T1 slowed by its neighbours may overstate T1/TN (TA7 2)."""
        return self.t1_beside and not self.tn_beside


@dataclass(frozen=True)
class Superlinear:
    """A speedup above N (efficiency above 1), decided against 1 GPU, and why: the 1-GPU run's share of its
    epoch spent waiting on its loader (the data-wait column; NaN: not measured)."""

    setup: str
    batch: int
    efficiency: float
    one_gpu_wait_share: float
    verdict: Optional[Verdict] = None  # N x TN against T1

    @property
    def shown(self) -> bool:
        """N x TN below T1 by the verdict over repeats on both sides: a single run a side, or runs within their
        spread, cannot show an efficiency above 1."""
        return self.verdict is not None and self.verdict.outcome == "beyond" and self.verdict.direction < 0


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
    level: tuple[Speedup, ...] = ()  # the other speedups the highest's does not exceed (level_with): no single top
    loader_invalid: tuple[StrongPoint, ...] = ()  # strong rows whose loader-bound T1(B) decides nothing (no_evidence)
    level_why: str = ""  # why `level` cannot be ranked below the top (level_reason): SINGLE | NOISE | FEW
    one_process: tuple[tuple[str, int], ...] = ()  # DataParallel on a CPU (setup, batch): one process, no speedup

    @property
    def ranked(self) -> tuple[Speedup, ...]:
        """The speedups the answer's range spans: the clean ones, where any (ranked_speedups)."""
        return ranked_speedups(self.speedups)

    @property
    def upper_bounds(self) -> tuple[Speedup, ...]:
        """The speedups on a T1 beside other cells and a TN alone, not loader-bound (that rule sets those apart): upper
        bounds, out of the range where a clean one exists, never set against it (TA7 2)."""
        return tuple(s for s in unbound_speedups(self.speedups) if s.upper_bound)

    @property
    def no_clean(self) -> bool:
        """Every speedup of the range is an upper bound: the set holds no clean one."""
        return bool(self.ranked) and all(s.upper_bound for s in self.ranked)

    @property
    def loader_apart(self) -> bool:
        """The loader rule sets some speedups apart (unbound_speedups keeps all where every T1 is loader-bound)."""
        return len(unbound_speedups(self.speedups)) < len(self.speedups)

    @property
    def above_range(self) -> Optional[Speedup]:
        """The highest speedup Table 1 prints above the range's top, over a loader-bound T1 the loader rule set apart
        (TA5 10), if any."""
        top = max((s.speedup for s in self.ranked), default=math.inf)
        return max((s for s in self.speedups if s.speedup > top and s.loader_bound and self.loader_apart),
                   key=lambda s: s.speedup, default=None)

    @property
    def slower(self) -> tuple[Speedup, ...]:
        """The runs slower than 1 GPU: by the verdict over repeats, or a single run a side past SINGLE_RUN_NOISE."""
        return tuple(s for s in self.speedups if decided(s.verdict) > 0
                     and (not s.verdict.one_run or leaning(s.verdict, SINGLE_RUN_NOISE) > 0))

    @property
    def near_one(self) -> tuple[Speedup, ...]:
        """Single runs a side slower than 1 GPU by the verdict's threshold but within SINGLE_RUN_NOISE: what single
        runs of one setting can differ by, so slower or not they cannot tell (TA7 9's class: a threshold verdict
        on single runs near it)."""
        return tuple(s for s in self.speedups if decided(s.verdict) > 0 and s not in self.slower)

    @property
    def unranked(self) -> bool:
        """Even the lowest speedup is within run-to-run noise of the highest: the runs cannot rank them."""
        low = min(self.ranked, key=lambda s: s.speedup, default=None)
        return any(s is low for s in self.level)


UPPER_MARK, LOADER_MARK = "upper bound: T1 beside other cells, TN alone (†)", "loader-bound T1"


def plot_marks(a: Optional[Q2Answer]) -> dict[int, str]:
    """Table 1's row -> why the answer sets its speedup apart (the plot marks it so, TA8 16); clean rows are absent."""
    if a is None:
        return {}
    marks = {s.row: UPPER_MARK for s in a.upper_bounds}
    marks.update({s.row: LOADER_MARK for s in a.speedups if s.loader_bound and a.loader_apart})
    return marks


def unbound_speedups(speedups: Sequence[Speedup]) -> tuple[Speedup, ...]:
    """The speedups over a 1-GPU run that is not loader-bound (TA4 6), or all of them where every one is."""
    return tuple(s for s in speedups if not s.loader_bound) or tuple(speedups)


def ranked_speedups(speedups: Sequence[Speedup]) -> tuple[Speedup, ...]:
    """The clean speedups of unbound_speedups: no upper bound (a T1 beside other cells over a TN alone: TA7 2);
    where none is clean, the upper bounds (said so)."""
    unbound = unbound_speedups(speedups)
    return tuple(s for s in unbound if not s.upper_bound) or unbound


def q2_answer(tables: Tables) -> Optional[Q2Answer]:
    t1, q1 = tables["table1"].reset_index(drop=True), tables["q1"].reset_index(drop=True)
    rows = rows_of(t1)
    multi = [(i, r) for i, r in rows if r.engine != "single"]
    if not part_a(tables):
        return None
    namer = Namer(t1, "table1", cells=tables.get("train_cells"))
    ones = {base_key(r): (i, r) for i, r in rows if r.engine == "single" and figure(r, "epoch_s")}
    device, cpu = where(r.gpu_model for _, r in multi + list(ones.values()) if r.status == "ok")
    # on a CPU DataParallel wraps nothing: one process trains the global batch, no N-worker run (TA3 8)
    alone_dp = [(i, r) for i, r in multi if cpu and r.engine == "dp" and figure(r, "epoch_s")]
    one_process = tuple((namer.name(r, batch=False), int(r.batch_per_gpu)) for _, r in alone_dp)
    multi = [x for x in multi if x not in alone_dp]
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
        speedups.append(Speedup(namer.name(r, batch=False), str(r.engine), int(r.batch_per_gpu), float(r.speedup),
                                float(r.efficiency), waits.get(base_key(one[1]), (float("nan"), 0))[0],
                                against(tn, t1n), _beside(one[1]), _beside(r), i))  # type: ignore[arg-type]
        above_n = against(tn.scaled(float(r.gpus)), t1n)  # type: ignore[arg-type]
        # N x TN under T1 (Superlinear.shown: over repeats), over a T1 the loader rule keeps (TA4 6)
        if float(r.efficiency) > 1 and decided(above_n) < 0 and not speedups[-1].loader_bound:
            fast.append(Superlinear(speedups[-1].setup, int(r.batch_per_gpu), float(r.efficiency),
                                    waits.get(base_key(one[1]), (float("nan"), 0))[0], above_n))
        used.append(((i, r), one))
    if not multi and not one_process:
        missing.append("no multi-GPU cell: add engine = \"ddp\" with gpus_per_node = [2, 4]")
    strongs = strong_points(multi, q1, namer, waits)
    ranked = list(ranked_speedups(speedups))
    ends = [s for s in (min(ranked, key=lambda s: s.speedup, default=None),
                        max(ranked, key=lambda s: s.speedup, default=None),
                        max((s for s in speedups if s.loader_bound), key=lambda s: s.speedup, default=None)) if s]
    level = level_with(ranked)
    # the slower list; the upper bounds, named apart; the first 3 the top is level with (_level)
    named = ({(s.setup, s.batch) for s in ends} | {(s.setup, s.batch) for s in speedups if decided(s.verdict) > 0
                                                    or s.upper_bound} | {(s.setup, s.batch) for s in level[:3]})
    # the rows the text names (the range's ends, the top over a loader-bound T1, the slower list) first, then the rest
    cited_first = sorted(used, key=lambda u: (namer.name(u[0][1], batch=False), int(u[0][1].batch_per_gpu)) not in named)
    pairs = [x for u in cited_first[:max(6, len(named))] for x in u]
    bound = _loader_bound(waits, {base_key(o[1]) for o in ones.values()}, {s.batch for s in speedups})
    invalid = tuple(p for p in strongs if p.no_evidence)
    claim, cite = strong_claim([p for p in strongs if p not in invalid])
    evidence = cited(namer, pairs + alone + alone_dp) + strong_evidence(tables, [cite] if cite else [])
    return Q2Answer(evidence, tuple(missing), device, cpu, tuple(speedups), cite,
                    max((int(r.gpus) for _, r in multi), default=1), tuple(strongs), claim,
                    tuple(fast), setting_notes(tables.get("train_cells"), (r for _, r in pairs + alone), False, named=True),
                    bound, tuple(unpaired), level, invalid, level_reason(level, ranked), one_process)


def _beside(row: Any) -> bool:
    """A run of the table's row ran beside other cells (its "beside" count: collect.packing)."""
    return bool(getattr(row, "beside", 0))


def speedup_values(s: Speedup) -> tuple[float, ...]:
    """A speedup per N-GPU run: median(T1) / TN_i (the verdict's sides), or the speedup alone."""
    sides = s.verdict.sides
    if sides is None:
        return (s.speedup,)
    t1 = statistics.median(sides.a_values)
    return tuple(t1 / tn for tn in sides.b_values)


def level_with(speedups: list[Speedup]) -> tuple[Speedup, ...]:
    """The speedups the highest does not exceed by the verdict (collect.verdict over speedup_values; one run a
    side: within its band): the top is then no finding, and the answer names them beside it."""
    if not speedups:
        return ()
    top = max(speedups, key=lambda s: s.speedup)
    return tuple(s for s in speedups if s is not top
                 and decided(verdict(speedup_values(s), speedup_values(top))) <= 0)


SINGLE, NOISE, FEW = "single", "noise", "few"  # Q2Answer.level_why


def level_reason(level: tuple[Speedup, ...], speedups: list[Speedup]) -> str:
    """Why the verdict leaves `level` unranked against the highest: SINGLE where a side is one run (no noise
    measured); NOISE where the runs of each (of the lowest, where it is level: Q2Answer.unranked) overlap the
    highest's; else FEW (runs apart, but too few of them for the verdict)."""
    if not level:
        return ""
    top, low = max(speedups, key=lambda s: s.speedup), min(speedups, key=lambda s: s.speedup)
    if any(s.verdict.one_run for s in [top, *level]):
        return SINGLE
    t = speedup_values(top)
    named = [low] if any(s is low for s in level) else level
    return NOISE if all(max(speedup_values(s)) >= min(t) for s in named) else FEW


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


def q2_text(a: Q2Answer) -> str:
    text = "Table 1 gives the epoch time (with data loading) and speedup T1/TN"
    if a.speedups:
        low, high = min(a.ranked, key=lambda s: s.speedup), max(a.ranked, key=lambda s: s.speedup)
        ends = [f"{s.speedup:.2f}x ({s.setup}, batch {s.batch}{_undecided(s)})" for s in ([low] if low is high else [low, high])]
        over = a.above_range
        text += f" on {a.device}{_whose(a, bool(over))}: " + (f"from {ends[0]} to {ends[-1]}" if len(ends) > 1
                                                              else ends[0])
        text += _level(a.level, a.unranked, a.level_why)
        higher = not a.no_clean and any(s.speedup > high.speedup for s in a.upper_bounds)
        if over:
            text += (f"; Table 1's higher ones are upper bounds (next) or rest on a loader-bound T1 (up to "
                     f"{over.speedup:.2f}x, below)" if higher else
                     f"; Table 1's higher ones, up to {over.speedup:.2f}x, rest on a loader-bound T1 (below)")
        text += "." + _upper(a)
    else:
        text += "; no multi-GPU run has a speedup yet."
    if a.slower or a.near_one:
        text += _slower(a.slower, a.near_one)
        if any(s.engine == "dp" for s in a.slower + a.near_one) and not a.cpu:  # on a CPU DataParallel wraps nothing
            text += DP_SLOWER
    if a.one_process:
        text += (f" On a CPU DataParallel runs one process on the global batch, not {_workers(a.one_process)} workers,"
                 f" so the DataParallel rows ({at_batches(a.one_process)}) measure no speedup.")
    text += _unpaired(a.unpaired) + _loader_text(a)
    text += " This is weak scaling (a fixed batch per GPU)."
    text += strong_text(a.strong, a.strong_claim, a.strongs, a.loader_invalid, bool(a.loader_bound))
    verdicts = [s.verdict for s in a.speedups] + [p.verdict for p in a.strongs]
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(*verdicts))


PACKED = "1-GPU run ran beside other cells and the N-GPU run alone († in Table 1)"


def _whose(a: Q2Answer, loader: bool) -> str:
    """Whose speedups the range spans: none clean (every one an upper bound, said once), or the clean ones, named
    by what sets the others apart (a loader-bound T1; a T1 beside other cells over a TN alone)."""
    if a.no_clean:
        return (f"; none is clean: in each the {PACKED}, so a T1 slowed by its neighbours may overstate them, and "
                "these are upper bounds")
    apart = (["not loader-bound"] if loader else []) + (["sharing their machine as the N-GPU run did (†)"]
                                                         if a.upper_bounds else [])
    return f" over 1-GPU runs {', '.join(apart)}" if apart else ""


def _upper(a: Q2Answer) -> str:
    """The upper bounds kept out of a clean range (Q2Answer.upper_bounds), named, and why."""
    if a.no_clean or not a.upper_bounds:
        return ""
    named = [f"{s.speedup:.2f}x ({s.setup}, batch {s.batch})" for s in sorted(a.upper_bounds, key=lambda s: -s.speedup)]
    more = f" and {len(named) - 4} more (Table 1)" if len(named) > 4 else ""
    return (f" Upper bounds, left out of that range and compared with none of it: {listing(named[:4])}{more}: in each "
            f"the {PACKED}, so a T1 slowed by its neighbours may overstate it.")


def _slower(slower: Sequence[Speedup], near: Sequence[Speedup]) -> str:
    """The runs slower than 1 GPU: by the verdict over repeats, and apart those that are a single run on a side
    (no verdict: what the single runs did, TA4 14); the single runs within SINGLE_RUN_NOISE of 1 GPU's time said
    as such, with their speedups (Q2Answer.near_one)."""
    over, single = [s for s in slower if not s.verdict.one_run], [s for s in slower if s.verdict.one_run]
    parts = [f"slower than 1 GPU: {at_batches((s.setup, s.batch) for s in over)}"] if over else []
    if single:
        parts.append(f"slower than 1 GPU in the single run of each: {at_batches((s.setup, s.batch) for s in single)}")
    if near:
        named = listing([f"{s.setup} at batch {s.batch} ({s.speedup:.2f}x)" for s in near])
        parts.append(f"within {SINGLE_RUN_NOISE:.0%} of 1 GPU's time, {SINGLE_BAND}, so slower or not the single runs "
                     f"cannot tell: {named}")
    said = "; ".join(parts)
    return f" {said[0].upper()}{said[1:]}."


def _workers(rows: tuple[tuple[str, int], ...]) -> str:
    """"2" or "2 or 4": the worker counts the setups' names give."""
    return " or ".join(sorted({name.split()[0] for name, _ in rows}, key=int))


def _level(level: tuple[Speedup, ...], unranked: bool, why: str) -> str:
    """The speedups the verdict cannot rank below the highest (Q2Answer.level), named with why (level_why), so
    the top is not read as a finding; where even the lowest is (Q2Answer.unranked), the range itself is none."""
    runs = min((min(s.verdict.n_a, s.verdict.n_b) for s in level), default=0)
    if unranked:
        return {SINGLE: ", but these are single runs, which cannot rank the speedups",
                NOISE: ", but even the lowest is within run-to-run noise of the highest, so these runs cannot rank "
                       "the speedups",
                FEW: f", but though the runs of the lowest and the highest do not overlap, {runs} runs each are too "
                     "few for the verdict to rank the speedups"}[why]
    if not level:
        return ""
    named = listing([f"{s.speedup:.2f}x ({s.setup}, batch {s.batch})" for s in level[:3]])
    more = f" and {len(level) - 3} more (Table 1)" if len(level) > 3 else ""
    if why == SINGLE:
        return f"; single runs cannot rank it against {named}{more}"
    if why == FEW:
        return f"; {runs} runs each are too few for the verdict to rank it against {named}{more}"
    return f"; {named}{more} {'is' if len(level) == 1 else 'are'} within run-to-run noise of it"


def _span(values: tuple[float, ...]) -> str:
    return f"{seconds(min(values))}-{seconds(max(values))} s"


def _undecided(s: Speedup) -> str:
    """A cited speedup whose time the threshold or the runs' spread does not separate from 1 GPU's: said,
    with both ranges where there are repeats."""
    v, sides = s.verdict, s.verdict.sides
    if decided(v):
        return ""
    if v.outcome == "inconclusive" and not v.one_run and sides:
        runs = f"{v.n_a} runs each" if v.n_a == v.n_b else f"{v.n_a} and {v.n_b} runs"
        spans = f"1 GPU {_span(sides.a_values)}, {s.setup} {_span(sides.b_values)}"
        way = ("faster" if max(sides.b_values) < min(sides.a_values) else
               "slower" if min(sides.b_values) > max(sides.a_values) else "")
        if way:  # runs apart: each says the same, though too few for the verdict (TA3 18)
            return f"; {way} than 1 GPU in every run, {spans}, but {runs} are too few for a verdict"
        return f"; unsettled over {runs}: {spans}"
    return f"; within {v.threshold:.0%} of 1 GPU's time"


def _unpaired(runs: tuple[Unpaired, ...]) -> str:
    if not runs:
        return ""
    groups: dict[str, list[Unpaired]] = {}
    for u in runs:
        groups.setdefault(u.setup, []).append(u)
    said = "; ".join(f"{s} took {listing([f'{secs(u.tn)} at batch {u.batch}' for u in us])}" for s, us in groups.items())
    return f" {said} per GPU, with no 1-GPU run at those batches to give a speedup."


def _loader_text(a: Q2Answer) -> str:
    """An efficiency above 1: shown only over repeats (Superlinear.shown), else said to be beyond these runs;
    and where 1 GPU is loader-bound, that neither speedup there measures GPU scaling: one rule for the weak and the
    strong speedups, its cutoff said with its number (TA4 6)."""
    shown = [s for s in a.superlinear if s.shown]
    top = max(shown, key=lambda s: s.efficiency) if shown else None
    lead = f" Efficiency above 1 ({top.efficiency:.2f}, {top.setup}, batch {top.batch})" if top else ""
    unshown = max((s for s in a.superlinear if not s.shown), key=lambda s: s.efficiency, default=None)
    if unshown is not None and top is None:  # past T1/N in a single run a side (decided, not shown)
        lead = (f" An efficiency of {unshown.efficiency:.2f} ({unshown.setup}, batch {unshown.batch}) is a single run a "
                "side: no evidence of efficiency above 1.")
    lead += ": 1 GPU is slower per image." if top else ""
    bound = a.loader_bound
    if not bound:
        return lead
    workers = {b.workers for b in bound}
    each = f"{workers.pop()} loader workers" if len(workers) == 1 else "its loader workers"
    at = [s for s in a.speedups if s.loader_bound]
    up_to = f" (up to {max(s.speedup for s in at):.2f}x)" if at and not a.above_range else ""  # else said above
    return (f"{lead} 1 GPU waits on {each} {listing([f'{b.wait_share:.0%}' for b in bound])} of its epoch at batch "
            f"{listing([str(b.batch) for b in bound])} (Table 1's data wait / epoch): waiting {CUTOFF}, a 1-GPU run "
            f"is loader-bound (each GPU brings its own loader), so neither the weak speedups there{up_to} nor the "
            "strong ones on those runs measure GPU scaling.")


DP_SLOWER = (" DataParallel's cost: each forward, GPU 0 copies the model to every GPU, scatters inputs, gathers "
             "outputs and sums the gradients while the others wait.")
