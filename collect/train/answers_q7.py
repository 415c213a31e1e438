"""Part A Q7 as a record and a paragraph: would communicating only the gradients suffice for batch
512 per GPU on 4 GPUs? Read from the study's gradients-only cell (broadcast_buffers off): its test
accuracy against the same configuration with the buffers broadcast (the verdict chooses yes or no),
and the ranks' BatchNorm spread the DDP runs measured; where the study has no such cell, the
reasoning and the cell to add beside a DDP run the study has on 4 GPUs (the question's batch where
it ran, else its largest)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from collect.evidence import Measured
from collect.questions import Tables, Words, against, one_run_note, says
from collect.train.answers_common import SYNTHETIC, caveats, figure, part_a, pct, rows_of
from collect.train.answers_large import DDPAnswer, _ddp_runs, ddp_answer
from collect.train.grids import remedy_name
from collect.train.labels import missing_reason
from collect.train.tables import CONFIG, Q4_EPOCH, largest_fitting_batch
from collect.verdict import Verdict

GPUS, BATCH = 4, 512  # the question's case: batch 512 per GPU on 4 GPUs


@dataclass(frozen=True)
class Q7Answer(DDPAnswer):
    batch: Optional[int]  # per GPU: the gradients-only cell's on 4 GPUs, else BATCH where a DDP run on 4 GPUs
    # has it, else the largest such run's, else Q1's largest that fit (None: none ran)
    gpus: int
    global_batch: Optional[int]
    epochs: int  # the gradients-only cell's, else the DDP run's at `batch` it would sit beside
    beside: bool  # the study has a DDP run with the buffers broadcast at `batch` on 4 GPUs
    status: str  # the gradients-only cell's ("ok", "failed", ...); "" where the study has none
    synthetic: bool
    only: Optional[Measured]  # its test accuracy after the last epoch
    broadcast: Optional[Measured]  # the same configuration's with the buffers broadcast
    verdict: Optional[Verdict]  # only against broadcast


def _gradients_only(tables: Tables) -> tuple[Optional[Any], Optional[Any]]:
    """The study's gradients-only DDP cell on 4 GPUs (the first, by the test table's order) and its
    partner: the configuration that differs only in broadcasting the buffers."""
    test = tables.get("test")
    if test is None or "broadcast_buffers" not in test:
        return None, None
    on, ddp4 = test.broadcast_buffers.astype(bool), (test.engine == "ddp") & (test.gpus == GPUS)
    only = next((r for _, r in rows_of(test, ddp4 & ~on)
                 if r.engine == "ddp" and r.gpus == GPUS and not bool(r.broadcast_buffers)), None)
    if only is None:
        return None, None
    same = [c for c in CONFIG if c != "broadcast_buffers"]
    alike = on & (test.engine == only.engine) & (test.gpus == only.gpus) & (test.batch_per_gpu == only.batch_per_gpu)
    partner = next((r for _, r in rows_of(test, alike)
                    if bool(r.broadcast_buffers) and all(getattr(r, c) == getattr(only, c) for c in same)), None)
    return only, partner


def q7_answer(tables: Tables) -> Optional[Q7Answer]:
    if not part_a(tables):
        return None
    only, partner = _gradients_only(tables)
    runs, _ = _ddp_runs(tables)
    off = [r.batch_per_gpu for _, r in runs if not bool(r.ddp_broadcast_buffers) and r.gpus == GPUS]
    ddp = _ddp_on_4(tables)
    batch = (only.batch_per_gpu if only is not None else off[0] if off else BATCH if BATCH in ddp
             else max(ddp, default=None) or largest_fitting_batch(tables["q1"]))
    epochs = int(only.epochs) if only is not None else ddp.get(int(batch), Q4_EPOCH) if batch is not None else Q4_EPOCH
    a = ddp_answer(tables, prefer_batch=batch)
    assert a is not None  # part_a holds
    acc, base = figure(only, "test_accuracy"), figure(partner, "test_accuracy")
    v = against(acc, base) if acc and base else None
    status = "" if only is None else str(only.status) if only.status != "failed" else missing_reason(only)
    synthetic = only is not None and only.dataset == "synthetic"
    b = None if batch is None else int(batch)
    return Q7Answer(a.evidence, a.missing, a.run, a.gradients_only, b, GPUS, None if b is None else b * GPUS, epochs,
                    batch in ddp, status, synthetic, acc, base, v)


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
    text = (f"Communicating only the gradients keeps the weights identical on the {a.gpus} GPUs (each applies the same "
            "averaged update), but not BatchNorm's running statistics: each rank's drift apart, and evaluation uses "
            "rank 0's. ")
    at = f"batch {a.batch} per GPU on {a.gpus} GPUs" if a.batch else f"the largest batch that fits on {a.gpus} GPUs"
    if a.verdict and a.only and a.broadcast:
        word = says(a.verdict, Words("lower", "higher", "not distinguishable", "not clearly different"))
        text += (f"Measured at {at} ({a.epochs} epochs): test accuracy {pct(a.only)} with gradients only against "
                 f"{pct(a.broadcast)} with the buffers broadcast ({word}). ")
    elif a.only:
        text += (f"Measured at {at} ({a.epochs} epochs): test accuracy {pct(a.only)} with gradients only; no run of "
                 "that configuration with the buffers broadcast has one to hold it against. ")
    elif a.status:
        why = "its result has none" if a.status == "ok" else a.status
        text += f"The study's gradients-only cell at {at} has no test accuracy ({why}). "
    elif not _spread(a):
        beside = f", {a.epochs} epochs, beside the study's run of it" if a.beside else ""
        text += f"No run measured it: add a DDP cell with broadcast_buffers = false at {at}{beside}. "
    text += _spread(a)
    glob = f"at a global batch of {a.global_batch}" if a.global_batch else "at a large global batch"
    lower = a.verdict is not None and says(a.verdict, Words("lower", "-", "-", "-")) == "lower"
    if a.verdict is not None and not lower:
        text += (f"So yes for the weights {glob}: rank 0's own statistics evaluated as well here; keep the buffer "
                 "broadcast (or SyncBatchNorm) wherever another rank's statistics are used.")
    else:
        text += (f"So no, not sufficient {glob}: keep the buffer broadcast or use SyncBatchNorm; the large batch's "
                 "accuracy also needs Goyal et al.'s remedies, which Q4.2 measures.")
    notes = [SYNTHETIC] * (a.synthetic and a.verdict is not None) + one_run_note(a.verdict)
    return text + caveats(False, a.missing if not (a.gradients_only or a.verdict) else (), notes)


def _spread(a: Q7Answer) -> str:
    off = a.gradients_only
    if not off or off.bn_rank_spread != off.bn_rank_spread:  # NaN: not measured
        return ""
    text = (f"Measured with gradients only ({off.setup}, batch {off.batch}): the ranks' running variances differ by up "
            f"to {off.bn_rank_spread:.1%} of a layer's mean")
    if a.run and a.run.bn_rank_spread == a.run.bn_rank_spread:
        text += f", against {a.run.bn_rank_spread:.1%} with the buffers broadcast"
    return text + ". "
