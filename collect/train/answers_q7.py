"""Part A Q7 as a record and a paragraph: would communicating only the gradients suffice for batch
512 per GPU on 4 GPUs? Answered for that case whatever the study ran; read from the study's
gradients-only cell on 4 GPUs (broadcast_buffers off; the question's batch where it ran): its test
accuracy and the ranks' BatchNorm spread against the same configuration with the buffers broadcast, each
through the one verdict rule (collect.verdict: one run a side decides nothing). Yes or No comes from the
reasoning (given identical initial weights and the same averaged gradient the weights stay equal; the
buffers go from rank 0, so rank 0's running statistics follow the same path either way, and each evaluation
gives all ranks rank 0's: the test table's footnote) unless the verdict, over repeats, finds gradients only lower.
Of one run a side the answer gives no verdict: a gap inside the error the test images allow says so with that error
(collect.verdict.count_error); another says what the runs' seeds make of it and how far repeats of one configuration
stray, where the study has them (TA7 3: runs launched otherwise are not repeats). Where the study has no such cell,
the reasoning (and, in the details, the cell to add)."""
from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any, Optional

from collect.evidence import Measured
from jobs.core.bandwidth import bytes_text
from collect.questions import Tables, Words, one_run_note, says
from collect.render import SMALL_COUNT, accuracy_digits, percent
from collect.train.answers_common import POINT, accuracy, caveats, figure, part_a, points_against, rows_of, setting_notes
from collect.train.answers_ddp import NO_EVIDENCE, DDPAnswer, DDPRun, ddp_answer, documentation_only, runs_of
from collect.train.grids import remedy_name
from collect.train.labels import missing_reason, present
from collect.train.tables import CONFIG, Q4_EPOCH
from collect.verdict import BEYOND, Difference, Verdict, at_zero, count_error, verdict

GPUS, BATCH = 4, 512  # the question's case: batch 512 per GPU on 4 GPUs
UNRECORDED = "the ranks' BatchNorm statistics"  # what Q7 needs a DDP run to record


@dataclass(frozen=True)
class Span:
    """The test table's BN spread column among its DDP runs with the buffers broadcast: how far one run's spread
    strays across configurations (TA7 3: run 12's 3.7%-838.3%)."""

    low: float  # a fraction of a layer's mean variance
    high: float
    rows: int  # the rows it spans (0: none measured)


@dataclass(frozen=True)
class Q7Answer(DDPAnswer):
    batch: int  # per GPU: the question's case (BATCH), answered whatever the study ran
    gpus: int
    global_batch: int
    measured_batch: Optional[int]  # per GPU: the gradients-only cell's on 4 GPUs (None: the study has none)
    epochs: int  # the gradients-only cell's, else the DDP run's of the question's case it would sit beside
    beside: bool  # the study has a DDP run of the question's case with the buffers broadcast
    status: str  # the gradients-only cell's ("ok", "failed", ...); "" where the study has none
    synthetic: bool
    only: Optional[Measured]  # its test accuracy after the last epoch
    broadcast: Optional[Measured]  # the same configuration's with the buffers broadcast
    verdict: Optional[Difference]  # only against broadcast, in points
    study_gpus: int = GPUS  # the most GPUs a DDP run of the study has (the question's case is GPUS)
    remedies: bool = False  # Q4.2 measured a remedy (linear scaling) at a large batch
    notes: tuple[str, ...] = ()
    images: float = float("nan")  # test images each accuracy is over: their decimals and the error the count allows
    seeds: tuple[int, ...] = ()  # the distinct seeds the two compared configurations' ok runs trained from
    bn_verdict: Optional[Verdict] = None  # the ranks' BN spread, gradients only (b) against broadcast (a)
    bn_only: float = math.nan  # the BN spreads bn_verdict compares, as the test table prints them (the median)
    bn_broadcast: float = math.nan
    bn_span: Span = Span(math.nan, math.nan, 0)  # the BN spread column among the broadcast runs

    @property
    def okay(self) -> bool:
        """The answer's Yes: the verdict, over repeats, does not find gradients alone lower (one run a side
        is inconclusive by rule: collect.verdict)."""
        return self.verdict is None or not (self.verdict.outcome == BEYOND and self.verdict.direction < 0)

    @property
    def count_points(self) -> float:
        """The points the test images allow between the two accuracies (collect.verdict.count_error; NaN: unknown)."""
        if self.only is None or self.broadcast is None or not self.images > 0:
            return math.nan
        return 100 * count_error(self.only.value, self.broadcast.value, self.images)

    @property
    def inside_count(self) -> bool:
        """Single runs a side whose gap the test images cannot resolve: it is no larger than count_points (TA8 4)."""
        return self.verdict is not None and self.verdict.one_run and abs(self.verdict.delta) <= self.count_points

    @property
    def repeated(self) -> Optional[tuple[str, Measured]]:
        """The compared configuration with two or more runs (repeats of one configuration: how far its single runs
        stray), its side's name and accuracy; None where each ran once (no such pair)."""
        sides = (("gradients only", self.only), ("with the buffers broadcast", self.broadcast))
        return next(((name, m) for name, m in sides if m is not None and len(m.values) >= 2), None)


def _gradients_only(tables: Tables) -> tuple[Optional[Any], Optional[Any]]:
    """The study's gradients-only DDP cell on 4 GPUs (the question's batch where it ran, else the first by
    the test table's order) and its partner: the configuration that differs only in broadcasting the buffers."""
    test = tables.get("test")
    if test is None or "broadcast_buffers" not in test:
        return None, None
    on, ddp4 = test.broadcast_buffers.astype(bool), (test.engine == "ddp") & (test.gpus == GPUS)
    cells = [r for _, r in rows_of(test, ddp4 & ~on) if r.engine == "ddp" and r.gpus == GPUS and not bool(r.broadcast_buffers)]
    only = next((r for r in cells if r.batch_per_gpu == BATCH), cells[0] if cells else None)
    if only is None:
        return None, None
    same = [c for c in CONFIG if c != "broadcast_buffers"]
    alike = on & (test.engine == only.engine) & (test.gpus == only.gpus) & (test.batch_per_gpu == only.batch_per_gpu)
    partner = next((r for _, r in rows_of(test, alike)
                    if bool(r.broadcast_buffers) and all(getattr(r, c) == getattr(only, c) for c in same)), None)
    return only, partner


def _seeds(tables: Tables, rows: list[Any]) -> tuple[int, ...]:
    """The distinct seeds the rows' configurations' ok runs trained from (run_seed; a result written before it
    trained with its cell's seed)."""
    runs = [x for r in rows for x in runs_of(tables, r)]
    return tuple(sorted({int(x.run_seed) if present(x.run_seed) else int(x.seed) for x in runs}))


def _bn_verdict(tables: Tables, only: Optional[Any], partner: Optional[Any]) -> Optional[Verdict]:
    """The ranks' BN spread with gradients only against the buffers broadcast, by the one rule over each side's
    runs (at_zero where a spread is 0: the ranks agree); None where a side measured none."""
    if only is None or partner is None:
        return None
    a, b = ([float(x.ddp_bn_rank_spread) for x in runs_of(tables, r) if present(getattr(x, "ddp_bn_rank_spread", None))]
            for r in (partner, only))
    if not a or not b:
        return None
    return verdict(a, b) if min(a + b) > 0 else at_zero(a, b)  # the rule's 5% band; over repeats its interval decides


def _bn_printed(only: Optional[Any], partner: Optional[Any]) -> tuple[float, float]:
    """The two rows' BN spread as the test table prints it (NaN: no row, or none measured)."""
    a, b = (getattr(r, "ddp_bn_rank_spread", math.nan) for r in (only, partner))
    return float(a) if present(a) else math.nan, float(b) if present(b) else math.nan


def _bn_span(tables: Tables) -> Span:
    """The test table's BN spread column among its DDP rows with the buffers broadcast."""
    test = tables.get("test")
    if test is None or "ddp_bn_rank_spread" not in test or "broadcast_buffers" not in test:
        return Span(math.nan, math.nan, 0)
    values = test[(test.engine == "ddp") & test.broadcast_buffers.astype(bool)].ddp_bn_rank_spread.dropna()
    return Span(float(values.min()), float(values.max()), len(values)) if len(values) else Span(math.nan, math.nan, 0)


def q7_answer(tables: Tables) -> Optional[Q7Answer]:
    if not part_a(tables):
        return None
    only, partner = _gradients_only(tables)
    ddp = _ddp_on_4(tables)
    epochs = int(only.epochs) if only is not None else ddp.get(BATCH, Q4_EPOCH)
    a = ddp_answer(tables, prefer_batch=BATCH)
    assert a is not None  # part_a holds
    acc, base = figure(only, "test_accuracy"), figure(partner, "test_accuracy")
    images = float(only.evaluated_images) if only is not None and present(only.evaluated_images) else float("nan")
    v = points_against(acc, base, _threshold(acc, base, images)) if acc and base else None
    status = "" if only is None else str(only.status) if only.status != "failed" else missing_reason(only)
    synthetic = only is not None and only.dataset == "synthetic"
    test = tables.get("test")
    most = int(test[test.engine == "ddp"].gpus.max()) if test is not None and (test.engine == "ddp").any() else GPUS
    q4 = tables["q4"]
    remedies = bool(len(q4)) and bool(((q4.lr_scaling == "linear") & (q4.status == "ok")).any())
    notes = setting_notes(tables.get("train_cells"), [r for r in (only, partner) if r is not None])
    cell = f"a DDP cell with broadcast_buffers = false at batch {BATCH} per GPU on {GPUS} GPUs" + (
        f" with epochs = {epochs} beside the study's run of it" if BATCH in ddp else "")
    return Q7Answer(a.evidence, a.missing, a.run, a.gradients_only, BATCH, GPUS, BATCH * GPUS,
                    None if only is None else int(only.batch_per_gpu), epochs, BATCH in ddp, status, synthetic, acc,
                    base, v, most, remedies, notes, images, _seeds(tables, [r for r in (only, partner) if r is not None]),
                    _bn_verdict(tables, only, partner), *_bn_printed(only, partner), _bn_span(tables),
                    to_add=a.to_add + ((cell,) if only is None else ()),
                    documentation_only=a.documentation_only and only is None, ddp_runs=a.ddp_runs)


def _threshold(acc: Measured, base: Measured, images: float) -> float:
    """Points a difference must pass to be one: POINT, or the error the test images allow where larger (a
    single run of 100 images is 84% give or take about 7 points, collect.verdict.count_error)."""
    if not images > 0:
        return POINT
    return max(POINT, 100 * count_error(acc.value, base.value, images))


def _ddp_on_4(tables: Tables) -> dict[int, int]:
    """The batches per GPU of the study's ok DDP runs on one node of 4 GPUs, buffers broadcast and no
    remedy, each with its epochs (the fewest)."""
    test = tables.get("test")
    out: dict[int, int] = {}
    if test is None:
        return out
    for _, r in rows_of(test, (test.engine == "ddp") & (test.gpus == GPUS) & (test.nodes == 1) & (test.status == "ok")):
        if (r.engine == "ddp" and r.gpus == GPUS and r.nodes == 1 and r.status == "ok" and remedy_name(r) == "none"):
            out[int(r.batch_per_gpu)] = min(int(r.epochs), out.get(int(r.batch_per_gpu), int(r.epochs)))
    return out


def q7_text(a: Q7Answer) -> str:
    case = f"at a global batch of {a.global_batch} (the question's case, {a.batch} per GPU)"
    if a.okay:
        wrap = f": {bytes_text(a.run.init_bytes)}, test table" if a.run else ""
        # TA6 4, TA7 6: the Yes leads with its condition; the wrap-time broadcast is one way to meet it, sent once
        text = ("Yes, it is okay, given identical initial weights (one seed, or rank 0's sent by DDP once at the wrap, "
                f"not per step{wrap}) and the same averaged gradient on every rank: they stay identical on the "
                f"{a.gpus} GPUs {case}. Without the buffers' per-step broadcast BatchNorm's running statistics "
                "(buffers, not gradients) drift: each rank keeps its own, as Goyal et al. [4] do by design. Rank 0's, "
                "the broadcast's source, follow the same path either way, and each evaluation gives all ranks rank 0's "
                "(test table): the others' drift is never evaluated. ")
    else:
        text = (f"No, because {case} the test accuracy with gradients only is lower over repeats, by the verdict "
                "(below): a cost the weights' reasoning does not explain. ")
    at = f"batch {a.measured_batch} per GPU on {a.gpus} GPUs"
    few = a.images < SMALL_COUNT  # the count said beside an accuracy it limits (collect.render.accuracy's rule)
    other = "" if a.measured_batch == a.batch else ", not the question's case"
    if a.verdict and a.only and a.broadcast:
        text += (f"Measured at {at} ({a.epochs} epochs{other}): test accuracy {accuracy(a.only, a.images, few)} with "
                 f"gradients only against {accuracy(a.broadcast, a.images, count=False)} with the buffers broadcast "
                 f"({_word(a)}). ")
    elif a.only:
        text += (f"Measured at {at} ({a.epochs} epochs{other}): test accuracy {accuracy(a.only, a.images, few)} with "
                 "gradients only; no run "
                 "of that configuration with the buffers broadcast has one to hold it against. ")
    elif a.status:
        why = "its result has none" if a.status == "ok" else a.status
        text += f"The study's run with gradients only at {at} has no test accuracy ({why}): this is reasoning, not measured. "
    elif not a.gradients_only:
        text += "This is reasoning, not measured: the study has no run that communicates only the gradients. "
    text += _spread(a)
    if a.study_gpus < a.gpus:
        text += f"The question's case is {a.gpus} GPUs; this study's DDP runs use at most {a.study_gpus}. "
    if a.remedies:
        text += "The large batch's accuracy itself needs Goyal et al.'s remedies (Q4.2). "
    notes = list(a.notes) * (a.verdict is not None) + one_run_note(a.verdict)
    missing = [m for m in a.missing if m != NO_EVIDENCE]  # the paragraph says where it is reasoning
    first = [documentation_only(a.ddp_runs, UNRECORDED)] if a.documentation_only else []  # TA5 17: Q7's own
    return text.rstrip() + caveats(False, first + (missing if not (a.gradients_only or a.verdict) else []), notes)


def _word(a: Q7Answer) -> str:
    """The comparison's word: the verdict's over repeats; of one run a side no verdict (TA5 1, TA8 4), with the error
    the test images allow where the gap is inside it, else what the runs' seeds make of the gap and the spread of
    repeats of one configuration (TA7 3)."""
    v = a.verdict
    assert v is not None
    if not v.one_run:
        error = f"within the {v.threshold:.0f} points {int(a.images):,} test images allow" \
            if v.threshold > POINT else "not distinguishable"
        return says(v, Words("lower", "higher", error, "not clearly different"))
    digits = accuracy_digits(a.images)
    text = f"one run each, so no verdict: {abs(v.delta):.{digits}f} points apart"
    if a.inside_count:
        points = a.count_points
        return text + f", inside the ±{points:.{1 if points < 10 else 0}f} points {int(a.images):,} test images resolve"
    return text + _seeds_said(a) + _repeats_said(a, digits)


def _seeds_said(a: Q7Answer) -> str:
    """What the runs' seeds make of a gap of single runs (TA7 3) and what they leave unmeasured (TA8 1): from one seed
    the broadcast cannot explain it (rank 0 computes the same either way, and each evaluation gives all ranks rank
    0's statistics), and what can, the arithmetic's run-to-run nondeterminism, one run each does not measure; from two
    seeds, the seeds' spread as well."""
    if len(a.seeds) == 1:
        return (f"; both trained from seed {a.seeds[0]} (the same initial weights, data order and augmentation), and "
                "as above the broadcast changes neither rank 0's computation nor the statistics each evaluation uses, "
                "so it cannot explain the gap; run-to-run nondeterminism (floating-point sums in no fixed order) could, "
                "and one run each does not measure it")
    if a.seeds:
        return (f"; they trained from different seeds ({', '.join(map(str, a.seeds))}), so the gap holds the seeds' "
                "spread (other initial weights and data order)")
    return ""


def _repeats_said(a: Q7Answer, digits: int) -> str:
    """How far repeats of one compared configuration stray, where one has two or more runs; else that the study
    has no such pair (runs launched otherwise are not repeats: TA7 3)."""
    v, repeated = a.verdict, a.repeated
    assert v is not None
    if repeated is None:
        return "; neither configuration ran twice, so how far single runs of one configuration stray is not measured"
    side, m = repeated
    spread = 100 * (max(m.values) - min(m.values))
    inside = "within" if abs(v.delta) <= spread else "beyond, but still against a single run,"
    runs = ", ".join(percent(x, digits) for x in m.values)
    return f", {inside} the {spread:.{digits}f}-point spread of the {len(m.values)} runs {side} ({runs})"


def _spread(a: Q7Answer) -> str:
    off = a.gradients_only
    if not off:
        return _broadcast_spread(a.run)
    if off.bn_rank_spread != off.bn_rank_spread:  # NaN: not measured
        return ""
    text = (f"Measured with gradients only ({off.setup}, batch {off.batch}): the ranks' running variances differ by up "
            f"to {off.bn_rank_spread:.1%} of a layer's mean")
    v, span = a.bn_verdict, a.bn_span
    if v is None:
        return text + " (BN spread, test-accuracy table); no run of that configuration with the buffers broadcast " \
            "measured one to hold it against. "
    text = (f"Measured with gradients only ({off.setup}, batch {a.measured_batch}): the ranks' running variances differ "
            f"by up to {a.bn_only:.1%} of a layer's mean, against {a.bn_broadcast:.1%} with the buffers broadcast "
            "(BN spread, test-accuracy table)")
    if not v.one_run:
        word = says(v, Words("lower", "higher", "not distinguishable", "not clearly different"))
        return text + f": {word} by the verdict over {v.n_b} and {v.n_a} runs. "
    return text + (f": one run each, and the column ranges {span.low:.1%}-{span.high:.1%} over the test table's "
                   f"{span.rows} DDP rows with the buffers broadcast, so no comparison is drawn. ")


def _broadcast_spread(run: Optional[DDPRun]) -> str:
    """Where no run sent gradients only, what the DDP run's BN spread (with the buffers broadcast) shows and
    what it does not (TA4 15): rank 0's buffers reach every rank before each forward, so the spread after the
    last step is one step's per-rank batch statistics, not the drift of a run that never broadcasts them."""
    if run is None or run.bn_rank_spread != run.bn_rank_spread:  # NaN: not measured
        return ""
    return (f"What the study did measure ({run.setup}, batch {run.batch}, buffers broadcast): after the last step the "
            f"ranks' running variances differ by up to {run.bn_rank_spread:.1%} of a layer's mean (BN spread, "
            "test-accuracy table), as one step's per-rank batches leave them; it does not show how far they drift "
            "with gradients only, nor what that costs in accuracy. ")
