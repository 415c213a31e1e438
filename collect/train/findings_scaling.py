"""Part A Q2 and Q3's findings, from Table 1 (weak scaling), the strong-scaling table, Table 2
(compute vs communication) and Table 3 (bandwidth utilization)."""
from __future__ import annotations

from typing import Any, Optional

import pandas as pd

from collect.findings import (DESCRIBED, LISTED, Finding, Measured, compare, listing, more, one_run, ratio_text, shown,
                              word, without_results)
from collect.render import number, seconds, status_text
from collect.train.labels import Namer, base_key, device, missing_reason, ok_rows, one_gpu_times, present

Q2, Q3_SHARE, Q3_BANDWIDTH = "A.Q2", "A.Q3.1", "A.Q3.2"
DISAGREE = 0.10  # estimated and measured communication shares further apart than this (of the train time) disagree
BOUND = 0.5  # communication-bound: communication is at least this share of the train time


def _s(m: Measured) -> str:
    return shown(m, seconds, " s")


def _setups(namer: Namer) -> dict[str, list[tuple[int, Any]]]:
    """The multi-GPU rows by setup name (engine, shape, the fields that vary), in table order."""
    groups: dict[tuple, list[tuple[int, Any]]] = {}
    keys = ["engine", "nodes", "gpus_per_node", *namer.fields]
    for i, r in namer.rows:
        if r.engine != "single":
            groups.setdefault(tuple(getattr(r, k) for k in keys), []).append((i, r))
    return {namer.name(rows[0][1], batch=False): rows for rows in groups.values()}


def q2_findings(table1: pd.DataFrame, strong: pd.DataFrame, q1: pd.DataFrame) -> list[Finding]:
    """Per setup, its weak-scaling speedups (and what has none); the most and least efficient;
    DDP against DataParallel at the same N and batch; strong scaling where the study has it."""
    table1 = table1.reset_index(drop=True)
    namer = Namer(table1, "table1")
    setups = _setups(namer)
    if not setups:
        return [Finding(Q2, "No multi-GPU timing run in this study: Q2 has no speedup to report, only the 1-GPU "
                            "times.", {}, tuple(namer.evidence(i, r) for i, r in namer.ok[:LISTED]))]
    bases = {base_key(r): (i, r) for i, r in namer.ok if r.engine == "single"}
    groups = list(setups.items())
    found = [_weak(name, rows, bases, namer) for name, rows in groups[:DESCRIBED]]
    found += more(Q2, groups, "multi-GPU setups", lambda group: namer.evidence(*group[1][0]))
    found += [f for f in (_extremes(namer), *_ddp_vs_dp(namer)) if f]
    return found + _strong(strong.reset_index(drop=True), q1.reset_index(drop=True), namer)


def _weak(name: str, rows: list[tuple[int, Any]], bases: dict, namer: Namer) -> Finding:
    items, missing, cited, numbers, figures = [], [], [], {}, []
    for i, r in rows:
        base = bases.get(base_key(r))
        if r.status != "ok" or not present(r.speedup) or base is None:
            why = missing_reason(r) if r.status != "ok" else f"no 1-GPU run at this batch: {status_text(r.t1_s_status)}"
            missing.append((f"batch {r.batch_per_gpu}", why))
            cited.append(namer.evidence(i, r))
            continue
        tn, t1 = Measured.of(r, "epoch_s"), Measured.of(base[1], "epoch_s")
        how = word(compare(tn, t1), "faster than 1 GPU", "slower than 1 GPU", "not distinguishable from 1 GPU")
        items.append(f"{ratio_text(r.speedup)} at batch {r.batch_per_gpu} (efficiency {number(r.efficiency)}; "
                     f"{_s(tn)} against {_s(t1)}: {how})")
        numbers.update({f"speedup_batch_{r.batch_per_gpu}": float(r.speedup),
                        f"efficiency_batch_{r.batch_per_gpu}": float(r.efficiency)})
        cited += [namer.evidence(i, r), namer.evidence(base[0], base[1])]
        figures += [tn, t1]
    if not items:
        return Finding(Q2, f"{name}: no weak-scaling speedup at {without_results(missing)}.", numbers, tuple(cited))
    where = f"{name} ({device(r.gpu_model for _, r in rows if r.status == 'ok')})"
    text = (f"{where}, weak scaling (the batch per GPU fixed; the whole epoch, data loading included, against 1 GPU "
            f"at the same batch): speedup {'; '.join(items)}{one_run(*figures)}")
    if missing:
        text += f"; none at {without_results(missing)}"
    return Finding(Q2, text + ".", numbers, tuple(cited))


def _extremes(namer: Namer) -> Optional[Finding]:
    """The most and the least efficient multi-GPU run (efficiency = speedup / N compares across N)."""
    rows = [(i, r) for i, r in namer.ok if r.engine != "single" and present(r.efficiency)]
    if len(rows) < 2:
        return None
    (bi, best), (wi, worst) = max(rows, key=lambda x: x[1].efficiency), min(rows, key=lambda x: x[1].efficiency)
    text = (f"Weak scaling, most efficient: {namer.name(best)} at {ratio_text(best.speedup)} (efficiency "
            f"{number(best.efficiency)}); least efficient: {namer.name(worst)} at {ratio_text(worst.speedup)} "
            f"(efficiency {number(worst.efficiency)}); each against 1 GPU at the same batch per GPU.")
    numbers = {"best_efficiency": float(best.efficiency), "best_speedup": float(best.speedup),
               "worst_efficiency": float(worst.efficiency), "worst_speedup": float(worst.speedup)}
    return Finding(Q2, text, numbers, (namer.evidence(bi, best), namer.evidence(wi, worst)))


def _ddp_vs_dp(namer: Namer) -> list[Finding]:
    """Per shape (nodes x GPUs per node), DDP's epoch against DataParallel's at each batch where both ran."""
    dp = {(r.nodes, r.gpus_per_node, base_key(r)): (i, r) for i, r in namer.ok if r.engine == "dp"}
    shapes: dict[tuple[int, int], list[tuple[tuple[int, Any], tuple[int, Any]]]] = {}
    for i, r in namer.ok:
        other = dp.get((r.nodes, r.gpus_per_node, base_key(r)))
        if r.engine == "ddp" and other:
            shapes.setdefault((r.nodes, r.gpus_per_node), []).append(((i, r), other))
    found = []
    for pairs in shapes.values():
        items, numbers, cited, figures = [], {}, [], []
        for (i, ddp), (j, dpr) in pairs[:LISTED]:
            a, b = Measured.of(ddp, "epoch_s"), Measured.of(dpr, "epoch_s")
            order = compare(a, b)
            how = word(order, f"DDP faster, {b.value / a.value:.2f}x as fast", f"DDP slower, {a.value / b.value:.2f}x "
                       "the time", "not distinguishable")
            items.append(f"at batch {ddp.batch_per_gpu}, {_s(a)} against {_s(b)} ({how})")
            numbers.update({f"ddp_epoch_s_batch_{ddp.batch_per_gpu}": a.value, f"dp_epoch_s_batch_{ddp.batch_per_gpu}": b.value})
            cited += [namer.evidence(i, ddp), namer.evidence(j, dpr)]
            figures += [a, b]
        shape = namer.name(pairs[0][0][1], batch=False).replace(", DDP", "")
        rest = f"; {len(pairs) - LISTED} more pairs in table table1" if len(pairs) > LISTED else ""
        found.append(Finding(Q2, f"On {shape}, DDP's epoch against DataParallel's (whole epoch, data loading "
                                 f"included): {'; '.join(items)}{rest}{one_run(*figures)}.", numbers, tuple(cited)))
    return found


def _strong(strong: pd.DataFrame, q1: pd.DataFrame, table1: Namer) -> list[Finding]:
    """Each strong-scaling pair, its speedup against the weak one at the same batch per GPU: the
    same N-GPU epoch over two 1-GPU times, so the 1-GPU times decide which is larger."""
    multi = [(i, r) for i, r in table1.rows if r.engine != "single"]
    rows = ok_rows(strong)
    if not rows:
        return [Finding(Q2, "No strong-scaling data point: the study has no 1-GPU run at any N-GPU run's global batch "
                            "(batch per GPU x N), so only weak scaling is measured.", {},
                        tuple(table1.evidence(i, r) for i, r in multi[:LISTED]))] if multi else []
    namer, q1_namer = Namer(strong, "strong", {"global_batch"}), Namer(q1, "q1")
    ones = one_gpu_times(q1)
    found = more(Q2, rows, "strong-scaling pairs", lambda row: namer.evidence(*row))
    for i, r in rows[:DESCRIBED]:
        if not present(r.speedup):
            continue
        small, large = ones.get(base_key(r)), ones.get(base_key(r._replace(batch_per_gpu=r.global_batch)))
        text = (f"Strong scaling (the global batch {r.global_batch} fixed): {namer.name(r)} runs "
                f"{ratio_text(r.speedup)} as fast as 1 GPU at batch {r.global_batch} (efficiency {number(r.efficiency)})")
        cited = [namer.evidence(i, r)]
        if small and large:
            weak = small[2].value / r.epoch_s
            how = word(compare(large[2], small[2]), "below", "above")
            text += (f", {how} the weak-scaling {ratio_text(weak)} at the same batch per GPU: 1 GPU takes "
                     f"{_s(large[2])} at batch {r.global_batch} against {_s(small[2])} at batch {r.batch_per_gpu}")
            cited += [q1_namer.evidence(large[0], large[1]), q1_namer.evidence(small[0], small[1])]
        found.append(Finding(Q2, text + ".", {"strong_speedup": float(r.speedup), "strong_efficiency": float(r.efficiency)},
                             tuple(cited)))
    return found


def q3_findings(table2: pd.DataFrame, table3: pd.DataFrame) -> list[Finding]:
    """Per multi-GPU run, its communication share (estimated, measured, where they disagree) and
    bandwidth utilization against the measured busbw; then which setups are communication-bound.
    Nothing for an empty table (the study has no multi-GPU timing run)."""
    table2, table3 = table2.reset_index(drop=True), table3.reset_index(drop=True)
    namer, namer3 = Namer(table2, "table2"), Namer(table3, "table3")
    found, bound = [], []
    rows = list(enumerate(table2.itertuples(index=False)))
    for i, r in rows:
        if i >= DESCRIBED:  # beyond, only what decides the summary
            basis = _basis(*_shares(r)) if r.status == "ok" else None
            if basis is not None:
                bound.append((i, r, basis))
            continue
        if r.status != "ok":
            found.append(Finding(Q3_SHARE, f"{namer.name(r)}: no compute or communication time ({missing_reason(r)}).", {},
                                 (namer.evidence(i, r),)))
            continue
        finding, basis = _share(i, r, namer)
        found.append(finding)
        if basis is not None:
            bound.append((i, r, basis))
    found += [_bandwidth(i, r, namer3) for i, r in ok_rows(table3)[:DESCRIBED]]
    if bound:
        found.append(_bound(bound, namer))
    return found + more(Q3_SHARE, rows, "multi-GPU runs", lambda row: namer.evidence(*row))


def _share(i: int, r: Any, namer: Namer) -> tuple[Finding, Optional[float]]:
    """The estimated and measured communication shares of the train time, and the one that decides
    whether the run is communication-bound (measured where measured)."""
    tn = r.train_s
    est, measured = _shares(r)
    parts = []
    if not present(est):
        parts.append(f"no estimate (no 1-GPU run at this batch: {status_text(r.t1_train_s_status)})")
    elif est < 0:
        parts.append(f"the estimate TN - T1/N is negative ({seconds(r.comm_est_s)} s): the {r.gpus} GPUs beat an even "
                     "split of the 1-GPU time, so it says nothing of communication")
    else:
        parts.append(f"communication is {est:.0%} of the {seconds(tn)} s train time by the estimate TN - T1/N "
                     f"({seconds(r.comm_est_s)} s)")
    if present(measured):
        parts.append(f"{measured:.0%} measured ({seconds(r.comm_measured_s)} s of all-reduce the backward pass did "
                     "not hide)")
        if present(est) and est >= 0:
            gap = abs(est - measured)
            parts.append(f"the two disagree by {100 * gap:.0f} points: the estimate counts every cost of running on "
                         "N GPUs beyond T1/N as communication, the measurement only the exposed all-reduce"
                         if gap > DISAGREE else f"the two agree within {100 * DISAGREE:.0f} points")
    else:
        parts.append("not measured (DataParallel has no all-reduce to time)" if r.engine == "dp" else
                     "communication not measured by this run")
    numbers = {"train_s": float(tn), "comm_share_est": est, "comm_share_measured": measured}
    return Finding(Q3_SHARE, f"{namer.name(r)}: " + "; ".join(parts) + ".", numbers, (namer.evidence(i, r),)), \
        _basis(est, measured)


def _shares(r: Any) -> tuple[float, float]:
    """Communication's share of the train time: (estimated (TN - T1/N) / TN, measured comm / (compute + comm))."""
    est = r.comm_est_s / r.train_s if present(r.comm_est_s) and r.train_s > 0 else float("nan")
    total = r.compute_measured_s + r.comm_measured_s
    measured = r.comm_measured_s / total if present(r.comm_measured_s) and total > 0 else float("nan")
    return est, measured


def _basis(est: float, measured: float) -> Optional[float]:
    """The share that decides communication-bound: measured where measured, else a non-negative estimate."""
    return measured if present(measured) else (est if present(est) and est >= 0 else None)


def _bandwidth(i: int, r: Any, namer: Namer) -> Finding:
    """The bytes each GPU all-reduces per epoch over each communication time, and that rate's
    share of the busbw the job measured."""
    clauses = []
    for what, util, share, comm in (("measured", r.util_measured_gbps, r.share_measured, r.comm_measured_s),
                                    ("estimated", r.util_est_gbps, r.share_est, r.comm_est_s)):
        if present(util):
            clause = f"over the {what} communication time ({seconds(comm)} s) {number(util)} GB/s"
            if present(share):
                clause += f", {share:.1%} of the {number(r.busbw_gbps)} GB/s busbw the job measured"
                if share > 1:
                    clause += (" (above it: all-reduces of this size take longer than that time, so the backward "
                               "pass hides part of them)")
            clauses.append(clause)
        elif present(comm):
            clauses.append(f"no {what} rate (the {what} communication time is {seconds(comm)} s)")
    if not present(r.busbw_gbps):
        clauses.append("no busbw measured by this run, so no share of it")
    text = (f"{namer.name(r)}: each GPU all-reduces {number(r.bytes_per_gpu / 1e9)} GB per epoch ({r.steps} "
            f"step{'s' if r.steps != 1 else ''} x 2(N-1)/N x {r.gradients:,} gradients x 4 bytes, N = {r.gpus}); "
            + "; ".join(clauses))
    numbers = {"gb_per_gpu": r.bytes_per_gpu / 1e9, "util_measured_gbps": float(r.util_measured_gbps),
               "util_est_gbps": float(r.util_est_gbps), "busbw_gbps": float(r.busbw_gbps)}
    return Finding(Q3_BANDWIDTH, text + ".", numbers, (namer.evidence(i, r),))


def _bound(bound: list[tuple[int, Any, float]], namer: Namer) -> Finding:
    comm = [(i, r, s) for i, r, s in bound if s >= BOUND]
    compute = [(i, r, s) for i, r, s in bound if s < BOUND]
    name = lambda rows: listing(f"{namer.name(r)} ({s:.0%})" for _, r, s in rows) or "none"  # noqa: E731
    text = (f"Communication-bound (communication at least {BOUND:.0%} of the train time; measured where measured, "
            f"else estimated): {name(comm)}; computation-bound: {name(compute)}.")
    return Finding(Q3_SHARE, text, {"communication_bound_runs": float(len(comm)), "computation_bound_runs": float(len(compute))},
                   tuple(namer.evidence(i, r) for i, r, _ in bound[:DESCRIBED]))
