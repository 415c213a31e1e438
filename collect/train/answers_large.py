"""Part A Q4.1 and Q4.2 as records and paragraphs: the 5th epoch at the largest batch against the
study's baseline (batch 128 on 1 GPU); Goyal et al.'s two remedies and whether this run's cells show
each closing the gap. Q5-Q7: collect.train.answers_ddp and answers_q7."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Optional

import pandas as pd

from collect.evidence import Measured, listing
from collect.questions import Record, Tables, Words, one_run_note, says
from collect.render import number
from collect.train.formulas import DIVERGED_LOSS
from collect.train.answers_common import caveats, cited, part_a, pct, points_against, rows_of, setting_notes, where
from collect.train.grids import remedy_name
from collect.train.labels import Namer, missing_reason, present
from collect.train.tables import EARLIER_ACCURACY, Q4_BASELINE_BATCH, Q4_EPOCH, largest_fitting_batch
from collect.verdict import Difference, leaning


@dataclass(frozen=True)
class Run5:
    """One run's 5th epoch."""

    setup: str
    batch: int
    global_batch: int
    remedy: str
    loss: Measured
    accuracy: Measured
    lr: float  # the learning rate at the end of the 5th epoch (NaN: not recorded)
    gpus: int = 1
    warmup_epochs: int = 0
    train_images: int = 0  # an epoch's: with the global batch, its SGD steps

    @property
    def steps_per_epoch(self) -> int:
        """ceil(train images / global batch): 50,000 at 32,768 -> 2."""
        return -(-self.train_images // self.global_batch)

    @property
    def warmup_steps(self) -> int:
        """SGD steps of its warmup: warmup epochs x steps per epoch."""
        return self.warmup_epochs * self.steps_per_epoch


@dataclass(frozen=True)
class Q41Answer(Record):
    device: str
    cpu: bool
    synthetic: bool
    baseline: Optional[Run5]
    large: Optional[Run5]  # the largest batch on 4 GPUs without remedy that ran
    gap: Optional[Difference]  # its accuracy against the baseline's, in points
    q1_largest: Optional[int]
    planned: tuple[str, ...] = ()  # the 5-epoch runs planned without a result, each with why
    notes: tuple[str, ...] = ()
    q1_oom: bool = True  # Q1's sweep reached a batch that does not fit (else its largest that fits is not known)
    most_gpus: int = 4  # the most GPUs any run of the study had (the question asks 4)
    large_curve: tuple[float, ...] = ()  # the large run's training accuracy by epoch, as the Q4 table prints it
    trivial: bool = False  # the synthetic baseline's accuracy at TRIVIAL or above: its task is near-trivial (TA7 16)

    @property
    def unstable(self) -> bool:
        """Some epoch's accuracy of the large run lies more than UNSTABLE below an earlier epoch's: its 5th epoch
        is a snapshot of a swinging run, not where it settled (TA3 17). Any epoch, not the last alone: 21, 56, 21,
        31, 48 swings though 48 is within UNSTABLE of 56 (TA5 14)."""
        c = self.large_curve
        return any(max(c[:i]) - c[i] > UNSTABLE for i in range(1, len(c)))


CAUSE = ": with the same epochs it takes far fewer, larger steps at the same learning rate"
ANSWERED_BY = "hw5"  # the shipped study with Q1's sweep to the first OOM and Q4's 5-epoch runs
UNSTABLE = 0.10  # accuracy (a fraction): a fall this far below an earlier epoch's is no settled figure
TRIVIAL = 0.95  # a synthetic baseline's accuracy from which its task is near-trivial: a gap below it is no CIFAR-10 gap


def _run5(r: Any, namer: Namer) -> Run5:
    lr = float(r.epoch_lr) if present(getattr(r, "epoch_lr", None)) else float("nan")
    return Run5(namer.name(r, batch=False), int(r.batch_per_gpu), int(r.global_batch), remedy_name(r),
                Measured.of(r, "loss"), Measured.of(r, "accuracy"), lr, int(r.gpus), int(r.warmup_epochs),
                int(r.train_images))


def _q4_rows(tables: Tables) -> tuple[pd.DataFrame, Namer, list[tuple[int, Any]], Optional[tuple[int, Any]]]:
    q4 = tables["q4"].reset_index(drop=True)
    namer = Namer(q4, "q4", {"lr_scaling", "warmup_epochs", "sync_bn", "epochs", "timed_epoch"})
    ok = [(i, r) for i, r in rows_of(q4) if r.status == "ok" and present(r.accuracy)]
    base = next(((i, r) for i, r in ok if r.baseline), None)
    return q4, namer, ok, base


def q41_answer(tables: Tables) -> Optional[Q41Answer]:
    q4, namer, ok, base = _q4_rows(tables)
    if not part_a(tables):
        return None
    plain = [(i, r) for i, r in ok if not r.baseline and remedy_name(r) == "none"]
    large = max(plain, key=lambda x: x[1].batch_per_gpu, default=None)
    missing = [f"{namer.name(r)} ({missing_reason(r)})" for _, r in rows_of(q4) if r.status != "ok" and not r.baseline
               and remedy_name(r) == "none"]
    to_add = []
    if base is None:
        missing.append(f"the baseline (batch {Q4_BASELINE_BATCH} on 1 GPU, {Q4_EPOCH} epochs) has no result")
        to_add.append(f"the baseline (batch {Q4_BASELINE_BATCH} on 1 GPU with epochs = {Q4_EPOCH})")
    if large is None:
        to_add.append(f"a DDP cell on 4 GPUs with epochs = {Q4_EPOCH} at Q1's largest batch")
    b, l_ = (_run5(base[1], namer) if base else None), (_run5(large[1], namer) if large else None)
    gap = points_against(l_.accuracy, b.accuracy) if b and l_ else None
    used = [x for x in (base, large) if x]
    device, cpu = where(r.gpu_model for _, r in used)
    synthetic = any(r.dataset == "synthetic" for _, r in used)
    planned = tuple(f"{namer.name(r)} ({missing_reason(r)})" for _, r in rows_of(q4) if r.status != "ok")
    cells = tables.get("train_cells")
    most = int(cells.gpus.max()) if cells is not None and len(cells) and "gpus" in cells else 4
    return Q41Answer(cited(namer, used), tuple(missing), device, cpu, synthetic, b, l_, gap,
                     largest_fitting_batch(tables["q1"]), planned, setting_notes(cells, (r for _, r in used)),
                     bool((tables["q1"].status == "oom").any()), most,
                     _curve(large[1]) if large else (), synthetic and b is not None and b.accuracy.value >= TRIVIAL,
                     to_add=tuple(to_add))


def _curve(r: Any) -> tuple[float, ...]:
    """Row r's training accuracy by epoch, as the Q4 table's accuracy-by-epoch column prints it (TA4 11; the
    median over repeats), up to the first epoch not recorded."""
    out = []
    for value in [getattr(r, c, float("nan")) for c in EARLIER_ACCURACY] + [r.accuracy]:
        if not present(value):
            break
        out.append(float(value))
    return tuple(out)


def _unstable(run: Run5, curve: tuple[float, ...]) -> str:
    """The swing that makes the 5th epoch a snapshot, in the plot's whole percents."""
    runs = "one run" if run.accuracy.repeats <= 1 else f"the median of {run.accuracy.repeats} runs"
    went = listing([f"{100 * x:.0f}%" for x in curve], len(curve))
    return (f"That is {runs}, and unstable: its training accuracy by epoch 1-{len(curve)} was {went} (the Q4 "
            f"table's accuracy by epoch), so epoch {len(curve)} is a snapshot of a swinging run, not where it settled")


def q41_text(a: Q41Answer) -> str:
    form = f"The average training loss and training accuracy for the {Q4_EPOCH}th epoch for batch size per GPU "
    if a.large:
        parts = [f"{form}{a.large.batch} on {a.large.setup} (global batch {a.large.global_batch}) are "
                 f"{number(a.large.loss.value, 4)} and {pct(a.large.accuracy)}."]
    else:  # the assignment's form, its blanks said as not measured
        why = [f"the study's {Q4_EPOCH}-epoch runs have no result" if a.planned
               else f"this study has no {Q4_EPOCH}-epoch run" + " on 4 GPUs" * bool(a.baseline)]
        largest = a.q1_largest if a.q1_oom and a.q1_largest else None
        if not a.q1_oom:
            why.append("its Q1 sweep found no largest batch (none ran out of memory)")
        if a.most_gpus < 4:
            why.append(f"it ran at most {a.most_gpus} GPU{'s' * (a.most_gpus > 1)}")
        # no number: "the largest that fits" is no batch size to fill the form's blank with (TA2 26)
        said = (f"{form}{largest}" if largest else form.replace("for batch size per GPU ", "for the largest batch size "
                                                                 "per GPU that fits"))
        # a study that plans no 5-epoch run cannot answer; which one does, in the same sentence (TA3 1)
        other = "" if a.planned else f"; the {ANSWERED_BY} study, which runs them on 4 GPUs, answers it"
        parts = [f"{said} on 4 GPUs are not measured: {listing(why)}{other}."]
    if a.baseline and a.synthetic:
        # the comparison asked is against Lab 2's CIFAR-10 run: what the stand-in's figure can and cannot tell (TA7 16)
        trivial = (f", {100 * TRIVIAL:.0f}% or more: a near-trivial task, so a gap below it shows the large batch "
                   "failing even this task, not what it would lose against Lab 2's") if a.trivial else ""
        parts.append(f"The baseline asked, Lab 2's batch {Q4_BASELINE_BATCH} on 1 GPU on CIFAR-10, is not in this set "
                     f"(its data is synthetic): this study's batch {Q4_BASELINE_BATCH} on 1 GPU stands in, reaching "
                     f"{number(a.baseline.loss.value, 4)} and {pct(a.baseline.accuracy)}{trivial}.")
    elif a.baseline:
        parts.append(f"The baseline, this study's batch {Q4_BASELINE_BATCH} on 1 GPU (standing in for Lab 2's), reaches "
                     f"{number(a.baseline.loss.value, 4)} and {pct(a.baseline.accuracy)}.")
    if a.gap and a.large and a.baseline:
        d = a.gap.delta
        parts.append("The large batch's accuracy is " + says(a.gap, Words(
            f"{-d:.2f} points lower", f"{d:.2f} points higher", "not distinguishable from the baseline's",
            "not clearly different from the baseline's")) + ("." if a.unstable or leaning(a.gap) >= 0 else f"{CAUSE}."))
        if a.unstable:  # the swing first, then the cause (TA3 17)
            parts.append(_unstable(a.large, a.large_curve) + (f"; the likely cause of the gap{CAUSE}." if leaning(a.gap) < 0
                                                               else "."))
    if a.large and a.q1_largest and a.large.batch != a.q1_largest:
        parts.append(f"(Q1's largest batch that fits is {a.q1_largest}.)")
    missing = a.missing if a.large else a.planned  # the runs that failed, in the note
    return " ".join(parts) + caveats(a.cpu, missing, list(a.notes) + one_run_note(a.gap))


# --- Q4.2 -------------------------------------------------------------------------------------------

LINEAR, WARMUP = "linear scaling", "linear scaling with warmup"


@dataclass(frozen=True)
class RemedyRun:
    remedy: str
    run: Run5
    against_none: Optional[Difference]  # its accuracy against no remedy at the same batch, in points
    against_baseline: Optional[Difference]  # against the baseline: equivalent -> the gap is closed
    diverged: bool  # its 5th epoch's loss is above DIVERGED_LOSS


@dataclass(frozen=True)
class AtBatch:
    """The remedies at another batch where they ran (Q4.2 reports every one): no remedy there, and each remedy
    against it and against the baseline."""

    batch: int
    global_batch: int
    plain: Optional[Run5]
    remedies: tuple[RemedyRun, ...]


@dataclass(frozen=True)
class Q42Answer(Record):
    synthetic: bool
    cpu: bool
    batch: Optional[int]  # the batch the remedies are compared at: the largest where each remedy ran, else Q4.1's
    largest: Optional[int]  # Q4.1's batch: the largest run without remedy on 4 GPUs
    linear: Optional[RemedyRun]  # linear LR scaling alone, at `batch`
    warmup: Optional[RemedyRun]  # linear scaling with gradual warmup, at `batch`
    baseline: Optional[Run5]
    plain: Optional[Run5]  # no remedy, at `batch`
    at_largest: tuple[RemedyRun, ...]  # the remedies that ran at Q4.1's batch, where it is not `batch`
    not_run: tuple[NotRun, ...]  # remedy cells at `batch` or Q4.1's planned without a result
    notes: tuple[str, ...] = ()
    rule: Optional[ScalingRule] = None  # the reference the remedy runs scaled their rate from
    elsewhere: tuple[AtBatch, ...] = ()  # every other batch where a remedy ran (not `batch`, not Q4.1's), largest first


GOYAL_LR, GOYAL_BATCH = 0.1, 256  # Goyal et al.'s reference: learning rate 0.1 per 256 images


@dataclass(frozen=True)
class ScalingRule:
    """The linear rule's reference as the remedy runs applied it: `lr` per `ref_batch` images, and its
    rate per image against Goyal et al.'s 0.1 per 256 (`vs_goyal`: 2.0 is twice theirs at every batch)."""

    lr: float
    ref_batch: int
    vs_goyal: float


def scaling_rule(rows: list[Any]) -> Optional[ScalingRule]:
    """From the rows of the remedy runs an answer cites (None: none), the first one's reference."""
    scaled = [r for r in rows if r.lr_scaling == "linear"]
    if not scaled:
        return None
    lr, ref = float(scaled[0].lr), int(scaled[0].lr_ref_batch)
    return ScalingRule(lr, ref, (lr / ref) / (GOYAL_LR / GOYAL_BATCH))


def _rule_text(rule: Optional[ScalingRule]) -> str:
    """The caveat a scaled rate needs where its reference is not Goyal et al.'s."""
    if rule is None or abs(rule.vs_goyal - 1) <= 0.01:
        return ""
    times = "twice" if abs(rule.vs_goyal - 2) <= 0.01 else f"{rule.vs_goyal:.3g} times"
    return (f" The rule here starts from {rule.lr:g} per {rule.ref_batch} images, {times} Goyal et al.'s "
            f"{GOYAL_LR:g} per {GOYAL_BATCH}.")


@dataclass(frozen=True)
class NotRun:
    remedy: str
    batch: int
    why: str  # its status: "failed", "pending", "OOM"...


def _remedy_of(r: Any) -> Optional[str]:
    if r.lr_scaling != "linear" or bool(r.sync_bn):
        return None
    return WARMUP if r.warmup_epochs else LINEAR


def q42_answer(tables: Tables) -> Optional[Q42Answer]:
    q4, namer, ok, base = _q4_rows(tables)
    if not part_a(tables):
        return None
    runs = [(i, r) for i, r in rows_of(q4) if not r.baseline and not bool(r.sync_bn)]
    plain = {r.batch_per_gpu: (i, r) for i, r in ok if not r.baseline and remedy_name(r) == "none"}
    done = {(r.batch_per_gpu, _remedy_of(r)): (i, r) for i, r in runs
            if r.status == "ok" and present(r.accuracy) and _remedy_of(r)}  # remedies only: the plain runs are `plain`
    largest = max(plain, default=None)
    full = [b for b in plain if (b, LINEAR) in done and (b, WARMUP) in done]
    batch = largest if largest in full or not full else max(full)
    if batch is None:
        batch = max((b for b, _ in done), default=None)
    b, p = (_run5(base[1], namer) if base else None), (_run5(plain[batch][1], namer) if batch in plain else None)
    lin, warm = (_remedy(done.get((batch, name)), namer, p, b) for name in (LINEAR, WARMUP))
    at_largest: tuple[RemedyRun, ...] = ()
    if largest is not None and largest != batch:
        top = _run5(plain[largest][1], namer)
        at_largest = tuple(x for x in (_remedy(done.get((largest, n)), namer, top, None) for n in (LINEAR, WARMUP)) if x)
    not_run = tuple(NotRun(str(_remedy_of(r)), int(r.batch_per_gpu), missing_reason(r)) for _, r in runs
                    if r.status != "ok" and _remedy_of(r) and r.batch_per_gpu in (batch, largest))
    planned = {_remedy_of(r) for _, r in runs}
    absent = [n for n in (LINEAR, WARMUP) if n not in planned]
    missing = ["this study ran neither remedy"] if len(absent) == 2 else [f"this study has no run of {n}" for n in absent]
    to_add = [{LINEAR: "lr_scaling = \"linear\"", WARMUP: "warmup_epochs = 2 with lr_scaling = \"linear\""}[n]
              + " on Q4's large-batch cells" for n in absent]
    at_q41 = [plain.get(largest), done.get((largest, LINEAR)), done.get((largest, WARMUP))] if at_largest else []
    used = [x for x in (base, plain.get(batch), done.get((batch, LINEAR)), done.get((batch, WARMUP)), *at_q41) if x]
    others = sorted({k for k, _ in done} - {batch, largest if at_largest else batch}, reverse=True)
    elsewhere = tuple(_at_batch(k, plain.get(k), [done.get((k, n)) for n in (LINEAR, WARMUP)], namer, b) for k in others)
    used += [x for k in others for x in (plain.get(k), done.get((k, LINEAR)), done.get((k, WARMUP))) if x]
    _, cpu = where(r.gpu_model for _, r in used)
    return Q42Answer(cited(namer, used), tuple(missing), any(r.dataset == "synthetic" for _, r in used), cpu, batch,
                     largest, lin, warm, b, p, at_largest, not_run,
                     setting_notes(tables.get("train_cells"), (r for _, r in used)), scaling_rule([r for _, r in used]),
                     elsewhere, to_add=tuple(to_add))


def _at_batch(batch: int, plain_row: Optional[tuple[int, Any]], rows: list[Optional[tuple[int, Any]]], namer: Namer,
              base: Optional[Run5]) -> AtBatch:
    plain = _run5(plain_row[1], namer) if plain_row else None
    runs = tuple(x for x in (_remedy(r, namer, plain, base) for r in rows) if x)
    return AtBatch(batch, runs[0].run.global_batch, plain, runs)


def _remedy(row: Optional[tuple[int, Any]], namer: Namer, plain: Optional[Run5], base: Optional[Run5]) -> Optional[RemedyRun]:
    if row is None:
        return None
    run = _run5(row[1], namer)
    return RemedyRun(_remedy_of(row[1]) or run.remedy, run,
                     points_against(run.accuracy, plain.accuracy) if plain else None,
                     points_against(run.accuracy, base.accuracy) if base else None,
                     not run.loss.value <= DIVERGED_LOSS)  # a NaN or infinite loss: diverged


def q42_text(a: Q42Answer) -> str:
    text = ("Remedy 1, the linear scaling rule (Goyal et al.): a k times larger batch gets a k times larger learning "
            "rate. Remedy 2, gradual warmup: reach that rate over the first epochs, avoiding early instability.")
    largest = [f"{r.remedy} reaches {pct(r.run.accuracy)}" + _effect(r) + (", and diverged" if r.diverged
               else "") for r in a.at_largest] if a.largest != a.batch else []
    failed = [f"the {_short(m.remedy)} run has no result ({m.why})" for m in a.not_run if m.batch == a.largest != a.batch]
    if largest or failed:
        text += f" At Q4.1's batch {a.largest} per GPU, " + "; ".join(largest + failed) + "."
        gone = listing([_short(m.remedy) for m in a.not_run if m.batch == a.largest != a.batch])
        if gone:  # the question's own case, said as unanswered before the batch that stands in
            text += f" The question's case with {gone} is unanswered: its run is missing."  # no tool command (TA2 17)
    runs = [r for r in (a.linear, a.warmup) if r]
    if runs and (a.plain or a.baseline):
        b = f" (baseline {pct(a.baseline.accuracy)}" if a.baseline else " ("
        b += f", no remedy {pct(a.plain.accuracy)})" if a.plain else ")"
        where = (f"At batch {a.batch} per GPU, the largest where both ran" if largest
                 else f"In this run, at batch {a.batch} per GPU on 4 GPUs")
        text += f" {where}{b}: {_reached(runs)}." + _diverged(runs, a.plain) + _rule_text(a.rule)
    own = [f"{m.remedy} at batch {m.batch} ({m.why})" for m in a.not_run if m.batch == a.batch]
    if own:
        text += " No result: " + "; ".join(own) + "."
    text += _warmup_steps(a.warmup)  # of the warmup run just named, before the other batches
    text += "".join(_elsewhere_text(x) for x in a.elsewhere)
    verdicts = [v for r in (a.linear, a.warmup, *(x for e in a.elsewhere for x in e.remedies)) if r
                for v in (r.against_none, r.against_baseline)]
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(*verdicts))


def _elsewhere_text(x: AtBatch) -> str:
    """The remedies at another batch: no remedy there, each remedy's accuracy, its comparisons, divergence."""
    none = f"no remedy {pct(x.plain.accuracy)}; " if x.plain else ""
    runs = "; ".join(f"{r.remedy} {pct(r.run.accuracy)}{_effect(r)}{', and diverged' * r.diverged}" for r in x.remedies)
    return f" At global batch {x.global_batch:,} ({x.batch} per GPU): {none}{runs}."


GOYAL_WARMUP_STEPS = 5 * -(-1_281_167 // 8192)  # Goyal et al.: 5 epochs of ImageNet at batch 8192 (785 steps)


def _warmup_steps(w: Optional[RemedyRun]) -> str:
    """The warmup counted in SGD steps with its arithmetic (no printed table has a steps column, TA5 13), and
    what so few steps cannot test."""
    if w is None or not w.run.warmup_steps:
        return ""
    r = w.run
    text = (f" Its warmup is {r.warmup_steps:,} SGD steps at global batch {r.global_batch:,} ({r.warmup_epochs} epochs "
            f"x ceil({r.train_images:,} / {r.global_batch:,}) = {r.warmup_epochs} x {r.steps_per_epoch:,}")
    if r.warmup_steps < GOYAL_WARMUP_STEPS // 10:
        return text + f"; Goyal et al.: {GOYAL_WARMUP_STEPS}): too few to test their warmup, so no evidence against it."
    return text + ")."


def _short(remedy: str) -> str:
    """"warmup" for linear scaling with warmup (the run of Remedy 2), the name itself otherwise."""
    return "warmup" if remedy == WARMUP else remedy


def _with(remedy: str) -> str:
    """"with warmup" after linear scaling has been named; the name itself otherwise."""
    return "with warmup" if remedy == WARMUP else remedy


def _reached(runs: list[RemedyRun]) -> str:
    """Each remedy's accuracy and its comparisons, said once for both where they read the same."""
    effects = [_effect(r) for r in runs]
    if len(runs) == 2 and effects[0] == effects[1] and effects[0]:
        return (f"{runs[0].remedy} reaches {pct(runs[0].run.accuracy)} and {_with(runs[1].remedy)} "
                f"{pct(runs[1].run.accuracy)}, both{effects[0][1:]}")
    return "; ".join(f"{r.remedy} reaches {pct(r.run.accuracy)}{e}" for r, e in zip(runs, effects, strict=True))


def _diverged(runs: list[RemedyRun], plain: Optional[Run5]) -> str:
    """The runs whose loss blew up: the scaled learning rate, their loss against no remedy's."""
    bad = [r for r in runs if r.diverged]
    if not bad:
        return ""
    losses = " and ".join("NaN" if math.isnan(r.run.loss.value) else f"{r.run.loss.value:,.0f}"
                          if r.run.loss.value < 1e7 else f"{r.run.loss.value:.1e}" for r in bad)
    without = f"; {number(plain.loss.value)} without" if plain else ""
    who = "Both" if len(bad) == 2 else bad[0].remedy[0].upper() + bad[0].remedy[1:]
    return f" {who} diverged at the scaled rate {bad[0].run.lr:g} (5th-epoch loss {losses}{without})."


def _effect(r: RemedyRun) -> str:
    """Its comparisons in the verdicts' words; "in one run each" where a side is a single run (no spread)."""
    parts = []
    if r.against_none:
        parts.append(says(r.against_none, Words("lower than without it", "higher than without it",
                                                "no different from without it", "not clearly above no remedy")))
    if r.against_baseline:
        parts.append(says(r.against_baseline, Words("still below the baseline", "beyond the baseline",
                                                    "closing the gap to the baseline", "the gap not clearly closed")))
    single = [v for v in (r.against_none, r.against_baseline) if v is not None and v.one_run and v.sides]
    if single:  # one run a side: the figures compared, not a verdict's words (TA2 9)
        what = ("without it" if v is r.against_none else "for the baseline" for v in single)
        return ", against " + " and ".join(f"{statistics.median(v.sides.a_values):.2f}% {w}"  # type: ignore
                                          for v, w in zip(single, what, strict=True)) + " (one run each)"
    return (", " + ", ".join(parts)) if parts else ""
