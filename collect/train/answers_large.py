"""Part A Q4.1-Q7 as records and paragraphs: the 5th epoch at the largest batch against the study's
baseline (batch 128 on 1 GPU); Goyal et al.'s two remedies and whether this run's cells show each closing the gap;
and the essay questions (set_epoch, what DDP sends besides gradients, gradients alone at the largest
batch on 4 GPUs) from what the DDP runs measured (jobs.train.result.DDPEvidence), or the reasoning and
the cell to add where no run measured it."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import pandas as pd

from collect.evidence import Evidence, Measured
from collect.questions import Record, Tables, Words, one_run_note, says
from collect.render import number
from jobs.core.bandwidth import bytes_text
from collect.train.formulas import DIVERGED_LOSS
from collect.train.answers_common import caveats, cited, part_a, pct, points_against, rows_of, setting_notes, where
from collect.train.grids import remedy_name
from collect.train.labels import Namer, missing_reason, present
from collect.train.tables import CONFIG, Q4_BASELINE_BATCH, Q4_EPOCH, largest_fitting_batch
from collect.verdict import Difference


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
    warmup_steps: int = 0  # SGD steps of its warmup: warmup epochs x ceil(train images / global batch)


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


def _run5(r: Any, namer: Namer) -> Run5:
    lr = float(r.epoch_lr) if present(getattr(r, "epoch_lr", None)) else float("nan")
    steps = int(r.warmup_epochs) * -(-int(r.train_images) // int(r.global_batch))
    return Run5(namer.name(r, batch=False), int(r.batch_per_gpu), int(r.global_batch), remedy_name(r),
                Measured.of(r, "loss"), Measured.of(r, "accuracy"), lr, int(r.gpus), steps)


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
    return Q41Answer(cited(namer, used), tuple(missing), device, cpu, synthetic, b, l_, gap,
                     largest_fitting_batch(tables["q1"]), planned,
                     setting_notes(tables.get("train_cells"), (r for _, r in used)), to_add=tuple(to_add))


def q41_text(a: Q41Answer) -> str:
    form = f"The average training loss and training accuracy for the {Q4_EPOCH}th epoch for batch size per GPU "
    if a.large:
        parts = [f"{form}{a.large.batch} on {a.large.setup} (global batch {a.large.global_batch}) are "
                 f"{number(a.large.loss.value, 4)} and {pct(a.large.accuracy)}."]
    else:  # the assignment's form, its blanks said as not measured
        why = (f"the study's {Q4_EPOCH}-epoch runs have no result" if a.planned
               else f"this study has no {Q4_EPOCH}-epoch run" + " on 4 GPUs" * bool(a.baseline))
        parts = [f"{form}{a.q1_largest or 'the largest that fits'} on 4 GPUs are not measured: {why}."]
    if a.baseline:
        parts.append(f"The baseline, this study's batch {Q4_BASELINE_BATCH} on 1 GPU (standing in for Lab 2's), reaches "
                     f"{number(a.baseline.loss.value, 4)} and {pct(a.baseline.accuracy)}.")
    if a.gap and a.large and a.baseline:
        d = a.gap.delta
        parts.append("The large batch's accuracy is " + says(a.gap, Words(
            f"{-d:.2f} points lower", f"{d:.2f} points higher", "not distinguishable from the baseline's",
            "not clearly different from the baseline's")) + (
            ": with the same epochs it takes far fewer, larger steps at the same learning rate." if a.gap.direction < 0
            or (a.gap.one_run and a.gap.delta < -a.gap.threshold) else "."))
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
    done = {(r.batch_per_gpu, _remedy_of(r)): (i, r) for i, r in runs if r.status == "ok" and present(r.accuracy)}
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
    _, cpu = where(r.gpu_model for _, r in used)
    return Q42Answer(cited(namer, used), tuple(missing), any(r.dataset == "synthetic" for _, r in used), cpu, batch,
                     largest, lin, warm, b, p, at_largest, not_run,
                     setting_notes(tables.get("train_cells"), (r for _, r in used)), scaling_rule([r for _, r in used]),
                     to_add=tuple(to_add))


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
    text += _warmup_steps(a.warmup)
    verdicts = [v for r in (a.linear, a.warmup) if r for v in (r.against_none, r.against_baseline)]
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(*verdicts))


GOYAL_WARMUP_STEPS = 5 * -(-1_281_167 // 8192)  # Goyal et al.: 5 epochs of ImageNet at batch 8192 (785 steps)


def _warmup_steps(w: Optional[RemedyRun]) -> str:
    """The warmup counted in SGD steps, and what so few steps cannot test."""
    if w is None or not w.run.warmup_steps:
        return ""
    text = f" Its warmup is {w.run.warmup_steps:,} SGD steps at global batch {w.run.global_batch:,}"
    if w.run.warmup_steps < GOYAL_WARMUP_STEPS // 10:
        text += f" (Goyal et al.: {GOYAL_WARMUP_STEPS}): too few to test their warmup, so no evidence against it"
    return text + "."


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
    parts = []
    if r.against_none:
        parts.append(says(r.against_none, Words("lower than without it", "higher than without it",
                                                "no different from without it", "not clearly above no remedy")))
    if r.against_baseline:
        parts.append(says(r.against_baseline, Words("still below the baseline", "beyond the baseline",
                                                    "closing the gap to the baseline", "the gap not clearly closed")))
    return ", " + ", ".join(parts) if parts else ""


# --- Q5-Q7: DDP's own evidence -------------------------------------------------------------------


@dataclass(frozen=True)
class DDPRun:
    setup: str
    batch: int
    gpus: int
    grad_bytes: float
    buffer_bytes: float
    init_bytes: float
    broadcast_buffers: bool
    steps_per_epoch: float
    overlap_without: float
    overlap_with: float
    bn_rank_spread: float  # NaN: not measured


def _ddp_runs(tables: Tables) -> tuple[list[tuple[int, Any]], Optional[pd.DataFrame]]:
    """The ok DDP results with DDP's own evidence whose broadcast_buffers agrees with their cell's (one
    that disagrees cannot say which side it measured), and the cells' frame."""
    frame = tables.get("train_cells")
    if frame is None or "ddp_grad_bytes" not in frame:
        return [], None
    cells = frame.reset_index(drop=True)
    ok = (cells.status == "ok") & cells.ddp_grad_bytes.notna()
    return [(i, r) for i, r in rows_of(cells, ok) if r.status == "ok" and present(r.ddp_grad_bytes)
            and bool(r.ddp_broadcast_buffers) == bool(r.broadcast_buffers)], cells


def _disagree(tables: Tables) -> int:
    """DDP results whose evidence says broadcast_buffers otherwise than their cell."""
    frame = tables.get("train_cells")
    if frame is None or "ddp_grad_bytes" not in frame:
        return 0
    has = (frame.status == "ok") & frame.ddp_grad_bytes.notna()
    return int((has & (frame.ddp_broadcast_buffers.astype(bool) != frame.broadcast_buffers.astype(bool))).sum())


def _ddp(r: Any) -> DDPRun:
    return DDPRun(f"{r.gpus} GPUs" if r.nodes == 1 else f"{r.nodes} nodes x {r.gpus_per_node} GPUs", int(r.batch_per_gpu),
                  int(r.gpus), float(r.ddp_grad_bytes), float(r.ddp_buffer_bytes), float(r.ddp_init_bytes),
                  bool(r.ddp_broadcast_buffers), float(r.ddp_steps_per_epoch), float(r.ddp_order_overlap_without_set_epoch),
                  float(r.ddp_order_overlap_with_set_epoch), float(r.ddp_bn_rank_spread))


@dataclass(frozen=True)
class DDPAnswer(Record):
    run: Optional[DDPRun]  # the run whose numbers the answer reads
    gradients_only: Optional[DDPRun]  # Q7: a run with broadcast_buffers off

    @property
    def reshuffles(self) -> bool:
        """The run's own overlaps show set_epoch changing the order: fewer positions repeat with it."""
        return self.run is not None and self.run.overlap_with < self.run.overlap_without


def _cells_evidence(tables: Tables, rows: list[tuple[int, Any]]) -> tuple:
    """The test table's row of each run's configuration (its result file, named by cell id, holds the
    DDP evidence the answer quotes)."""
    test = tables.get("test")
    if test is None or not len(test):
        return ()
    test = test.reset_index(drop=True)
    out = []
    for _, r in rows:
        same = (test.engine == r.engine) & (test.gpus == r.gpus) & (test.batch_per_gpu == r.batch_per_gpu)
        at = next((i for i, t in rows_of(test, same) if all(getattr(t, c) == getattr(r, c) for c in CONFIG)), None)
        if at is not None:
            out.append(Evidence("test", at, f"{r.gpus} GPUs, {r.engine}, batch {r.batch_per_gpu} (result {r.cell_id})"))
    return tuple(out)


def ddp_answer(tables: Tables, prefer_batch: Optional[int] = None) -> Optional[DDPAnswer]:
    if not part_a(tables):
        return None
    runs, cells = _ddp_runs(tables)
    if prefer_batch is not None:
        runs = sorted(runs, key=lambda x: (x[1].batch_per_gpu != prefer_batch, -x[1].gpus))
    main = next(((i, r) for i, r in runs if bool(r.ddp_broadcast_buffers)), runs[0] if runs else None)
    off = next(((i, r) for i, r in runs if not bool(r.ddp_broadcast_buffers)), None)
    missing: tuple[str, ...] = () if runs else (NO_EVIDENCE,)
    bad = _disagree(tables)
    if bad:
        missing += (f"{bad} DDP result{'s' * (bad > 1)} whose evidence disagrees with its cell on broadcast_buffers "
                    "left out",)
    used = [x for x in (main, off) if x]
    return DDPAnswer(_cells_evidence(tables, used), missing, _ddp(main[1]) if main else None,
                     _ddp(off[1]) if off else None, to_add=() if runs else (RERUN,))


NO_EVIDENCE = "the runs did not record what DDP did, so this answer comes from PyTorch's documentation"
RERUN = "a rerun of a DDP cell (its result predates the DDP evidence jobs record)"


def q5_text(a: DDPAnswer) -> str:
    text = ("One needs to set the epoch because DistributedSampler draws one permutation of the whole data set from a "
            "generator seeded by seed + epoch, then gives each rank every N-th sample of it: without "
            "set_epoch(epoch) every epoch draws the same permutation, so each rank gets the same samples in the same "
            "order every epoch; with it, both the order and which samples a rank gets change. It does not "
            "synchronize the processes (DDP's all-reduce does).")
    if a.run and a.reshuffles:
        text += f" Measured on {a.run.setup} at batch {a.run.batch}: " + _orders(a.run) + "."
    elif a.run:
        text += (f" The run on {a.run.setup} at batch {a.run.batch} does not show it ({_orders(a.run)}), so it is not "
                 "cited as a measurement.")
    return text + caveats(False, a.missing)


def _orders(r: DDPRun) -> str:
    """What the run's sampler orders show, epoch 2 against epoch 1, in a student's words."""
    def at_same(share: float, lead: str) -> str:
        if share >= 1:
            return f"{lead} each rank receives exactly the same samples in the same order in epoch 2 as in epoch 1"
        return f"{lead} {'none' if share <= 0 else f'{share:.1%}'} of a rank's samples come at the same step in both epochs"
    return at_same(r.overlap_without, "without set_epoch") + "; " + at_same(r.overlap_with, "with it,")


def q6_text(a: DDPAnswer) -> str:
    r = a.run
    if r is None:
        text = ("No, the parameters and buffers are also communicated: DDP broadcasts them from rank 0 once when it wraps "
                "the model, and, with broadcast_buffers on (the default), rank 0's buffers (BatchNorm's running mean and "
                "variance) before every forward. ")
        params = "the parameters and buffers"
    else:
        per_step = f"{bytes_text(r.buffer_bytes)} of buffers (BatchNorm's running statistics) broadcast from rank 0 " \
                   "before every forward" if r.buffer_bytes else "no buffer broadcast (broadcast_buffers off)"
        text = (f"No, the parameters and buffers are also communicated. Measured on {r.setup} at batch {r.batch}: each "
                f"step all-reduces {bytes_text(r.grad_bytes)} of gradients; besides them, {per_step}, and "
                f"{bytes_text(r.init_bytes)} of parameters and buffers broadcast once when DDP wraps the model. ")
        params = f"the {bytes_text(r.init_bytes)} of parameters and buffers"
    return (text + f"DataParallel, the homework's other engine, copies {params} from GPU 0 to every other GPU on every "
            "forward, scatters the inputs and gathers the outputs. Neither averages BatchNorm's statistics: "
            "SyncBatchNorm would synchronise each batch's mean and variance across ranks in the forward, and the "
            "running statistics would then agree as a result." + caveats(False, a.missing))
