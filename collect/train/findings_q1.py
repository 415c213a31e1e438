"""Part A Q1's findings, from the Q1 table: the largest batch that fits one GPU (or how far the
sweep went without reaching OOM), the batch with the most images/s, where the time per epoch
stops falling, and the GPU's utilization and memory at each batch where they were sampled."""
from __future__ import annotations

from typing import Any, Optional

import pandas as pd

from collect.findings import DESCRIBED, Finding, Measured, compare, listing, more, one_run, shown, word, without_results
from collect.render import number, seconds
from collect.train.labels import Namer, device, missing_reason, present
from collect.train.tables import BASE_KEYS

QUESTION = "A.Q1"
TRAIN = "the train time per epoch (data loading excluded)"
EPOCH = "the whole epoch (data loading included)"

Row = tuple[int, Any]  # (position in the table, row)


def q1_findings(q1: pd.DataFrame) -> list[Finding]:
    """Q1's findings for each sweep in the table (the rows that differ only in batch size); none
    for an empty table (the study does not ask Q1)."""
    q1 = q1.reset_index(drop=True)
    namer = Namer(q1, "q1")
    rest = [k for k in BASE_KEYS if k != "batch_per_gpu"]
    found: list[Finding] = []
    codes = q1.groupby(rest, sort=False, dropna=False).ngroup()  # one pass of itertuples, not one per sweep
    by_sweep: dict[int, list[Row]] = {}
    for i, (code, r) in enumerate(zip(codes, q1.itertuples(index=False), strict=True)):
        by_sweep.setdefault(int(code), []).append((i, r))
    sweeps = [sorted(rows, key=lambda x: x[1].batch_per_gpu) for rows in by_sweep.values()]
    for rows in sweeps[:DESCRIBED]:
        found.append(fit(rows, namer))
        found += [f for f in (best_rate(rows, namer), *time_trend(rows, namer), gpu_use(rows, namer)) if f]
    return found + more(QUESTION, sweeps, "batch sweeps on 1 GPU", lambda rows: namer.evidence(*rows[0]))


def _where(rows: list[Row], namer: Namer) -> str:
    ran = [r.gpu_model for _, r in rows if r.status == "ok"]
    return f"{namer.name(rows[0][1], batch=False)} ({device(ran)})"


def _missing(rows: list[Row]) -> str:
    return without_results((f"batch {r.batch_per_gpu}", missing_reason(r)) for _, r in rows)


def fit(rows: list[Row], namer: Namer) -> Finding:
    """The largest batch that ran below the first OOM, and that OOM; or, without one, where the
    sweep stopped; the rows with neither result named."""
    ok = [(i, r) for i, r in rows if r.status == "ok"]
    oom = [(i, r) for i, r in rows if r.status == "oom"]
    others = [(i, r) for i, r in rows if r.status not in ("ok", "oom")]
    where = _where(rows, namer)
    if not ok:
        return Finding(QUESTION, f"No batch size ran on {where}: {_missing(rows)}.", {},
                       tuple(namer.evidence(i, r) for i, r in rows))
    first_oom: Optional[Row] = oom[0] if oom else None
    limit = first_oom[1].batch_per_gpu if first_oom else float("inf")
    largest = max((x for x in ok if x[1].batch_per_gpu < limit), key=lambda x: x[1].batch_per_gpu, default=None)
    top = largest or ok[0]
    b, mem = top[1].batch_per_gpu, top[1].peak_mem_gib
    memory = f", at {number(mem)} GiB of peak memory," if present(mem) else ""
    if first_oom is None:
        text = (f"The sweep did not reach OOM: it stopped at batch {b}, the largest that ran on {where}{memory or ','} "
                f"so the largest batch that fits is at least {b}")
    elif largest is None:
        text = f"On {where}, batch {first_oom[1].batch_per_gpu} does not fit (OOM) and no smaller batch ran"
    else:
        gaps = [(i, r) for i, r in others if b < r.batch_per_gpu < limit]
        text = (f"On {where}, batch {b} per GPU is the largest that fits{memory.rstrip(',')} and batch {limit} does "
                "not (OOM)"
                if not gaps else
                f"On {where}, batch {b} per GPU is the largest that ran and batch {limit} does not fit (OOM); "
                f"{_missing(gaps)} between them has no result, so the limit lies between {b} and {limit}")
    above = [(i, r) for i, r in ok if r.batch_per_gpu > limit]
    if above:
        text += f"; yet {listing(f'batch {r.batch_per_gpu}' for _, r in above)} ran above the OOM"
    if others:
        text += f"; without a result: {_missing(others)}"
    numbers = {"largest_fitting_batch": float(b) if largest or not first_oom else float("nan"),
               "first_oom_batch": float(limit) if first_oom else float("nan"),
               "peak_mem_gib": float(mem) if present(mem) else float("nan")}
    cited = [top] + ([first_oom] if first_oom else []) + others + above
    return Finding(QUESTION, text + ".", numbers, tuple(namer.evidence(i, r) for i, r in cited))


def best_rate(rows: list[Row], namer: Namer) -> Optional[Finding]:
    """The batch with the most training images per second (train time, data loading excluded)
    against the next best: distinguishable or not within their spreads."""
    rates = [(i, r, Measured.of(r, "train_s").inverse(r.train_images)) for i, r in rows
             if r.status == "ok" and present(r.train_s)]
    if len(rates) < 2:
        return None
    (i1, r1, m1), (i2, r2, m2) = sorted(rates, key=lambda x: -x[2].value)[:2]
    where, rate = _where(rows, namer), lambda v: f"{v:,.0f}"
    numbers = {f"images_per_s_batch_{r1.batch_per_gpu}": m1.value, f"images_per_s_batch_{r2.batch_per_gpu}": m2.value}
    evidence = (namer.evidence(i1, r1), namer.evidence(i2, r2))
    if compare(m1, m2) == 0:
        text = (f"On {where}, batches {r1.batch_per_gpu} and {r2.batch_per_gpu} train at rates not distinguishable "
                f"within their spread: {shown(m1, rate, ' images/s')} and {shown(m2, rate, ' images/s')} (train time, "
                "data loading excluded), the two best of the sweep")
    else:
        text = (f"On {where}, batch {r1.batch_per_gpu} trains the most images per second: "
                f"{shown(m1, rate, ' images/s')} (train time, data loading excluded), {m1.value / m2.value:.2f}x the "
                f"next best, batch {r2.batch_per_gpu}'s {shown(m2, rate, ' images/s')}{one_run(m1, m2)}")
    return Finding(QUESTION, text + ".", numbers, evidence)


def stops_falling(times: list[tuple[int, Any, Measured]]) -> Optional[int]:
    """The first index k whose next time is not distinguishably lower (compare); None when the
    time falls at every step."""
    for k in range(len(times) - 1):
        if compare(times[k + 1][2], times[k][2]) >= 0:
            return k
    return None


def time_trend(rows: list[Row], namer: Namer) -> list[Finding]:
    """Where the train time per epoch stops falling with the batch size; the whole epoch's too
    where it stops elsewhere (the data loader setting the pace)."""
    found: list[Finding] = []
    stops: dict[str, Optional[int]] = {}
    for column, what in (("train_s", TRAIN), ("epoch_s", EPOCH)):
        times = [(i, r, Measured.of(r, column)) for i, r in rows if r.status == "ok" and present(getattr(r, column))]
        if len(times) < 2:
            return found
        stops[column] = stops_falling(times)
        if column == "epoch_s" and stops["epoch_s"] == stops["train_s"]:
            break
        found.append(_trend(times, stops[column], what, _where(rows, namer), namer,
                            waiting=column == "epoch_s"))
    return found


def _trend(times: list[tuple[int, Any, Measured]], stop: Optional[int], what: str, where: str, namer: Namer,
           waiting: bool) -> Finding:
    first, last = times[0], times[-1] if stop is None else times[stop]
    t = lambda m: shown(m, seconds, " s")  # noqa: E731
    if stop is None:
        text = (f"On {where}, {what} falls at every step of the sweep, from {t(first[2])} at batch "
                f"{first[1].batch_per_gpu} to {t(last[2])} at batch {last[1].batch_per_gpu}: it had not levelled "
                f"off by the largest batch that ran{one_run(*(m for _, _, m in times))}")
        cited = [first, last]
    else:
        after = times[stop + 1]
        how = word(compare(after[2], last[2]), "", "more", "not distinguishable from it")
        head = (f"{what} does not fall beyond batch {last[1].batch_per_gpu}, at {t(last[2])}" if stop == 0 else
                f"{what} falls from {t(first[2])} at batch {first[1].batch_per_gpu} to {t(last[2])} at batch "
                f"{last[1].batch_per_gpu} and stops falling there")
        text = f"On {where}, {head}: batch {after[1].batch_per_gpu} takes {t(after[2])}, {how}"
        if waiting and present(last[1].data_wait_s) and present(after[1].data_wait_s):
            text += (f"; the time waiting on data goes from {seconds(last[1].data_wait_s)} s to "
                     f"{seconds(after[1].data_wait_s)} s")
        text += one_run(last[2], after[2])
        cited = [first, last, after] if stop else [last, after]
    numbers = {f"{'epoch' if waiting else 'train'}_s_batch_{r.batch_per_gpu}": m.value for _, r, m in cited}
    return Finding(QUESTION, text + ".", numbers, tuple(namer.evidence(i, r) for i, r, _ in cited))


def gpu_use(rows: list[Row], namer: Namer) -> Optional[Finding]:
    """The GPU's median utilization over the timed epoch and the peak memory, at each batch
    where they were sampled; where not, said. None when no batch ran."""
    ran = [(i, r) for i, r in rows if r.status == "ok"]
    if not ran:
        return None
    util = [(i, r) for i, r in ran if present(r.gpu_util_median_pct)]
    memory = [(i, r) for i, r in ran if present(r.peak_mem_gib)]
    where = _where(rows, namer)
    if not util and not memory:
        why = "no GPU to sample" if "CPU" in where else "results written before sampling, or no NVML"
        return Finding(QUESTION, f"GPU utilization and memory were not sampled in any Q1 run on {where} ({why}).",
                       {}, tuple(namer.evidence(i, r) for i, r in ran[:1]))
    parts = []
    if util:
        parts.append("median GPU utilization over the timed epoch " + listing(
            f"{r.gpu_util_median_pct:.0f}% at batch {r.batch_per_gpu}" for _, r in util))
    if memory:
        parts.append("peak memory " + listing(f"{r.peak_mem_gib:.2f} GiB at batch {r.batch_per_gpu}" for _, r in memory))
    unsampled = [r.batch_per_gpu for _, r in ran if not present(r.gpu_util_median_pct)]
    if unsampled:
        parts.append("utilization not sampled at " + listing(f"batch {b}" for b in unsampled))
    numbers = {f"gpu_util_pct_batch_{r.batch_per_gpu}": float(r.gpu_util_median_pct) for _, r in util}
    numbers.update({f"peak_mem_gib_batch_{r.batch_per_gpu}": float(r.peak_mem_gib) for _, r in memory})
    cited = dict(sorted(util + memory, key=lambda x: x[0]))  # by position, each row once
    return Finding(QUESTION, f"On {where}: " + "; ".join(parts) + ".", numbers,
                   tuple(namer.evidence(i, r) for i, r in cited.items()))
