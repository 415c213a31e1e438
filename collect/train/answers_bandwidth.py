"""Part A Q3.2 as a record and a paragraph: the bandwidth the gradients' all-reduce used by the homework's
method (the ring's bytes over TN - T1/N, every setup), against the busbw the DDP jobs measured; DDP's
exposed all-reduce as an aside (no link rate)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Optional

from collect.evidence import listing
from collect.questions import Record, Tables
from collect.render import gbps, seconds
from collect.train.answers_comm import Cause, cause, cited_first, q31_answer
from collect.train.answers_common import at_batches, caveats, cited, part_a, rows_of, setting_notes, where
from collect.train.grids import BREAKS, KEPT, OVER, TWICE, UNSETTLED, busbw_share_text, busbw_text, over_busbw
from collect.train.labels import Namer, missing_reason, on_cpu, present
from collect.verdict import Verdict, leaning


class BusbwBecause(StrEnum):
    BELOW = "below"  # every share cited under FAR_BELOW (as shown, to a tenth of a percent)
    NEAR = "near"  # every share cited between NEAR and 1
    SPREAD = "spread"  # the shares cited run from under FAR_BELOW to NEAR or more
    ABOVE = "above"  # above: the backward pass hides part of the all-reduce
    UNMEASURED = "unmeasured"


FAR_BELOW = 0.5  # a utilization under this share of the busbw is far below it
NEAR = 0.5  # every share cited at least this: within a factor of two of the busbw
HOMEWORK_BASIS = "estimated"  # the assignment's method: the bytes over TN - T1/N, for every engine


@dataclass(frozen=True)
class Utilization:
    setup: str
    engine: str
    gpus: int
    batch: int
    gbps: float  # the bytes over the communication time of `basis`
    basis: str  # "estimated" (TN - T1/N) | "measured" (DDP's exposed all-reduce: no link rate)
    busbw_gbps: float
    share: float
    cause: Cause  # what explains the communication time it divides by (Q3.1's rule)
    comm_s: float = float("nan")  # the time it divides by: TN - T1/N (estimated) or the exposed all-reduce (measured)
    exposed_s: float = float("nan")  # the run's exposed all-reduce (NaN: not measured, as DataParallel's)
    gbps_span: tuple[float, float] = (float("nan"), float("nan"))  # the rate over TN - T1/N's span (Split.comm_span):
    # inf where that span reaches 0 (no upper end)
    verdict: Optional[Verdict] = None  # TN against T1/N (Q3.1's Split.verdict) where the rate is estimated

    @property
    def settled(self) -> bool:
        """The difference TN - T1/N the rate divides by is beyond the verdict's threshold (collect.verdict), or the rate
        is no estimate: else a single run a side, or a difference inside the runs' spread (TA4 9)."""
        return self.verdict is None or self.verdict.outcome == "beyond"

    @property
    def one_run(self) -> bool:
        """An estimated rate whose TN - T1/N rests on one run a side."""
        return self.verdict is not None and self.verdict.one_run

    @property
    def within_noise(self) -> bool:
        """An estimated rate whose TN is not above T1/N by the verdict (leaning: single runs past its threshold): the
        difference it divides by is inside the runs' spread, so it is listed apart, not a range end (TA5 11).
        Example: 0.056 s = 1.21 - 1.16 s, single runs (5%) -> True."""
        return self.verdict is not None and leaning(self.verdict) <= 0

    @property
    def bounded(self) -> bool:
        """A lower bound on the transfer's rate, as the numbers show it: an estimated rate whose TN - T1/N is at
        least the exposed all-reduce the run measured (else the backward pass hid part of the transfer)."""
        return self.basis == HOMEWORK_BASIS and self.comm_s >= self.exposed_s

    @property
    def name(self) -> str:
        return f"{self.setup} at batch {self.batch}"

    @property
    def unlinked(self) -> bool:
        """An estimated DDP rate whose TN - T1/N is over twice the all-reduce the run measured (its cause is not the
        all-reduce: Q3.1's rule): that time is mostly not the link's, so the rate does not measure it (TA7 4)."""
        return self.basis == HOMEWORK_BASIS and present(self.exposed_s) and self.cause != Cause.ALLREDUCE

    @property
    def overstates(self) -> bool:
        """An estimated rate whose TN - T1/N is under the all-reduce the run itself measured: the backward pass hid
        part of the transfer, so the rate may overstate the bandwidth (TA3 10: kept out of the range)."""
        return self.basis == HOMEWORK_BASIS and present(self.exposed_s) and self.comm_s < self.exposed_s


@dataclass(frozen=True)
class Q32Answer(Record):
    device: str
    cpu: bool
    gradients: int
    utilizations: tuple[Utilization, ...]  # a row per run and basis it has a rate of
    because: BusbwBecause
    loader: tuple[str, ...]  # estimated rates whose time the data loader's wait may explain
    basis: str = ""  # the column the range and shares are read from: the estimate where any run has one
    other: int = 0  # rates of the other column (DDP's exposed all-reduce: a side note, no link rate)
    notes: tuple[str, ...] = ()
    no_traffic: int = 0  # DataParallel rows on a CPU: one process, nothing communicated, no rate
    overstated: tuple[Utilization, ...] = ()  # rows of `basis` that may overstate the bandwidth (overstates())
    broken: tuple[Utilization, ...] = ()  # estimated rows where Q3.1 finds T1/N broken (Split.breaks_model): TN - T1/N
    # is mostly not communication (TA4 9)
    unlinked: tuple[Utilization, ...] = ()  # estimated DDP rows over twice their measured all-reduce (unlinked())
    noisy: tuple[Utilization, ...] = ()  # DDP rows of `basis` on an unsettled TN - T1/N (within_noise, or one_run where
    # a DDP row of 2+ runs a side remains), unless every row left is one

    @property
    def disowned(self) -> tuple[Utilization, ...]:
        """The rates the answer says do not measure the bandwidth: listed apart with their reasons, never in the range
        (TA7 4), whatever is left (none: no range)."""
        return self.overstated + self.broken + self.unlinked

    @property
    def ranged(self) -> tuple[Utilization, ...]:
        """The rows the range, its sub-ranges and the shares cite: those of `basis` the answer stands behind."""
        return tuple(u for u in self.utilizations if u.basis == self.basis and u not in self.disowned + self.noisy)


def q32_answer(tables: Tables) -> Optional[Q32Answer]:
    t3 = tables["table3"].reset_index(drop=True)
    if not part_a(tables) or not len(t3):
        return None
    namer = Namer(t3, "table3")
    found, used, missing, no_traffic = [], [], [], 0
    q31 = q31_answer(tables)  # its splits carry TN - T1/N over the runs' spread
    splits = {(s.setup, s.batch): s for s in (q31.splits if q31 else ())}
    for i, r in rows_of(t3):
        if r.engine == "dp" and on_cpu(r.gpu_model):  # one process on the global batch: no transfer to rate
            no_traffic += 1
            continue
        rates = [(b, g, sh, t) for b, g, sh, t in ((HOMEWORK_BASIS, r.util_est_gbps, r.share_est, r.comm_est_s),
                                                   ("measured", r.util_measured_gbps, r.share_measured,
                                                    r.comm_measured_s)) if _rate(g)]
        if r.status != "ok" or not rates:  # TN - T1/N at or below 0 gives no rate (within the runs' noise)
            missing.append(f"{namer.name(r)} ({missing_reason(r) if r.status != 'ok' else _no_rate(r)})")
            continue
        wait = float(r.data_wait_s) if present(r.data_wait_s) else float("nan")
        measured = float(r.comm_measured_s) if _rate(r.comm_measured_s) else float("nan")
        why = cause(float(r.comm_est_s), measured, wait, None)
        split = splits.get((namer.name(r, batch=False), int(r.batch_per_gpu)))
        span = split.comm_span if split else (float("nan"), float("nan"))
        found += [Utilization(namer.name(r, batch=False), str(r.engine), int(r.gpus), int(r.batch_per_gpu), float(g), b,
                              float(r.busbw_gbps), float(sh), why, float(t), measured,
                              _rates(float(r.bytes_per_gpu), span) if b == HOMEWORK_BASIS else (float(g), float(g)),
                              split.verdict if split and b == HOMEWORK_BASIS else None)
                  for b, g, sh, t in rates]
        used.append((i, r))
    device, cpu = where(r.gpu_model for _, r in used)
    gradients = int(t3.gradients.iloc[0]) if "gradients" in t3 and len(t3) else 0
    loader = tuple(f"{u.setup} at batch {u.batch}" for u in found if u.basis == HOMEWORK_BASIS and u.cause == Cause.LOADER)
    basis = HOMEWORK_BASIS if any(u.basis == HOMEWORK_BASIS for u in found) else "measured" if found else ""
    column = [u for u in found if u.basis == basis]
    over = tuple(u for u in column if u.overstates)
    broken_names = set(q31.broken if q31 else ())
    broken = tuple(u for u in column if basis == HOMEWORK_BASIS and u not in over and u.name in broken_names)
    unlinked = tuple(u for u in column if u.unlinked and u not in over + broken)
    kept = [u for u in column if u not in over + broken + unlinked]
    ddp = [u for u in kept if u.engine == "ddp"]
    repeated = any(not u.one_run for u in ddp)  # DDP's single runs go apart where one of 2+ runs remains (TA5 11)
    noisy = [u for u in ddp if u.within_noise or (repeated and u.one_run)]
    noisy = [] if len(noisy) == len(kept) else noisy  # not firm, said so, but not disowned
    ranged = [u for u in kept if u not in noisy]
    ends = [u for u in (min(ranged, key=lambda u: u.gbps, default=None), max(ranged, key=lambda u: u.gbps, default=None))
            if u]
    names = {f"{u.setup} at batch {u.batch}": None for u in found}
    rows = cited_first(used, list(names), [u.name for u in ends + list(over + broken + unlinked) + noisy])
    return Q32Answer(cited(namer, rows), tuple(missing), device, cpu, gradients, tuple(found),
                     busbw_because(ranged), loader, basis, sum(u.basis != basis for u in found),
                     setting_notes(tables.get("train_cells"), (r for _, r in rows), False), no_traffic, over,
                     broken, unlinked, tuple(noisy))


def range_code(a: Q32Answer, u: Utilization) -> str:
    """The code of one rate of the range's column, from the very fields Q3.2's words use (Q32Answer.ranged, overstated,
    broken, unlinked, noisy); "" for a rate of the other column."""
    for code, rows in ((KEPT, a.ranged), (OVER, a.overstated), (BREAKS, a.broken), (TWICE, a.unlinked),
                       (UNSETTLED, a.noisy)):
        if u in rows:
            return code
    return ""


def range_codes(tables: Tables) -> list[str]:
    """Table 3's "Q3.2 range" cell of each row, in order: its rate's range_code ("" where Q3.2 gives it none)."""
    t3 = tables["table3"].reset_index(drop=True)
    a = q32_answer(tables)
    if a is None:
        return [""] * len(t3)
    rates = {(u.setup, u.batch): range_code(a, u) for u in a.utilizations if u.basis == a.basis}
    namer = Namer(t3, "table3")
    return [rates.get((namer.name(r, batch=False), int(r.batch_per_gpu)), "") for _, r in rows_of(t3)]


def _rates(bytes_per_gpu: float, comm_span: tuple[float, float]) -> tuple[float, float]:
    """The rate over TN - T1/N's span: bytes / its longest to bytes / its shortest (inf where that reaches 0).
    Example: 26.21 GB over 0.17-1.26 s -> 20.8-154 GB/s."""
    low, high = comm_span
    return bytes_per_gpu / high / 1e9 if high > 0 else float("nan"), bytes_per_gpu / low / 1e9 if low > 0 else math.inf


def _no_rate(row: Any) -> str:
    if present(row.comm_est_s):
        return "TN - T1/N below zero: within the runs' noise"
    return "no 1-GPU run at its batch"


def _share(value: float) -> str:
    """A share of busbw as Table 3 prints it (the figure a reader finds there)."""
    return busbw_share_text(value)


def _rate(value: Any) -> bool:
    """A rate that can be cited: there, finite and above 0."""
    return present(value) and math.isfinite(float(value)) and float(value) > 0


def busbw_because(ranged: list[Utilization]) -> BusbwBecause:
    """The word for the shares of busbw the answer cites (one column's, as shown: to Table 3's tenth of a
    percent, so that a "50.0%" is never "far below"): BELOW where all are under FAR_BELOW, NEAR where all
    lie in [NEAR, 1], ABOVE where one passes 1, SPREAD otherwise."""
    shares = [round(1000 * u.share) / 1000 for u in ranged if present(u.share)]
    if not shares:
        return BusbwBecause.UNMEASURED
    if max(shares) > 1:
        return BusbwBecause.ABOVE
    if max(shares) < FAR_BELOW:
        return BusbwBecause.BELOW
    return BusbwBecause.NEAR if min(shares) >= NEAR else BusbwBecause.SPREAD


def q32_text(a: Q32Answer) -> str:
    text = (f"A ring all-reduce (Patarasuk and Yuan) of P = {a.gradients:,} 4-byte gradients over N GPUs takes "
            "t = 2(N-1) alpha + 2(N-1)/N x 4P / B (alpha: latency, neglected; B: bandwidth). Utilization = steps x 2(N-1)/N x 4P "
            "/ communication time.")
    ranged = a.ranged
    homework = a.basis == HOMEWORK_BASIS
    column = ("the homework's method (TN - T1/N as the time)" if homework else
              "DDP's all-reduce left exposed by the backward pass (no run has TN - T1/N)")
    if ranged:
        low, high = min(ranged, key=lambda u: u.gbps), max(ranged, key=lambda u: u.gbps)
        ends = [f"{gbps(u.gbps)} GB/s ({u.setup}, batch {u.batch}{_spread(u) * (u is high)})"
                for u in ([low] if low is high else [low, high])]  # the maximum: a point past T1's spread is not firm
        text += (f" By {column}, Table 3 on {a.device}: " + (f"from {ends[0]} to {ends[1]}" if len(ends) > 1
                                                                  else ends[0]) + _engines(ranged, _ddp_rates(a)) + ".")
        text += _shares_text(a)
    elif a.disowned:
        text += (f" By {column}, Table 3 on {a.device}: no rate measures the bandwidth, so no range is given; each "
                 "is left out below.")
    if a.cpu and any(present(u.share) for u in a.utilizations if u.basis == a.basis):
        text += " On a CPU the processes exchange through the host's memory: no link."
    if a.no_traffic:
        text += (f" The {a.no_traffic} DataParallel rows have no rate: on a CPU DataParallel runs one process, so "
                 "nothing is communicated.")
    if homework:
        text += _bound_text(a) + _left_out_text(a) + _noisy_text(a)
    return text + _exposed_text(a) + caveats(a.cpu, a.missing, list(a.notes))


def _shares_text(a: Q32Answer) -> str:
    """The range's rates as shares of the busbw the DDP jobs measured (Table 3's), and the word for them."""
    ranged = a.ranged
    within = [u for u in ranged if present(u.share) and not over_busbw(u.share)]  # Table 3's rule, as the range's
    over = [u for u in ranged if present(u.share) and over_busbw(u.share)]
    shares = [u.share for u in within]
    if a.because == BusbwBecause.UNMEASURED:
        return " No run measured an all-reduce's busbw, so there is nothing to hold these against."
    if not shares:
        return _over_text(over, every=True)
    buses = [u.busbw_gbps for u in ranged if present(u.busbw_gbps)]
    bus = f"{'its busbw' if len(buses) == 1 else 'up to'} {busbw_text(max(buses))} GB/s"  # TA8 11: no "up to" over one
    span = f"{_share(min(shares))}-{_share(max(shares))}" if len(shares) > 1 else _share(shares[0])
    top = max(within, key=lambda u: u.share)
    span += " (the top one on a rate that is not firm)" if len(shares) > 1 and _spread(top) else ""
    some = ""  # DataParallel's time holds no all-reduce: no busbw to hold it against
    some += f" for DDP's rate{'s' * (len(shares) > 1)}" if len(shares) + len(over) < len(ranged) else ""
    some += " within it" if over else ""
    text = (f" That is {span} of the busbw{some} (bus bandwidth: those bytes over an all-reduce each DDP job timed "
            f"alone; {bus})")
    if over or a.cpu:
        return text + "." + (_over_text(over, every=False) if over else "")
    return text + {BusbwBecause.BELOW: ", far below it.",
                   BusbwBecause.NEAR: ": within a factor of two of it" + (" in each setup." if len(shares) > 1 else "."),
                   BusbwBecause.SPREAD: ": from under half of it to within a factor of two of it.",
                   BusbwBecause.ABOVE: "; above 1, the backward pass hides part of the all-reduce, so the time left "
                                       "is shorter than the transfer."}[a.because]


def _spread(u: Utilization) -> str:
    """Where T1's or TN's runs make the rate a range, the point is not firm; the range is in no printed table,
    so it is said, not quoted (TA2 7)."""
    low, high = u.gbps_span
    if present(low) and gbps(low) != gbps(high):
        return "; runs spread: not firm"
    if u.settled or u.verdict is None:
        return ""
    return "; single runs: not firm" if u.verdict.one_run else "; within the runs' spread: not firm"


def _over_text(over: list[Utilization], every: bool) -> str:
    """Rates above the busbw the all-reduce reached alone: no bandwidth (a share over 100% is none)."""
    named = listing([f"{gbps(u.gbps)} GB/s ({u.setup}, batch {u.batch}; busbw {busbw_text(u.busbw_gbps)} GB/s)"
                     for u in over[:3]])
    more = f" and {len(over) - 3} more (Table 3)" if len(over) > 3 else ""
    lead = "Every rate exceeds" if every else f"{len(over)} rate{'s' * (len(over) > 1)} exceed"
    return (f" {lead} the busbw its all-reduce reached timed alone: {named}{more}. That is no bandwidth: the time "
            "divided by is shorter than the transfer (the backward pass hides part of it, or the runs' noise).")


def _bound_text(a: Q32Answer) -> str:
    """A lower bound only where the numbers show it (Utilization.bounded: no overstated rate is in the range)."""
    ddp = [u for u in a.ranged if present(u.exposed_s)]
    if not ddp or not all(u.bounded for u in ddp):
        return ""
    within = " in that range" if a.overstated else ""
    return (f" Each DDP rate{within} can only understate the bandwidth (its TN - T1/N is at least its measured "
            "all-reduce).")


def _left_out_text(a: Q32Answer) -> str:
    """The rates the answer disowns (Q32Answer.disowned), a sentence per reason, each rate with the figures that put it
    there (TA7 4): under the run's measured all-reduce, where T1/N breaks, over twice the measured all-reduce."""
    ddp = _ddp_rates(a)  # the denominator the range's "(N of M DDP rates)" uses: one count

    def times(us: tuple[Utilization, ...]) -> str:
        return listing([f"{gbps(u.gbps)} GB/s ({u.setup}, batch {u.batch}: {seconds(u.comm_s)} s against "
                        f"{seconds(u.exposed_s)} s)" for u in us], len(us))
    def rates(us: tuple[Utilization, ...]) -> str:
        return f"{len(us)} of {ddp} DDP rates"
    runs = at_batches([(u.setup, u.batch) for u in a.broken], len(a.broken))
    reasons = [(f"{rates(a.overstated)} whose TN - T1/N is under the all-reduce the run itself measured (Table 2), so "
                f"{'they' if len(a.overstated) > 1 else 'it'} may overstate the bandwidth: {times(a.overstated)}",
                a.overstated),
               (f"{rates(a.broken)} where T1/N breaks (Q3.1: TN - T1/N mostly not communication): {runs}", a.broken),
               (f"{rates(a.unlinked)} whose TN - T1/N is over twice the all-reduce the run measured (Table 2), so mostly "
                f"not link time: {times(a.unlinked)}", a.unlinked)]
    said = [words for words, us in reasons if us]
    leads = [" Left out of that range: " if a.ranged else " Left out: "] + [" Also left out: "] * len(said)
    return "".join(f"{lead}{words}." for lead, words in zip(leads, said, strict=False))


def _noisy_text(a: Q32Answer) -> str:
    """The rates on a TN - T1/N within the runs' spread (Q32Answer.noisy), listed apart with the time they divide by."""
    if not a.noisy:
        return ""
    why = {True: "single runs", False: "within the runs' spread"}
    runs = listing([f"{gbps(u.gbps)} GB/s ({u.setup}, batch {u.batch}: {seconds(u.comm_s)} s, "
                    f"{why[u.one_run]})" for u in a.noisy], len(a.noisy))
    return (f" Also left out: {len(a.noisy)} rate{'s' * (len(a.noisy) > 1)} whose TN - T1/N the runs do not settle "
            f"(single runs, or a difference within their spread): {runs}.")


def _ddp_rates(a: Q32Answer) -> int:
    return sum(u.engine == "ddp" for u in a.utilizations if u.basis == a.basis)


def _engines(ranged: tuple[Utilization, ...], ddp_runs: int) -> str:
    """Each engine's own range, DataParallel's (the homework's engine) first, where the range spans two; DDP's says how
    many of the `ddp_runs` DDP rates remain in it (TA5 9)."""
    by = {e: [u.gbps for u in ranged if u.engine == e] for e in ("dp", "ddp")}
    if by["dp"] and not by["ddp"] and ddp_runs:
        return " (DataParallel's alone: every DDP rate is left out below)"
    if not all(by.values()):
        return ""
    spans = {e: gbps(min(v)) if min(v) == max(v) else f"{gbps(min(v))}-{gbps(max(v))}" for e, v in by.items()}
    left = f" ({len(by['ddp'])} of {ddp_runs} DDP rates; the rest left out below)" if len(by["ddp"]) < ddp_runs else ""
    return f"; DataParallel {spans['dp']} GB/s, DDP {spans['ddp']} GB/s{left}"


def _exposed_text(a: Q32Answer) -> str:
    """DDP's exposed all-reduce as a side note where the headline is the homework's: its bytes over the part of the
    all-reduce the backward pass did not hide, which is no link rate."""
    rows = [u for u in a.utilizations if u.basis == "measured"]
    if a.basis != HOMEWORK_BASIS or not rows:
        return ("" if a.basis == HOMEWORK_BASIS or not rows else
                " That time is only the part of the all-reduce the backward pass did not hide, so it is not the "
                "link's bandwidth.")
    measured = [u.gbps for u in rows if not over_busbw(u.share)]  # Table 3's rule: over its busbw, no rate (TA6 10)
    over = len(rows) - len(measured)
    left = f"; {over} over its busbw left out (Table 3's share: over 100%, no rate)" if over else ""
    if not measured:
        return (" Table 3's util. measured is over its busbw in every row (its share: over 100%, no rate): it divides "
                "by only the all-reduce left unhidden.")
    span = f"{gbps(min(measured))}-{gbps(max(measured))}" if len(measured) > 1 else gbps(measured[0])
    return (f" Table 3's util. measured ({span} GB/s{left}) divides by only the all-reduce left unhidden: not a link's "
            "bandwidth.")
