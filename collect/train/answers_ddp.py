"""Part A Q5 and Q6 (and Q7's base, collect.train.answers_q7) from what the DDP runs measured
(jobs.train.result.DDPEvidence): the sampler's orders with and without set_epoch, and the bytes DDP
sends besides the gradients; where no run measured them, the reasoning from PyTorch's documentation."""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Optional

import pandas as pd

from collect.evidence import Evidence
from collect.questions import Record, Tables
from collect.train.answers_common import caveats, part_a, rows_of
from collect.train.labels import present
from collect.train.tables import CONFIG, on_cpu
from jobs.core.bandwidth import bytes_text


CHANCE_QUANTILE = 0.999  # a count of repeated places up to this quantile of chance's is "at chance"


@dataclass(frozen=True)
class SamePosition:
    """The places in a rank's order that hold the same sample in epochs 1 and 2 (TA5 15), said as a count (a share
    printed 0.0% may be 1 of 12,500; quick's 1.6% is 1 of 64 places, not a share of a sample: TA7 10), pooled over
    the configuration's runs, and what chance gives: two independent reshuffles put a sample back at its place with
    probability about 1 / images, so `places` places repeat about places / images times."""

    share: float  # the pooled share: repeated places / places (the mean of the runs' shares)
    rank_samples: int  # a rank's places a run: ceil(images / ranks) (DistributedSampler pads); 0: unknown
    images: int  # 0: unknown
    runs: int = 1  # the runs pooled

    @property
    def places(self) -> int:
        return self.rank_samples * self.runs

    @property
    def count(self) -> Optional[int]:
        """The places that repeat, where the share is a whole count of them (a median of runs may not be)."""
        if not self.rank_samples:
            return None
        n = self.share * self.places
        return round(n) if abs(n - round(n)) < 1e-6 else None

    @property
    def expected(self) -> float:
        """The repeats chance gives: places / images (NaN: unknown)."""
        return self.places / self.images if self.images else math.nan

    @property
    def at_chance(self) -> bool:
        """The repeats are no more than chance gives: at most CHANCE_QUANTILE's count of a Poisson(expected)."""
        if not self.images or self.share >= 1:
            return False
        return self.share * self.places <= poisson_quantile(self.expected, CHANCE_QUANTILE)


def poisson_quantile(mean: float, q: float) -> int:
    """The least k with P(X <= k) >= q for X ~ Poisson(mean)."""
    k, term = 0, math.exp(-mean)
    total = term
    while total < q:
        k += 1
        term *= mean / k
        total += term
    return k


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
    train_images: int = 0  # the data set's: what a reshuffle draws from (0: unknown)
    overlaps_with: tuple[float, ...] = ()  # overlap_with of each ok run of the configuration (its repeats)

    @property
    def with_set_epoch(self) -> SamePosition:
        """The runs' repeated places pooled (the printed median where the runs are unknown)."""
        shares = self.overlaps_with or (self.overlap_with,)
        return SamePosition(sum(shares) / len(shares), math.ceil(self.train_images / self.gpus) if self.train_images
                            else 0, self.train_images, len(shares))


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


def _setup(r: Any) -> str:
    """Where the run ran: "4 GPUs", "2 nodes x 2 GPUs"; on a CPU its ranks are processes (TA3 22)."""
    if on_cpu(r.gpu_model):
        return f"{r.gpus} processes on a CPU (gloo, no GPU)"
    return f"{r.gpus} GPUs" if r.nodes == 1 else f"{r.nodes} nodes x {r.gpus_per_node} GPUs"


def _ddp(r: Any, printed: Any) -> DDPRun:
    """The run's DDPRun, its figures the test table's row of its configuration (`printed`: the median over the
    configuration's runs, as the table prints it; TA3 2), else the run's own."""
    p = r if printed is None else printed
    return DDPRun(_setup(r), int(r.batch_per_gpu),
                  int(r.gpus), float(p.ddp_grad_bytes), float(p.ddp_buffer_bytes), float(p.ddp_init_bytes),
                  bool(r.ddp_broadcast_buffers), float(r.ddp_steps_per_epoch), float(p.ddp_order_overlap_without_set_epoch),
                  float(p.ddp_order_overlap_with_set_epoch), float(p.ddp_bn_rank_spread),
                  int(r.train_images) if present(getattr(r, "train_images", None)) else 0)


@dataclass(frozen=True)
class DDPAnswer(Record):
    run: Optional[DDPRun]  # the run whose numbers the answer reads
    gradients_only: Optional[DDPRun]  # Q7: a run with broadcast_buffers off
    documentation_only: bool = field(default=False, kw_only=True)  # no run measured it: the paragraph says so first
    ddp_runs: int = field(default=0, kw_only=True)  # the study's DDP runs that ended ok, evidence or not

    @property
    def reshuffles(self) -> bool:
        """The run's own overlaps show set_epoch changing the order: fewer positions repeat with it."""
        return self.run is not None and self.run.overlap_with < self.run.overlap_without


def _test_row(tables: Tables, r: Any) -> Optional[tuple[int, Any]]:
    """The test table's row of the run's configuration (its position and the row), or None."""
    test = tables.get("test")
    if test is None or not len(test):
        return None
    test = test.reset_index(drop=True)
    same = (test.engine == r.engine) & (test.gpus == r.gpus) & (test.batch_per_gpu == r.batch_per_gpu)
    return next(((i, t) for i, t in rows_of(test, same) if all(getattr(t, c) == getattr(r, c) for c in CONFIG)), None)


def _cells_evidence(tables: Tables, rows: list[tuple[int, Any]]) -> tuple:
    """The test table's row of each run's configuration (its result file, named by cell id, holds the
    DDP evidence the answer quotes)."""
    out = []
    for _, r in rows:
        if (found := _test_row(tables, r)) is not None:
            out.append(Evidence("test", found[0], f"{r.gpus} GPUs, {r.engine}, batch {r.batch_per_gpu} (result {r.cell_id})"))
    return tuple(out)


def _run(tables: Tables, r: Any) -> DDPRun:
    found = _test_row(tables, r)
    run = _ddp(r, found[1] if found is not None and present(found[1].ddp_grad_bytes) else None)
    shares = tuple(float(x.ddp_order_overlap_with_set_epoch) for x in runs_of(tables, r)
                   if present(x.ddp_order_overlap_with_set_epoch))
    return dataclasses.replace(run, overlaps_with=shares)


def runs_of(tables: Tables, r: Any) -> list[Any]:
    """The study's ok runs (train_cells rows) of r's configuration: every CONFIG field the same (a field neither
    sets, NaN, the same), differing only in repeat."""
    frame = tables.get("train_cells")
    if frame is None or not len(frame):
        return []
    mask = (frame.status == "ok") & (frame.engine == r.engine) & (frame.gpus == r.gpus) & \
        (frame.batch_per_gpu == r.batch_per_gpu)
    return [x for _, x in rows_of(frame, mask) if all(same_value(getattr(x, c), getattr(r, c)) for c in CONFIG)]


def same_value(a: Any, b: Any) -> bool:
    return bool(a == b) or (not present(a) and not present(b))  # a field neither sets (NaN) is the same


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
    return DDPAnswer(_cells_evidence(tables, used), missing, _run(tables, main[1]) if main else None,
                     _run(tables, off[1]) if off else None, to_add=() if runs else (RERUN,), documentation_only=not runs,
                     ddp_runs=_ran(tables))


def _ran(tables: Tables) -> int:
    """The study's DDP runs that ended ok (results without DDP's evidence included)."""
    frame = tables.get("train_cells")
    return 0 if frame is None or not len(frame) else int(((frame.engine == "ddp") & (frame.status == "ok")).sum())


NO_EVIDENCE = "the runs did not record what DDP did, so this answer comes from PyTorch's documentation"


SAMPLER_AND_BYTES = "the bytes or the sampler order"  # what Q5 and Q6 need a run to record


def documentation_only(ddp_runs: int, unrecorded: str = SAMPLER_AND_BYTES) -> str:
    """What was not recorded (`unrecorded`: what the question needs), where the answer rests on PyTorch's
    documentation: "no DDP run" only where none ran."""
    if not ddp_runs:
        return "from PyTorch's documentation alone: the study has no DDP run"
    runs = "DDP run" if ddp_runs == 1 else f"{ddp_runs} DDP runs"
    # plain words (TA2 18): what a run would have had to measure, not the tool's record names
    # TA3 21: Q5 needs the sampler's order per rank, not images per GPU
    return f"from PyTorch's documentation alone: this set's {runs} did not record {unrecorded}"


def documented(a: DDPAnswer, text: str) -> str:
    """The paragraph as the assignment's form opens it ("Yes, ...", "No, ..."); where no run measured it,
    its first note says so (documentation_only(), in _caveats): not to be handed in as measured."""
    return text


def _caveats(a: DDPAnswer) -> str:
    """The answer's caveats, documentation_only() first (in place of NO_EVIDENCE) where no run measured it."""
    if not a.documentation_only:
        return caveats(False, a.missing)
    return caveats(False, [documentation_only(a.ddp_runs), *(m for m in a.missing if m != NO_EVIDENCE)])
RERUN = "a rerun of a DDP cell (its result predates the DDP evidence jobs record)"


def q5_text(a: DDPAnswer) -> str:
    text = ("One needs to set the epoch because DistributedSampler draws one permutation of the whole data set from a "
            "generator seeded by seed + epoch, then gives each rank every N-th sample of it: without "
            "set_epoch(epoch) every epoch draws the same permutation, so each rank gets the same samples in the same "
            "order every epoch; with it, both the order and which samples a rank gets change. It does not "
            "synchronize the processes (DDP's all-reduce does).")
    if a.run and a.reshuffles:
        text += f" Measured on {a.run.setup} at batch {a.run.batch} (test table, same position): " + _orders(a.run) + "."
    elif a.run:
        text += (f" The run on {a.run.setup} at batch {a.run.batch} does not show it ({_orders(a.run)}), so it is not "
                 "cited as a measurement.")
    return documented(a, text) + _caveats(a)


def _orders(r: DDPRun) -> str:
    """What the run's sampler orders show, epoch 2 against epoch 1, in a student's words."""
    if r.overlap_without >= 1:
        without = "without set_epoch each rank receives exactly the same samples in the same order in epoch 2 as in epoch 1"
    else:
        without = (f"without set_epoch {r.overlap_without:.1%} of a rank's samples come at the same position in its "
                   "order in both epochs")
    return f"{without}; with it, {_same_said(r.with_set_epoch)}"


def _same_said(s: SamePosition) -> str:
    """The places with set_epoch as their count ("none of a rank's 12,500 samples"; over 2 runs, "1 of a rank's 64
    samples (32 a run)"), the share only where the runs are unknown, and at chance or not."""
    count = s.count
    over = f"over its {s.runs} runs, " if s.runs > 1 else ""
    a_run = f" ({s.rank_samples:,} a run)" if s.runs > 1 else ""
    if count is None:
        said = f"{s.share:.1%} of a rank's samples come"
    else:
        said = f"{over}{'none' if count == 0 else f'{count:,}'} of a rank's {s.places:,} samples{a_run} " \
               f"{'comes' if count == 1 else 'come'}"
    said += " at the same position in its order in both epochs"
    if not s.images:
        return said
    chance = (f"about {s.expected:.2g} expected: a reshuffle puts a sample back at its place with probability about 1 "
              f"in the {s.images:,} images")
    return said + (f", the chance level ({chance})" if s.at_chance else f", more than chance gives ({chance})")


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
        text = (f"No, the parameters and buffers are also communicated. Measured on {r.setup} at batch {r.batch} (test "
                f"table, its DDP columns): each "
                f"step all-reduces {bytes_text(r.grad_bytes)} of gradients; besides them, {per_step}, and "
                f"{bytes_text(r.init_bytes)} of parameters and buffers broadcast once when DDP wraps the model. From "
                "PyTorch's documentation (not measured): ")
        params = f"the {bytes_text(r.init_bytes)} of parameters and buffers"
    return documented(a, text + f"DataParallel, the homework's other engine, copies {params} from GPU 0 to every other "
                      "GPU on every forward, scatters the inputs and gathers the outputs, and in the backward sums "
                      "every GPU's gradients onto GPU 0. Neither averages BatchNorm's statistics: SyncBatchNorm would "
                      "synchronise each batch's mean and variance across ranks in the forward, and the running "
                      "statistics would then agree as a result.") + _caveats(a)
