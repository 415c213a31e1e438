"""Part A Q3.1's paragraph (collect.train.answers_comm's record in words): the cited setup's compute and
communication, how every setup's share moves with the batch, where the T1/N model breaks, the runs at 50% or more."""
from __future__ import annotations

from collect.evidence import listing
from collect.questions import Words, one_run_note, says
from collect.render import number, seconds
from collect.train.answers_comm import (BOUND, EXPLAINS, FALLS, OVERHEAD, UNSTEADY, Cause, Q3Because, Q31Answer, Split,
                                        at_least_bound, by_setup, direction, ordered)
from collect.train.answers_common import DP_TRAFFIC, at_batches, caveats
from collect.train.formulas import BREAKS
from collect.train.grids import comm_share_text
from collect.train.labels import present


def q31_text(a: Q31Answer) -> str:
    text = "Compute = T1/N, communication = TN - T1/N (Table 2)"
    byname = {s.name: s for s in a.splits}
    ends = [byname[x] for x in a.headline]  # the homework's plain DDP rows first, where T1/N holds (TA7 7, TA8 6)
    if ends:
        text += f". On {a.device}, {ends[0].setup}: " + ", ".join(
            (f"compute {_compute(s)} s and " if s is ends[0] else f"{_compute(s)} s and ") + _comm(s)
            + f" at {'batch ' * (s is ends[0])}{s.batch}" for s in ends) + "."
    elif a.broken:
        text += ". The homework's T1/N model holds in no multi-GPU run (below), so no share is given."
    else:
        text += ". No multi-GPU run has both figures yet."
    text += _scaled_text(ends + ordered(list(a.splits)))
    text += _trend_text(a, ends)
    text += _broken_text(a)
    if a.bound:
        broken = " (not where T1/N breaks)" * any(at_least_bound(s) and s.breaks_model for s in a.splits)
        text += f" Communication is at least {BOUND:.0%} of the train time TN " + "; and ".join(
            f"{words}: {at_batches(listed, len(listed))}" for words, listed in _bound_lists(a)) + broken + "."
    if a.left_out:
        left = [(s.setup, s.batch) for s in a.splits if f"{s.setup} at batch {s.batch}" in a.left_out]
        text += (f" Communication is at least {BOUND:.0%} of TN but left out{' of that list' * bool(a.bound)}, as the "
                 f"runs' spread hides the size of TN's excess over T1/N: {at_batches(left, len(left))}.")
    text += _measured_apart_text(a) + _near_text(a)
    listed = a.because in (Q3Because.MIXED, Q3Because.NOT_FALLING) and all(
        len(g) >= 2 for g in by_setup(a.splits).values())  # every share is printed above
    if a.splits and not any(s.share >= BOUND for s in a.splits) and not listed:
        every = "every run" if len(a.splits) > 1 else "the one run"
        text += f" Communication is under half of TN in {every}."
    if any(s.engine == "dp" for s in a.splits) and not a.cpu:  # on a CPU DataParallel wraps nothing (the note)
        text += f" DataParallel's TN - T1/N is no all-reduce: it {DP_TRAFFIC}."
    if a.no_traffic:
        text += (f" The {a.no_traffic} DataParallel rows are left out: on a CPU DataParallel runs one process, so "
                 "nothing is communicated.")
    if a.cpu:
        text += _cpu_text(next(iter(by_setup(a.valid).values()), []))
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(*(s.verdict for s in a.splits)))


def _near_text(a: Q31Answer) -> str:
    """The single runs at or past BOUND but not clearly past it (Q31Answer.near), each with its share (TA7 9)."""
    near = [s for s in a.splits if s.name in a.near]
    if not near:
        return ""
    runs = listing([f"{s.setup}, batch {s.batch} ({comm_share_text(s.share)})" for s in near], len(near))
    return (f" Near {BOUND:.0%}, so in no list (TN within {a.margin:.0%} of {1 / (1 - BOUND):g} x T1/N: single runs cannot "
            f"tell): {runs}.")


def _bound_lists(a: Q31Answer) -> list[tuple[str, list[tuple[str, int]]]]:
    """Q31Answer.bound by its runs: those of 2+ runs a side, then those of a single run each (TA5 19, as Q2 says it)."""
    multi = [(s.setup, s.batch) for s in a.splits if s.name in a.bound and s.name not in a.bound_single]
    single = [(s.setup, s.batch) for s in a.splits if s.name in a.bound_single]
    past = f"in the single run of each (TN over {1 / (1 - BOUND):g} x T1/N by more than {a.margin:.0%})"  # clearly_bound (TA7 9)
    return [(w, x) for w, x in (("in", multi), (past, single)) if x]


def _cpu_text(cited: list[Split]) -> str:
    """On a CPU the N ranks are processes sharing its cores: where rank 0's compute measured is not T1/N (as Table 2
    prints both, Split.matches_t1n), TN - T1/N holds compute, likely their contention; where it is, it is said so."""
    shown = [s for s in cited if present(s.gpu_s)]
    same = [f"at batch {s.batch} T1/N matches rank 0's compute ({seconds(s.gpu_s)} s both)" for s in shown
            if s.matches_t1n]
    other = [s for s in shown if not s.matches_t1n]
    apart = [f"at batch {s.batch} T1/N is not rank 0's compute ({seconds(s.gpu_s)} s measured against {seconds(s.compute_s)} s)"
             for s in other]
    if not shown:
        return " On one CPU the ranks share its cores, so TN - T1/N may hold their contention for the cores."
    said = "; ".join(same + apart)
    said = said[0].upper() + said[1:]
    cause = (": on one CPU the ranks share its cores, so TN - T1/N there holds compute, likely their contention for "
             "the cores" if other else ": on one CPU the ranks share its cores, yet T1/N holds here")
    return f" {said}{cause}."


def _compute(s: Split) -> str:
    """T1/N as Table 2 prints it (a range over the runs would be in no printed table: TA2 4)."""
    return seconds(s.compute_s)


def _comm(s: Split) -> str:
    """The estimate as communication, with its share and what the runs say of it; a negative one is no measurement.
    One over twice its measured all-reduce is no communication: only the measured all-reduce is given (TA8 12)."""
    if s.unlinked:
        return (f"all-reduce measured {seconds(s.measured_s)} s ({comm_share_text(s.measured_share)} of TN; TN - T1/N "
                f"is over twice it, so mostly not the all-reduce)")
    if s.comm_s <= 0:
        return f"communication {seconds(s.comm_s)} s (below zero: TN under T1/N, within the runs' noise)"
    lo, hi = s.comm_span  # T1's or TN's runs spread: the point, as Table 2 prints it, is not firm
    firm = "; runs spread: not firm" if number(lo) != number(hi) else ""
    return f"communication {seconds(s.comm_s)} s ({comm_share_text(s.share)}{_cost(s)}{firm}{_measured(s)})"


def _measured(s: Split) -> str:
    """Every DDP run's own all-reduce measured beside its estimate, with its share of TN (TA5 3: one rule, in every
    set); DataParallel times none."""
    if not present(s.measured_s):
        return ""
    under = ": under the all-reduce measured, TN - T1/N understates it" if s.under_measured else ""  # TA8 12
    apart = ""
    if s.splits_disagree:  # past SINGLE_RUN_NOISE either way: the two splits of TN disagree (TA8 6)
        single = ", single runs" if s.verdict is None or s.verdict.one_run else ""
        gpu = f", compute measured {seconds(s.gpu_s)} s" if present(s.gpu_s) else ""
        apart = (f"; estimate {seconds(s.comm_s)} s against {seconds(s.measured_s)} s measured{gpu}: the two splits "
                 f"disagree {s.apart_fold:.1f}-fold{single}")
    return f"; all-reduce measured {seconds(s.measured_s)} s, {comm_share_text(s.measured_share)} of TN{under}{apart}"


def _scaled_text(cited: list[Split]) -> str:
    """How the all-reduce measured was scaled (TA7 5), said once after the headline, before any later sentence quotes
    one: one batch's difference times the epoch's steps (the first such run cited's), not an epoch timed."""
    s = next((s for s in cited if present(s.measured_s)), None)
    if s is None:
        return ""
    return f" All-reduce measured = one batch's with/without-sync difference x {s.steps:,} steps (batch {s.batch})."


def _trend_text(a: Q31Answer, first: list[Split]) -> str:
    """How communication's share moves with the batch and why (Q3Because), then the data loader's part
    (the setup named where it is not the one listed first)."""
    g = by_setup(a.valid).get(a.trend_setup, [])
    on = f" on {g[0].setup}" if g and g[0].setup != first[0].setup else ""
    if a.because == Q3Because.LOADER_AT_LARGE:
        return _large_text(g, on)
    if a.because == Q3Because.MEASURED_RISES:
        return (f" Communication's share is smaller at {g[-1].batch} than at {g[0].batch} over the runs' spread{on}, "
                f"but not from fewer all-reduces: the all-reduce time the runs measured rises ({seconds(g[0].measured_s)}"
                f" s to {seconds(g[-1].measured_s)} s, Table 2)." + _loader_text(a))
    if a.because == Q3Because.SINGLE_RUNS:
        return " Single runs measure no spread, so no trend with the batch is claimed." + _loader_text(a)
    if a.because == Q3Because.MEASURED_FALLS:
        runs = min(min(s.verdict.n_a, s.verdict.n_b) for s in (g[0], g[-1]) if s.verdict is not None)
        return (f" Communication's share rises from {comm_share_text(g[0].share)} at batch {g[0].batch} to "
                f"{comm_share_text(g[-1].share)} at {g[-1].batch}{on} in the estimate only: the all-reduce the runs measured "
                f"falls ({seconds(g[0].measured_s)} s to {seconds(g[-1].measured_s)} s, Table 2), as fewer all-reduces "
                f"predict. {runs} runs a side at {len(g)} batch sizes show no trend with the batch." + _loader_text(a))
    if a.because == Q3Because.FEWER_STEPS:
        single = any(s.verdict is not None and s.verdict.one_run for s in (g[0], g[-1]))
        most = f", as in {a.falls[0]} of {a.falls[1]} setups" if a.falls[1] > 1 else ""
        two = all(len(h) == 2 for h in by_setup(a.splits).values())  # two batches a setup: a difference, no trend
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
    elif a.valid and a.broken and any(len(h) >= 2 for h in by_setup(a.splits).values()):
        text = " Where T1/N holds, each setup has one batch, so no trend with the batch is claimed."
    else:
        text = ""
    return text + _loader_text(a)


def _directions_text(a: Q31Answer) -> str:
    """Every setup of 2+ batches by how its share moves (Q31Answer.falls, rising, unsteady), each with its shares;
    the batches said once where every setup ran the same."""
    groups = {k: g for k, g in by_setup(a.valid).items() if len(g) >= 2}
    batches = {tuple(s.batch for s in g) for g in groups.values()}
    once = len(batches) == 1
    parts = [f"{way} in " + listing([f"{k} ({_shares(groups[k], once)})" for k in names], len(names))
             for way, names in (("falls", [k for k, g in groups.items() if direction(g) == FALLS]),
                                ("rises", a.rising), (f"is {UNSTEADY}", a.unsteady)) if names]
    at = f" at batch {', '.join(map(str, next(iter(batches))))}" if once else ""
    return at + " " + "; ".join(parts)


def _shares(g: list[Split], once: bool) -> str:
    return ", ".join(comm_share_text(s.share) for s in g) + ("" if once else f" at batch {', '.join(str(s.batch) for s in g)}")


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
    """Where the compute measured is far from T1/N either way (Split.breaks_model, Table 2's rule): the homework's model
    does not hold there (each run's figures); then where the all-reduce measured is mostly host overhead."""
    said = [s for s in ordered(list(a.splits)) if s.name in a.broken]
    if not said:
        return _overhead_text(a)
    over = [s for s in said if s.gpu_s > s.compute_s]
    ways = [f"{'exceeds' if way is over else 'is under'} {f'{BREAKS:g} x T1/N' if way is over else f'T1/N / {BREAKS:g}'}"
            " at " + listing([f"{s.setup}, batch {s.batch} ({seconds(s.gpu_s)} against {seconds(s.compute_s)} s)"
                              for s in way], len(way))
            for way in (over, [s for s in said if s not in over]) if way]
    times = sorted({seconds(s.measured_s): s.measured_s for s in said if present(s.measured_s)}.items(),
                   key=lambda x: x[1])
    measured = "-".join(dict.fromkeys([times[0][0], times[-1][0]])) + " s" if times else ""
    return (f" Compute measured (Table 2) {'; it '.join(ways)}: there T1/N breaks, so TN - T1/N is no "
            "communication and no share is given"
            + (f"; the all-reduce those runs measured is {measured}" if measured else "") + "." + _overhead_text(a))


def _overhead_text(a: Q31Answer) -> str:
    """The DDP runs whose all-reduce measured is over OVERHEAD x its bytes' time at the job's busbw (Split.host_overhead),
    counted, the farthest one's figures given: that one-step difference is not the transfer alone, what else is not
    measured apart (TA5 4, TA7 5)."""
    said = [s for s in a.splits if s.name in a.overhead]
    if not said:
        return ""
    of = sum(s.engine == "ddp" and present(s.measured_s) for s in a.splits)
    ex = max(said, key=lambda s: s.measured_s / s.link_s)
    return (f" In {len(said)} of {of} DDP runs the all-reduce measured is over {OVERHEAD} x its bytes' time at its "
            f"busbw (Table 3; e.g. {ex.setup}, batch {ex.batch}: {seconds(ex.measured_s)} s "
            f"against {seconds(ex.link_s)} s): the one-step difference is not the transfer alone (host overhead, "
            "skew, noise: not separated).")


def _measured_apart_text(a: Q31Answer) -> str:
    """Runs at or past BOUND by the estimate whose own measured all-reduce is under BOUND of TN: both figures,
    apart from the list (Q31Answer.measured_apart)."""
    said = [s for s in a.splits if s.name in a.measured_apart]
    if not said:
        return ""
    runs = listing([f"{s.setup}, batch {s.batch} (estimate {seconds(s.comm_s)} s, {comm_share_text(s.share)} of TN "
                    f"{seconds(s.tn_s)} s; all-reduce measured {seconds(s.measured_s)} s)" for s in said], len(said))
    which = "it is" if len(said) == 1 else "these are"
    return (f" The estimate is at least {BOUND:.0%} of TN but the all-reduce the run measured is under half of TN, so "
            f"{which} in no list above: {runs}.")


def _loader_text(a: Q31Answer) -> str:
    """Where the data loader's wait may explain the estimate: the first such run's numbers, the cause an inference."""
    if not a.loader or a.because == Q3Because.LOADER_AT_LARGE or a.broken:  # the broken model says it
        return ""
    ex = next(s for s in ordered(list(a.splits)) if s.cause == Cause.LOADER)
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
