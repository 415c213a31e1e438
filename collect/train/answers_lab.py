"""The multi-GPU lab's questions as records and paragraphs, from the test-accuracy table, the sweep
and the cells' timed epochs: GPU utilization and how to raise it; the time of a full run; test
accuracy and time on 1, 2, 4 GPUs and 2 nodes with the scaling efficiency and the bottleneck; the
batch size and learning rate with more workers; the best accuracy with 2 workers (nodes)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Optional


import collect.train.formulas as f
from collect.evidence import Measured
from collect.questions import Record, Tables, Words, against, one_run_note, says
from collect.train.answers_common import SYNTHETIC, caveats, cited, figure, pct, rows_of, secs, where
from collect.train.grids import lr_rule, setup_name
from collect.train.labels import Namer, missing_reason, present
from collect.verdict import Verdict

DATA_BOUND = 0.3  # data wait at least this share of the timed epoch: the loader is the bottleneck
COMM_BOUND = 0.3  # exposed communication at least this share: the all-reduce is


def lab(tables: Tables) -> bool:
    """The study asks the lab's questions: no 1-GPU timing runs of Part A (Q1), and runs with test figures."""
    return not len(tables["q1"]) and bool(len(tables["test"]))


def _plain_rows(tables: Tables) -> tuple[Namer, list[tuple[int, Any]]]:
    """The test table's runs of the lab's main grid: no warmup, the study's LR rule on 1/2/4 GPUs and 2 nodes."""
    test = tables["test"].reset_index(drop=True)
    namer = Namer(test, "test", {"lr", "lr_scaling", "lr_ref_batch", "warmup_epochs", "sync_bn", "epochs", "timed_epoch"})
    rows = [(i, r) for i, r in rows_of(test) if not r.warmup_epochs and not bool(r.sync_bn)]
    main = [(i, r) for i, r in rows if r.engine == "single" or r.lr_scaling == "linear"] or rows
    return namer, main


@dataclass(frozen=True)
class Util:
    setup: str
    batch: int
    util_pct: float


class UtilBecause(StrEnum):
    DATA = "data"  # the loader: data wait a large share of the epoch
    SMALL_BATCH = "small_batch"
    HIGH = "high"
    UNSAMPLED = "unsampled"


@dataclass(frozen=True)
class UtilAnswer(Record):
    device: str
    cpu: bool
    utils: tuple[Util, ...]
    data_share: float  # data wait / epoch of the 1-GPU timed epoch
    because: UtilBecause


def _timed(tables: Tables, r: Any) -> Optional[Any]:
    """The first ok cell of a configuration in the cells' frame (its timed epoch's breakdown)."""
    cells = tables["train_cells"]
    same = cells[(cells.engine == r.engine) & (cells.nodes == r.nodes) & (cells.gpus_per_node == r.gpus_per_node)
                 & (cells.batch_per_gpu == r.batch_per_gpu) & (cells.lr_scaling == r.lr_scaling)
                 & (cells.warmup_epochs == r.warmup_epochs) & (cells.status == "ok")]
    return next(same.itertuples(index=False), None)


def util_answer(tables: Tables) -> Optional[UtilAnswer]:
    if not lab(tables):
        return None
    namer, rows = _plain_rows(tables)
    ok = [(i, r) for i, r in rows if r.status == "ok"]
    utils = tuple(Util(setup_name(r), int(r.batch_per_gpu), float(r.gpu_util_median_pct)) for _, r in ok)
    one = next((r for _, r in ok if r.engine == "single"), None)
    cell = _timed(tables, one) if one is not None else None
    share = (cell.timed_data_wait_s / cell.timed_epoch_s if cell is not None and present(cell.timed_data_wait_s)
             and cell.timed_epoch_s > 0 else float("nan"))
    sampled = [u.util_pct for u in utils if present(u.util_pct)]
    because = (UtilBecause.UNSAMPLED if not sampled else UtilBecause.DATA if present(share) and share >= DATA_BOUND
               else UtilBecause.HIGH if min(sampled) >= 90 else UtilBecause.SMALL_BATCH)
    device, cpu = where(r.gpu_model for _, r in ok)
    return UtilAnswer(cited(namer, ok[:6]), (), device, cpu, utils, share, because)


def util_text(a: UtilAnswer) -> str:
    shown = [f"{u.setup} {u.util_pct:.0f}%" for u in a.utils if present(u.util_pct)]
    text = (f"GPU utilization (median over the timed epoch, NVML) at batch {a.utils[0].batch} per GPU on {a.device}: "
            + "; ".join(shown) + "." if shown else f"GPU utilization was not sampled on {a.device} (no GPU).")
    text += {UtilBecause.DATA: f" The loader is the bottleneck: the 1-GPU epoch waits on data for {a.data_share:.0%} of "
                               "its time, so raise utilization with more loader workers or data kept on the GPU, then a "
                               "larger batch per GPU.",
             UtilBecause.SMALL_BATCH: " Raise it with a larger batch per GPU (more work per kernel launch, fewer steps), "
                                      "more loader workers, or mixed precision with data kept on the GPU.",
             UtilBecause.HIGH: " The GPU is already busy; a larger batch would add little.",
             UtilBecause.UNSAMPLED: ""}[a.because]
    return text + caveats(a.cpu, a.missing)


@dataclass(frozen=True)
class FullRun:
    setup: str
    epochs: int
    time: Measured


@dataclass(frozen=True)
class FullRunAnswer(Record):
    device: str
    cpu: bool
    runs: tuple[FullRun, ...]


def full_run_answer(tables: Tables) -> Optional[FullRunAnswer]:
    if not lab(tables):
        return None
    namer, rows = _plain_rows(tables)
    ok = [(i, r) for i, r in rows if figure(r, "time_to_train_s")]
    device, cpu = where(r.gpu_model for _, r in ok)
    runs = tuple(FullRun(setup_name(r), int(r.epochs), figure(r, "time_to_train_s")) for _, r in ok)  # type: ignore[arg-type]
    missing = tuple(f"{namer.name(r)} ({missing_reason(r)})" for _, r in rows if r.status != "ok")
    return FullRunAnswer(cited(namer, ok[:6]), missing, device, cpu, runs)


def full_run_text(a: FullRunAnswer) -> str:
    if not a.runs:
        return "No run has finished yet." + caveats(a.cpu, a.missing)
    one = a.runs[0]
    text = (f"A full run of {one.epochs} epochs on {one.setup} takes {secs(one.time)} on {a.device} (every epoch's time "
            "summed, data loading included, the test evaluation after each epoch not).")
    if len(a.runs) > 1:
        text += " " + "; ".join(f"{r.setup}: {secs(r.time)}" for r in a.runs[1:]) + "."
    return text + caveats(a.cpu, a.missing)


@dataclass(frozen=True)
class Scaled:
    setup: str
    gpus: int
    accuracy: Optional[Measured]
    time: Measured
    speedup: float
    efficiency: float
    faster: Optional[Verdict]  # its time against 1 GPU's
    data_share: float
    comm_share: float


@dataclass(frozen=True)
class ScalingAnswer(Record):
    device: str
    cpu: bool
    synthetic: bool
    runs: tuple[Scaled, ...]
    bottleneck: str  # "data loading", "communication", "compute" (of the least efficient run), or ""


def scaling_answer(tables: Tables) -> Optional[ScalingAnswer]:
    if not lab(tables):
        return None
    namer, rows = _plain_rows(tables)
    ok = [(i, r) for i, r in rows if figure(r, "time_to_train_s")]
    one = next((r for _, r in ok if r.engine == "single"), None)
    runs = []
    for _, r in ok:
        time = figure(r, "time_to_train_s")
        cell = _timed(tables, r)
        runs.append(Scaled(setup_name(r), int(r.gpus), figure(r, "test_accuracy"), time, float(r.speedup),  # type: ignore[arg-type]
                           f.efficiency(r.speedup, r.gpus), against(time, figure(one, "time_to_train_s"))  # type: ignore[arg-type]
                           if one is not None and r.engine != "single" else None,
                           _share(cell, "timed_data_wait_s"), _share(cell, "timed_comm_exposed_s")))
    multi = [s for s in runs if s.gpus > 1 and present(s.efficiency)]
    worst = min(multi, key=lambda s: s.efficiency, default=None)
    bottleneck = "" if worst is None else ("data loading" if present(worst.data_share) and worst.data_share >= DATA_BOUND
                                           else "communication" if present(worst.comm_share) and worst.comm_share >= COMM_BOUND
                                           else "compute")
    device, cpu = where(r.gpu_model for _, r in ok)
    missing = tuple(f"{namer.name(r)} ({missing_reason(r)})" for _, r in rows if r.status != "ok")
    return ScalingAnswer(cited(namer, ok[:6]), missing, device, cpu, any(r.dataset == "synthetic" for _, r in ok),
                         tuple(runs), bottleneck)


def _share(cell: Optional[Any], column: str) -> float:
    """A part of the cell's timed epoch as a share of it (NaN where not measured)."""
    if cell is None or not present(getattr(cell, column)) or not cell.timed_epoch_s > 0:
        return float("nan")
    return float(getattr(cell, column) / cell.timed_epoch_s)


def scaling_text(a: ScalingAnswer) -> str:
    items = []
    for s in a.runs:
        acc = pct(s.accuracy) if s.accuracy else "not recorded"
        item = f"{s.setup}: test accuracy {acc}, {secs(s.time)}"
        if s.gpus > 1 and present(s.speedup):
            how = says(s.faster, Words("faster", "slower", "no faster", "not clearly faster")) if s.faster else ""
            item += f", speedup {s.speedup:.2f}x ({how}), scaling efficiency {s.efficiency:.0%}"
        items.append(item)
    text = f"On {a.device}: " + "; ".join(items) + "." if items else "No run has finished yet."
    worst = min((s for s in a.runs if s.gpus > 1 and present(s.efficiency)), key=lambda s: s.efficiency, default=None)
    if worst and a.bottleneck:
        why = {"data loading": f"its timed epoch waits on data {worst.data_share:.0%} of the time",
               "communication": f"its exposed all-reduce is {worst.comm_share:.0%} of the timed epoch",
               "compute": "neither data wait nor exposed communication is a large share of its epoch"}[a.bottleneck]
        text += f" The bottleneck of the least efficient, {worst.setup}, is {a.bottleneck}: {why}."
    return text + caveats(a.cpu, a.missing, [SYNTHETIC] * a.synthetic + one_run_note(*(s.faster for s in a.runs)))


@dataclass(frozen=True)
class WorkersRun:
    setup: str
    global_batch: int
    lr_rule: str
    accuracy: Optional[Measured]


@dataclass(frozen=True)
class WorkersAnswer(Record):
    synthetic: bool
    cpu: bool
    batch_per_gpu: int
    runs: tuple[WorkersRun, ...]


def workers_answer(tables: Tables) -> Optional[WorkersAnswer]:
    if not lab(tables):
        return None
    test = tables["test"].reset_index(drop=True)
    namer = Namer(test, "test", {"lr", "lr_scaling", "lr_ref_batch", "warmup_epochs", "sync_bn", "epochs", "timed_epoch"})
    rows = [(i, r) for i, r in rows_of(test) if r.nodes > 1 and not r.warmup_epochs and r.status == "ok"]
    if not rows:
        return WorkersAnswer((), ("no run on 2 nodes: add nodes = 2",), False, False, 0, ())
    _, cpu = where(r.gpu_model for _, r in rows)
    runs = tuple(WorkersRun(setup_name(r), int(r.global_batch), lr_rule(r), figure(r, "test_accuracy")) for _, r in rows)
    return WorkersAnswer(cited(namer, rows), (), any(r.dataset == "synthetic" for _, r in rows), cpu,
                         int(rows[0][1].batch_per_gpu), runs)


def workers_text(a: WorkersAnswer) -> str:
    if not a.runs:
        return "No run on more than one node." + caveats(a.cpu, a.missing)
    r = a.runs[0]
    text = (f"With more workers the batch per GPU stays {a.batch_per_gpu}, so the global batch grows with them: "
            f"{r.global_batch} on {r.setup}. The learning rate must grow with it (Goyal et al.'s linear rule, lr x global "
            "batch / 128, with warmup) to keep the accuracy: ")
    text += "; ".join(f"LR {w.lr_rule}: test accuracy {pct(w.accuracy) if w.accuracy else 'not recorded'}" for w in a.runs)
    return text + "." + caveats(a.cpu, a.missing, [SYNTHETIC] * a.synthetic)


@dataclass(frozen=True)
class BestAnswer(Record):
    synthetic: bool
    setup: str
    best: str  # its configuration
    accuracy: Optional[Measured]
    runner_up: str
    runner_accuracy: Optional[Measured]
    verdict: Optional[Verdict]  # the runner-up against the best


def best_answer(tables: Tables) -> Optional[BestAnswer]:
    if not lab(tables):
        return None
    sweep = tables["sweep"].reset_index(drop=True)
    two = sweep[(sweep.nodes > 1) & (sweep.status == "ok") & sweep.test_accuracy.notna()] if len(sweep) else sweep
    if not len(two):
        return BestAnswer((), ("no run on 2 nodes with test accuracy",), False, "", "", None, "", None, None)
    ranked = two.sort_values("test_accuracy", ascending=False)
    rows = list(ranked.itertuples())
    best = rows[0]
    second = rows[1] if len(rows) > 1 else None
    a, b = Measured.of(best, "test_accuracy"), Measured.of(second, "test_accuracy") if second is not None else None
    from collect.evidence import Evidence
    evidence = tuple(Evidence("sweep", int(r.Index), lr_rule(r)) for r in rows[:2])
    return BestAnswer(evidence, (), bool((two.dataset == "synthetic").any()), setup_name(best), lr_rule(best), a,
                      lr_rule(second) if second is not None else "", b, against(b, a) if b else None)


def best_text(a: BestAnswer) -> str:
    if a.accuracy is None:
        return "No run on 2 nodes has a test accuracy yet." + caveats(False, a.missing)
    text = f"The best test accuracy on {a.setup} is {pct(a.accuracy)}, with LR {a.best}."
    if a.verdict and a.runner_accuracy:
        text += " The next, LR " + a.runner_up + f" at {pct(a.runner_accuracy)}, is " + says(a.verdict, Words(
            "lower", "higher", "not distinguishable from it", "not clearly lower: more repeats would tell")) + "."
    return text + caveats(False, a.missing, [SYNTHETIC] * a.synthetic + one_run_note(a.verdict))
