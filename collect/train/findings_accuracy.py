"""Part A Q4's and the lab's findings: the large-batch accuracy gap at the 5th epoch and whether
each remedy closes it (the Q4 table), and per setup the test accuracy, time to train, scaling
efficiency, LR rule and GPU utilization (the test-accuracy table)."""
from __future__ import annotations

from typing import Any, Optional

import pandas as pd

from collect.findings import (DESCRIBED, LISTED, Evidence, Finding, Measured, compare, listing, more, one_run, ratio_text, shown,
                              word, without_results)
from collect.render import number, percent, seconds, status_text
import collect.train.formulas as f
from collect.train.grids import lr_rule, remedy_name
from collect.train.labels import Namer, base_key, device, missing_reason, ok_rows, present
from collect.train.tables import BASE_KEYS, CONFIG, Q4_BASELINE_BATCH, Q4_EPOCH, largest_fitting_batch

Q4, LAB = "A.Q4", "lab"
REMEDIES = ("lr_scaling", "warmup_epochs", "sync_bn")
Q4_SHOWN = {"lr_scaling", "warmup_epochs", "sync_bn", "epochs", "timed_epoch"}
LAB_SHOWN = Q4_SHOWN | {"lr", "lr_ref_batch"}


def _pct(m: Measured) -> str:
    return shown(m, lambda v: percent(v, 2))


def _points(a: Measured, b: Measured, below: str = "below", above: str = "above") -> str:
    """"28.00 points below" / "not distinguishable from", by compare."""
    order = compare(a, b)
    return word(order, f"{100 * abs(a.value - b.value):.2f} points {below}", f"{100 * abs(a.value - b.value):.2f} "
                f"points {above}")


def _key(row: Any, keys: list[str]) -> tuple:
    return tuple(getattr(row, k) for k in keys)


def q4_findings(q4: pd.DataFrame, test: pd.DataFrame, q1: pd.DataFrame) -> list[Finding]:
    """The baseline; each large-batch run's gap to it, and each remedy against no remedy at the
    same batch and against the baseline; the runs without a result; Q1's largest batch if Q4 did not run it.
    Nothing for an empty table (the study does not ask Q4)."""
    q4, test = q4.reset_index(drop=True), test.reset_index(drop=True)
    namer = Namer(q4, "q4", Q4_SHOWN)
    tests = Tests(test)
    base = next(((i, r) for i, r in ok_rows(q4) if r.baseline and present(r.accuracy)), None)
    found = [] if base else [_no_baseline(q4, namer)]
    plain_keys = [k for k in ["engine", "nodes", "gpus_per_node"] + BASE_KEYS if k not in REMEDIES]
    plains = {_key(r, plain_keys): (i, r) for i, r in ok_rows(q4) if not r.baseline and remedy_name(r) == "none"}
    large = [(i, r) for i, r in ok_rows(q4) if not r.baseline and present(r.accuracy)]
    found += [_large(i, r, base, plains.get(_key(r, plain_keys)), tests, namer) for i, r in large[:DESCRIBED]]
    found += more(Q4, large, "large-batch runs", lambda row: namer.evidence(*row))
    missing = [(i, r) for i, r in namer.rows if not r.baseline and (r.status != "ok" or not present(r.accuracy))]
    if missing:
        found.append(Finding(Q4, "Q4 without a result: " + without_results(
            (f"{namer.name(r)}, {_remedy(r)}", _why(r)) for _, r in missing) + ".", {},
            tuple(namer.evidence(i, r) for i, r in missing[:DESCRIBED])))
    return found + _q1_batch(q4, q1)


def _why(r: Any) -> str:
    """Why a Q4 row has no figure: its status, or an ok run that recorded no 5th epoch."""
    return missing_reason(r) if r.status != "ok" else f"no epoch {Q4_EPOCH} recorded"


def _remedy(r: Any) -> str:
    remedy = remedy_name(r)
    return "no remedy" if remedy == "none" else remedy


def _no_baseline(q4: pd.DataFrame, namer: Namer) -> Finding:
    """No gap without the baseline: its rows say why (or the large-batch rows, when it is not in the study)."""
    rows = list(enumerate(q4.itertuples(index=False)))
    base = [(i, r) for i, r in rows if r.baseline]
    why = listing(_why(r) for _, r in base) if base else "not in study"
    return Finding(Q4, f"No baseline (batch {Q4_BASELINE_BATCH} on 1 GPU, no remedy, {Q4_EPOCH}+ epochs) has a "
                       f"result ({why}): the large-batch gap cannot be computed.", {},
                   tuple(namer.evidence(i, r) for i, r in (base or rows)[:LISTED]))


class Tests:
    """The test-accuracy table's recorded rows by configuration, to cite beside Q4's training figures."""

    def __init__(self, test: pd.DataFrame) -> None:
        self.namer = Namer(test, "test", LAB_SHOWN)
        self.rows = {_key(r, CONFIG): (i, r) for i, r in ok_rows(test) if present(r.test_accuracy)}

    def against(self, r: Any, base: Any) -> tuple[list[str], tuple[Evidence, ...]]:
        """The test accuracy of run r against the baseline's, where both recorded it."""
        mine, theirs = self.rows.get(_key(r, CONFIG)), self.rows.get(_key(base, CONFIG))
        if not (mine and theirs):
            return [], ()
        a, b = Measured.of(mine[1], "test_accuracy"), Measured.of(theirs[1], "test_accuracy")
        return ([f"test accuracy after its last epoch {_pct(a)}, {_points(a, b)} the baseline's {_pct(b)}"],
                (self.namer.evidence(*mine), self.namer.evidence(*theirs)))


def _large(i: int, r: Any, base: Optional[tuple[int, Any]], plain: Optional[tuple[int, Any]], tests: Tests,
           namer: Namer) -> Finding:
    acc = Measured.of(r, "accuracy")
    remedy = remedy_name(r)
    head = (f"At epoch {Q4_EPOCH}, {namer.name(r)} (global batch {r.global_batch}, {_remedy(r)}, LR "
            f"{r.epoch_lr:g} at epoch {Q4_EPOCH}): training accuracy {_pct(acc)}, loss {number(r.loss, 4)}")
    numbers = {"accuracy": acc.value, "loss": float(r.loss)}
    cited, figures, parts = [namer.evidence(i, r)], [acc], [head]
    if plain and remedy != "none" and plain[0] != i:
        p = Measured.of(plain[1], "accuracy")
        change = word(compare(acc, p), f"lowers it {100 * (p.value - acc.value):.2f} points",
                      f"raises it {100 * (acc.value - p.value):.2f} points", "leaves it not distinguishable")
        parts.append(f"{remedy} {change} against no remedy ({_pct(p)})")
        cited.append(namer.evidence(*plain))
        figures.append(p)
        numbers["no_remedy_accuracy"] = p.value
    if base:
        b = Measured.of(base[1], "accuracy")
        gap = compare(acc, b)
        if remedy == "none":
            parts.append(f"{_points(acc, b)} the baseline's {_pct(b)} (batch {Q4_BASELINE_BATCH} on 1 GPU, LR "
                         f"{base[1].epoch_lr:g}, loss {number(base[1].loss, 4)})")
        else:
            verdict = word(gap, f"leaves a gap of {100 * (b.value - acc.value):.2f} points to",
                           f"goes {100 * (acc.value - b.value):.2f} points beyond",
                           "closes the gap: not distinguishable from")
            parts.append(f"it {verdict} the baseline's {_pct(b)} (batch {Q4_BASELINE_BATCH} on 1 GPU)")
        cited.append(namer.evidence(*base))
        figures.append(b)
        numbers["baseline_accuracy"] = b.value
        clause, tested = tests.against(r, base[1])
        parts += clause
        cited += tested
    text = "; ".join(parts) + one_run(*figures)
    return Finding(Q4, text + ".", numbers, tuple(cited))


def _q1_batch(q4: pd.DataFrame, q1: pd.DataFrame) -> list[Finding]:
    """Q4 asks for Q1's largest batch that fits: said when the study ran Q4 at other batches."""
    largest = largest_fitting_batch(q1)
    ran = sorted({int(r.batch_per_gpu) for r in q4.itertuples(index=False) if not r.baseline})
    if largest is None or not ran or largest in ran:
        return []
    row = next((i, r) for i, r in ok_rows(q1.reset_index(drop=True)) if r.batch_per_gpu == largest)
    return [Finding(Q4, f"Q4 asks for Q1's largest batch that fits 1 GPU ({largest} per GPU); this study ran Q4 at "
                        f"{listing(f'batch {b}' for b in ran)} per GPU instead.", {"q1_largest_fitting_batch": float(largest)},
                    (Namer(q1, "q1").evidence(*row),))]


def lab_findings(test: pd.DataFrame) -> list[Finding]:
    """Per run (up to DESCRIBED, then counted): test accuracy, time to train, speedup and efficiency against
    1 GPU, the LR rule, GPU utilization; the best test accuracy against the next; what has no result.
    One finding alone when no run recorded test accuracy."""
    test = test.reset_index(drop=True)
    namer = Namer(test, "test", LAB_SHOWN)
    ok = namer.ok
    if ok and not any(present(r.test_accuracy) for _, r in ok):
        return [Finding(LAB, "No run recorded test accuracy (results written before the job evaluated the test set, "
                             "or cells with test_images = 0): the lab's questions have no answer here.", {},
                        tuple(namer.evidence(i, r) for i, r in ok[:LISTED]))]
    ones = {base_key(r): (i, r) for i, r in ok if r.engine == "single"}
    found = [_run(i, r, ones.get(base_key(r)), namer) for i, r in ok[:DESCRIBED]]
    found += more(LAB, ok, "runs", lambda row: namer.evidence(*row))
    best = _best(ok, namer)
    if best:
        found.append(best)
    missing = [(i, r) for i, r in namer.rows if r.status != "ok"]
    if missing:
        found.append(Finding(LAB, "Without a result: " + without_results(
            (namer.name(r), missing_reason(r)) for _, r in missing) + ".", {},
            tuple(namer.evidence(i, r) for i, r in missing[:DESCRIBED])))
    return found


def _run(i: int, r: Any, one: Optional[tuple[int, Any]], namer: Namer) -> Finding:
    time = Measured.of(r, "time_to_train_s")
    recorded = present(r.test_accuracy)
    acc = Measured.of(r, "test_accuracy") if recorded else None
    parts = [f"{namer.name(r)} ({device([r.gpu_model])}), {r.epochs} epochs, global batch {r.global_batch}, LR "
             f"{lr_rule(r)}: test accuracy {_pct(acc) if acc else 'not recorded'}, {shown(time, seconds, ' s')} to train"]
    numbers = {"time_to_train_s": time.value, "test_accuracy": acc.value if acc else float("nan")}
    cited, figures = [namer.evidence(i, r)], [time]
    if r.engine != "single":
        parts += _against_one(r, time, acc, one, numbers)
        if one:
            cited.append(namer.evidence(*one))
            figures.append(Measured.of(one[1], "time_to_train_s"))
    if r.nodes > 1 and r.lr_scaling != "none":
        parts.append(f"the LR rule counts all {r.gpus} GPUs of the {r.nodes} nodes in the global batch (the world "
                     "size, not one node's GPUs)")
    parts.append(f"GPU utilization {r.gpu_util_median_pct:.0f}% (median, timed epoch)" if present(r.gpu_util_median_pct)
                 else "GPU utilization not sampled")
    numbers["gpu_util_pct"] = float(r.gpu_util_median_pct) if present(r.gpu_util_median_pct) else float("nan")
    return Finding(LAB, "; ".join(parts) + one_run(*figures) + ".", numbers, tuple(cited))


def _against_one(r: Any, time: Measured, acc: Optional[Measured], one: Optional[tuple[int, Any]],
                 numbers: dict[str, float]) -> list[str]:
    if one is None:
        return [f"no 1-GPU run to compare with ({status_text(r.t1_time_s_status)})"]
    base = one[1]
    t1 = Measured.of(base, "time_to_train_s")
    how = word(compare(time, t1), "faster", "slower", "a difference within the runs' spread: not distinguishable")
    efficiency = f.efficiency(r.speedup, r.gpus)
    numbers.update(speedup=float(r.speedup), efficiency=efficiency)
    parts = [f"{ratio_text(r.speedup)} as fast as 1 GPU's {shown(t1, seconds, ' s')} ({how}), efficiency "
             f"{number(efficiency)}"]
    if acc and present(base.test_accuracy):
        b = Measured.of(base, "test_accuracy")
        lrs = f" (LR {r.lr_after_warmup:g} against {base.lr_after_warmup:g})" if r.lr_after_warmup != base.lr_after_warmup else ""
        parts.append(f"test accuracy {_points(acc, b)} 1 GPU's {_pct(b)}{lrs}")
    return parts


def _best(ok: list[tuple[int, Any]], namer: Namer) -> Optional[Finding]:
    recorded = sorted(((i, r) for i, r in ok if present(r.test_accuracy)), key=lambda x: -x[1].test_accuracy)
    if len(recorded) < 2:
        return None
    (i1, r1), (i2, r2) = recorded[:2]
    m1, m2 = Measured.of(r1, "test_accuracy"), Measured.of(r2, "test_accuracy")
    how = word(compare(m2, m1), f"{100 * (m1.value - m2.value):.2f} points lower", "", "not distinguishable from it")
    text = (f"Best test accuracy: {_pct(m1)} by {namer.name(r1)} ({r1.epochs} epochs, LR {lr_rule(r1)}); the next, "
            f"{_pct(m2)} by {namer.name(r2)}, is {how}{one_run(m1, m2)}.")
    return Finding(LAB, text, {"best_test_accuracy": m1.value, "next_test_accuracy": m2.value},
                   (namer.evidence(i1, r1), namer.evidence(i2, r2)))
