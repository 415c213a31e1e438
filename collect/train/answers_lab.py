"""The multi-GPU lab's questions as records and paragraphs, from the test-accuracy table, the sweep
and the cells' timed epochs: GPU utilization and how to raise it; the time of a full run; test
accuracy and time on 1, 2, 4 GPUs and 2 nodes with the scaling efficiency and the bottleneck; the
batch size and learning rate with more workers; the best accuracy with 2 workers (nodes)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Optional

import collect.train.formulas as f
from collect.evidence import Evidence, Measured, listing
from collect.questions import Record, Tables, Words, against, one_run_note, says
from collect.train.answers_common import (LOADER_WAIT, accuracy, caveats, cited, figure, points_against, rows_of, secs,
                                          setting_notes, where)
from collect.train.grids import lr_rule, setup_name
from collect.train.lab_epoch import share, timed_cell
from collect.train.labels import Namer, missing_reason, present
from collect.train.tables import T1_KEYS
from collect.verdict import Difference, Verdict, leaning

DATA_BOUND = 0.3  # data wait at least this share of the timed epoch: the loader is the bottleneck
COMM_BOUND = 0.3  # exposed communication at least this share: the all-reduce is
NOT_COMPUTE = 0.3  # data wait and exposed communication together at least this share: compute is not the bottleneck


def _t1_key(row: Any) -> tuple:
    """What a run shares with its 1-GPU baseline (collect.train.tables.T1_KEYS: the speedup column's pairing)."""
    return tuple(getattr(row, k) for k in T1_KEYS)


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
    notes: tuple[str, ...] = ()
    batches: tuple[int, ...] = ()  # the batch sizes per GPU measured: with one, no change with the batch is shown
    # each setup measured at two batch sizes or more: (setup, smallest batch, its util, largest batch, its util)
    by_batch: tuple[tuple[str, int, float, int, float], ...] = ()


UTIL_BAND = 5.0  # points of utilization within which a change with the batch is "about level"


def _epochs_cited(tables: Tables, cells: list[Optional[Any]]) -> tuple[Evidence, ...]:
    """The rows of the lab's epoch table (collect.train.lab_epoch) that hold the quoted runs' shares."""
    ids = {c.cell_id for c in cells if c is not None}
    table = tables.get("lab_epoch")
    return () if table is None else tuple(Evidence("lab_epoch", i, setup_name(r))
                                          for i, r in enumerate(table.itertuples(index=False)) if r.cell_id in ids)


def util_answer(tables: Tables) -> Optional[UtilAnswer]:
    if not lab(tables):
        return None
    namer, rows = _plain_rows(tables)
    ok = [(i, r) for i, r in rows if r.status == "ok"]
    utils = tuple(Util(setup_name(r), int(r.batch_per_gpu), float(r.gpu_util_pct)) for _, r in ok)
    one = next((r for _, r in ok if r.engine == "single"), None)
    cell = timed_cell(tables["train_cells"], one) if one is not None else None
    share = (cell.timed_data_wait_s / cell.timed_epoch_s if cell is not None and present(cell.timed_data_wait_s)
             and cell.timed_epoch_s > 0 else float("nan"))
    sampled = [u.util_pct for u in utils if present(u.util_pct)]
    because = (UtilBecause.UNSAMPLED if not sampled else UtilBecause.DATA if present(share) and share >= DATA_BOUND
               else UtilBecause.HIGH if min(sampled) >= 90 else UtilBecause.SMALL_BATCH)
    device, cpu = where(r.gpu_model for _, r in ok)
    return UtilAnswer(cited(namer, ok[:6]) + _epochs_cited(tables, [cell]), (), device, cpu, utils, share, because,
                      setting_notes(tables.get("train_cells"), (r for _, r in ok[:6]), False),
                      tuple(sorted({u.batch for u in utils})), _by_batch(utils))


def _by_batch(utils: tuple[Util, ...]) -> tuple[tuple[str, int, float, int, float], ...]:
    out = []
    for setup in dict.fromkeys(u.setup for u in utils):
        some = sorted((u for u in utils if u.setup == setup and present(u.util_pct)), key=lambda u: u.batch)
        if len({u.batch for u in some}) > 1:
            out.append((setup, some[0].batch, some[0].util_pct, some[-1].batch, some[-1].util_pct))
    return tuple(out)


def _util_change(lo: float, hi: float) -> str:
    return ("rises" if hi - lo > UTIL_BAND else "falls" if lo - hi > UTIL_BAND
            else f"stays within {UTIL_BAND:.0f} points")


def util_text(a: UtilAnswer) -> str:
    one = len(a.batches) == 1
    said = [f"{u.setup}{'' if one else f', batch {u.batch}'} {u.util_pct:.0f}%" for u in a.utils if present(u.util_pct)]
    at = f" at batch {a.utils[0].batch} per GPU" if one else ""
    text = (f"GPU utilization (mean of NVML's samples over the timed epoch){at} on {a.device}: " + "; ".join(said) + "."
            if said else f"GPU utilization was not sampled on {a.device} (no GPU).")
    if said and one:
        text += (f" How utilization changes with the batch size cannot be answered from this set: only batch "
                 f"{a.batches[0]} per GPU ran. The runs that would answer it: the same setups at several batch sizes "
                 "per GPU (batch_per_gpu = [32, 128, 512] in the study's grid).")
    for setup, lo, u_lo, hi, u_hi in a.by_batch:
        text += (f" On {setup}, from batch {lo} to {hi} per GPU utilization {_util_change(u_lo, u_hi)} "
                 f"({u_lo:.0f}% to {u_hi:.0f}%).")
    then = "" if one else ", then a larger batch per GPU"
    text += {UtilBecause.DATA: f" The loader is the bottleneck: the 1-GPU epoch waits on data for {a.data_share:.0%} of "
                               f"its time, so raise utilization with more loader workers or data kept on the GPU{then}.",
             UtilBecause.SMALL_BATCH: " Raise it with a larger batch per GPU (more work per kernel launch, fewer steps), "
                                      "more loader workers, or mixed precision with data kept on the GPU.",
             UtilBecause.HIGH: " The GPU is already busy; a larger batch would add little.",
             UtilBecause.UNSAMPLED: ""}[a.because]
    return text + caveats(a.cpu, a.missing, list(a.notes))


@dataclass(frozen=True)
class FullRun:
    setup: str
    epochs: int
    time: Measured
    train_images: int
    global_batch: int  # the batch per GPU x every GPU of every node: the images one step takes
    steps: int  # epochs x ceil(train_images / global_batch), what each worker steps through


@dataclass(frozen=True)
class FullRunAnswer(Record):
    device: str
    cpu: bool
    runs: tuple[FullRun, ...]
    notes: tuple[str, ...] = ()


def full_run_answer(tables: Tables) -> Optional[FullRunAnswer]:
    if not lab(tables):
        return None
    namer, rows = _plain_rows(tables)
    ok = [(i, r) for i, r in rows if figure(r, "time_to_train_s")]
    device, cpu = where(r.gpu_model for _, r in ok)
    runs = tuple(FullRun(setup_name(r), int(r.epochs), figure(r, "time_to_train_s"), int(r.train_images),  # type: ignore[arg-type]
                         int(r.global_batch), int(r.epochs) * f.steps_per_epoch(int(r.train_images), int(r.global_batch), 1))
                 for _, r in ok)
    missing = tuple(f"{namer.name(r)} ({missing_reason(r)})" for _, r in rows if r.status != "ok")
    return FullRunAnswer(cited(namer, ok[:6]), missing, device, cpu, runs,
                         setting_notes(tables.get("train_cells"), (r for _, r in ok), False))


def _steps(r: FullRun) -> str:
    return f"{r.epochs} x ceil({r.train_images:,} / {r.global_batch}) = {r.steps:,}"


def full_run_text(a: FullRunAnswer) -> str:
    if not a.runs:
        return "No run has finished yet." + caveats(a.cpu, a.missing)
    one = a.runs[0]
    text = (f"A full run takes steps = epochs x ceil(training images / global batch) per worker, the global batch "
            f"being the batch per GPU x all GPUs of all nodes: {_steps(one)} on {one.setup}")
    text += "".join(f", {_steps(r)} on {r.setup}" for r in a.runs[1:])
    text += (f". The full run of {one.epochs} epochs on {one.setup} takes {secs(one.time)} on {a.device} (every epoch's "
             "time summed, data loading included, the test evaluation after each epoch not)")
    text += "".join(f"; on {r.setup} {secs(r.time)}" for r in a.runs[1:]) + "."
    return text + caveats(a.cpu, a.missing, list(a.notes))


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
    test_images: float  # the test images its accuracy is over (NaN where unknown)
    above_n: Optional[Verdict] = None  # N x its time against 1 GPU's: below -> an efficiency above 1 the runs carry


# The lab's setups (its title's "1, 2, 4 GPUs and 2 nodes") by (nodes, GPUs).
LAB_SETUPS = {(1, 1): "1 GPU", (1, 2): "2 GPUs", (1, 4): "4 GPUs", (2, 2): "2 nodes"}


@dataclass(frozen=True)
class ScalingAnswer(Record):
    device: str
    cpu: bool
    synthetic: bool
    runs: tuple[Scaled, ...]
    # of the least efficient run: "data loading", "communication", "data loading and communication" (neither
    # alone past its bound, together past NOT_COMPUTE), "compute" (together under it), or ""
    bottleneck: str
    absent: tuple[str, ...] = ()  # the lab's setups (LAB_SETUPS) without a finished run
    unplanned: tuple[str, ...] = ()  # those of `absent` the study planned no cell on
    one_wait_share: float = float("nan")  # the 1-GPU run's data wait share of its timed epoch (why efficiency > 1)
    notes: tuple[str, ...] = ()


def scaling_answer(tables: Tables) -> Optional[ScalingAnswer]:
    if not lab(tables):
        return None
    namer, rows = _plain_rows(tables)
    ok = [(i, r) for i, r in rows if figure(r, "time_to_train_s")]
    ones = {_t1_key(r): r for _, r in ok if r.engine == "single"}  # each run's own 1-GPU run, as the speedup's
    runs = []
    for _, r in ok:
        time, one = figure(r, "time_to_train_s"), ones.get(_t1_key(r)) if r.engine != "single" else None
        t1 = figure(one, "time_to_train_s")
        cell = timed_cell(tables["train_cells"], r)
        runs.append(Scaled(setup_name(r), int(r.gpus), figure(r, "test_accuracy"), time, float(r.speedup),  # type: ignore[arg-type]
                           f.efficiency(r.speedup, r.gpus), against(time, t1) if t1 and time else None,
                           share(cell, "timed_data_wait_s"), share(cell, "timed_comm_exposed_s"),
                           float(r.evaluated_images), against(time.scaled(float(r.gpus)), t1) if t1 and time else None))
    multi = [s for s in runs if s.gpus > 1 and present(s.efficiency)]
    worst = min(multi, key=lambda s: s.efficiency, default=None)
    device, cpu = where(r.gpu_model for _, r in ok)
    missing = tuple(f"{namer.name(r)} ({missing_reason(r)})" for _, r in rows if r.status != "ok")
    first = next((r for _, r in ok if r.engine == "single"), None)  # the 1-GPU run whose wait the answer quotes
    one_cell = timed_cell(tables["train_cells"], first) if first is not None else None
    have = {(int(r.nodes), int(r.gpus)) for _, r in ok}
    cells = tables["train_cells"]
    planned = {(int(n), int(n) * int(g)) for n, g in zip(cells.nodes, cells.gpus_per_node, strict=True)} if len(cells) \
        else {(int(r.nodes), int(r.gpus)) for _, r in rows}
    absent = tuple(n for k, n in LAB_SETUPS.items() if k not in have)
    quoted = [timed_cell(tables["train_cells"], r) for _, r in ok]
    return ScalingAnswer(cited(namer, ok[:6]) + _epochs_cited(tables, quoted), missing, device, cpu,
                         any(r.dataset == "synthetic" for _, r in ok),
                         tuple(runs), _bottleneck(worst), absent,
                         tuple(n for k, n in LAB_SETUPS.items() if k not in have and k not in planned),
                         share(one_cell, "timed_data_wait_s"), setting_notes(tables.get("train_cells"), (r for _, r in ok)))


def _bottleneck(s: Optional[Scaled]) -> str:
    if s is None or not (present(s.data_share) or present(s.comm_share)):
        return ""
    data = s.data_share if present(s.data_share) else 0.0
    comm = s.comm_share if present(s.comm_share) else 0.0
    return ("data loading" if data >= DATA_BOUND else "communication" if comm >= COMM_BOUND
            else "data loading and communication" if data + comm >= NOT_COMPUTE else "compute")


def scaling_text(a: ScalingAnswer) -> str:
    items = []
    for s in a.runs:
        item = f"{s.setup}: test accuracy {accuracy(s.accuracy, s.test_images)}, {secs(s.time)}"
        if s.gpus > 1 and present(s.speedup):
            how = says(s.faster, Words("faster", "slower", "no faster", "not clearly faster")) if s.faster else ""
            item += f", speedup {s.speedup:.2f}x ({how}), scaling efficiency {s.efficiency:.0%}"
        items.append(item)
    text = f"On {a.device}: " + "; ".join(items) + "." if items else "No run has finished yet."
    if items and a.absent:
        ran = [n for n in LAB_SETUPS.values() if n not in a.absent]
        failed = [n for n in a.absent if n not in a.unplanned]
        text += f" Only {listing(ran)} ran" if ran else " No setup of the lab's ran"
        text += (f": this study planned no run on {listing(a.unplanned).replace(' and ', ' or ')}" if a.unplanned else "")
        text += (f"{'; ' if a.unplanned else ': '}its runs on {listing(failed)} have no result" if failed else "")
        text += ", so no speedup or scaling efficiency." if "1 GPU" in a.absent else ", so those are unanswered."
    multi = [s for s in a.runs if s.gpus > 1 and present(s.efficiency)]
    worst = min(multi, key=lambda s: s.efficiency, default=None)
    over = [s for s in multi if s.efficiency > 1]
    # a setup is said above 100% only where every run of it printed above is below 1 GPU's time by the verdict
    # (one setup at two batches, one carried and one not, would be said both ways)
    doubtful = {s.setup for s in over if s.above_n is None or leaning(s.above_n) >= 0}
    above = [s for s in over if s.setup not in doubtful]
    if above:
        why = (f"the 1-GPU run waits on its loader {a.one_wait_share:.0%} of its timed epoch, and each rank of a "
               "multi-GPU run has its own loader workers, so the ranks share that wait"
               if present(a.one_wait_share) and a.one_wait_share >= LOADER_WAIT else "1 GPU is slower per image")
        text += f" Efficiency above 100% ({listing(list(dict.fromkeys(s.setup for s in above)))}): {why}."
    unsure = list(dict.fromkeys(s.setup for s in over if s not in above))
    if unsure:  # printed above 100% but N x its time is within the spread (or the band) of 1 GPU's
        text += f" Efficiency above 100% ({listing(unsure)}) is within the runs' spread: no gain past N GPUs is measured."
    if worst and a.bottleneck:
        both = (f"its data wait ({worst.data_share:.0%}) and the all-reduce time not hidden behind the backward pass "
                f"({worst.comm_share:.0%}) together are {'only ' * (a.bottleneck == 'compute')}"
                f"{worst.data_share + worst.comm_share:.0%} of its timed epoch")
        why = {"data loading": f"its timed epoch waits on data {worst.data_share:.0%} of the time",
               "communication": f"its exposed all-reduce is {worst.comm_share:.0%} of the timed epoch"}.get(a.bottleneck, both)
        who = (f"the least efficient, {worst.setup}," if len({s.setup for s in multi}) > 1
               else f"{worst.setup} (the only multi-GPU setup)")
        text += f" The bottleneck of {who} is {a.bottleneck}: {why}."
    return text + caveats(a.cpu, a.missing, list(a.notes) + one_run_note(*(s.faster for s in a.runs)))


@dataclass(frozen=True)
class WorkersRun:
    setup: str
    global_batch: int
    lr_rule: str
    accuracy: Optional[Measured]
    test_images: float


@dataclass(frozen=True)
class WorkersAnswer(Record):
    """The rule needs no run on 2 nodes: W workers (every process on every node) take a global batch of W x
    the batch per GPU and, by the linear rule, an LR of lr x W x batch / ref_batch. `runs` show it: those on 2
    nodes where there are, else the study's own multi-GPU runs with the linear rule (`on_nodes` False)."""

    synthetic: bool
    cpu: bool
    batch_per_gpu: int
    runs: tuple[WorkersRun, ...]
    notes: tuple[str, ...] = ()
    lr: float = float("nan")  # the study's LR at ref_batch images
    ref_batch: int = 0
    on_nodes: bool = False


def workers_answer(tables: Tables) -> Optional[WorkersAnswer]:
    if not lab(tables):
        return None
    test = tables["test"].reset_index(drop=True)
    namer = Namer(test, "test", {"lr", "lr_scaling", "lr_ref_batch", "warmup_epochs", "sync_bn", "epochs", "timed_epoch"})
    plain = [(i, r) for i, r in rows_of(test) if not r.warmup_epochs and r.status == "ok"]
    rows = [(i, r) for i, r in plain if r.nodes > 1]
    on_nodes = bool(rows)
    rows = rows or [(i, r) for i, r in plain if r.gpus > 1 and r.lr_scaling == "linear"]
    base = (rows or plain or list(rows_of(test)))
    if not base:
        return WorkersAnswer((), _no_nodes(tables), False, False, 0, ())
    _, cpu = where(r.gpu_model for _, r in rows)
    runs = tuple(WorkersRun(setup_name(r), int(r.global_batch), lr_rule(r), figure(r, "test_accuracy"),
                            float(r.evaluated_images)) for _, r in rows)
    first = base[0][1]
    return WorkersAnswer(cited(namer, rows), () if on_nodes else _no_nodes(tables),
                         any(r.dataset == "synthetic" for _, r in rows), cpu, int(first.batch_per_gpu), runs,
                         setting_notes(tables.get("train_cells"), (r for _, r in rows)), float(first.lr),
                         int(first.lr_ref_batch), on_nodes)


def _no_nodes(tables: Tables) -> tuple[str, ...]:
    """Why no run on 2 nodes speaks: the 2-node cells planned without a result (with why), else none planned."""
    cells = tables["train_cells"]
    planned = cells[(cells.nodes > 1) & (cells.status != "ok")] if len(cells) else cells
    if len(planned):
        why = sorted({missing_reason(r) for r in planned.itertuples(index=False)})
        return (f"the study's {len(planned)} run{'s' * (len(planned) > 1)} on 2 nodes "
                f"{'have' if len(planned) > 1 else 'has'} no result ({'; '.join(why[:2])})",)
    return (NONE_PLANNED,)


NONE_PLANNED = "this study planned no run on 2 nodes"


def workers_text(a: WorkersAnswer) -> str:
    if not a.batch_per_gpu:
        return "No run has finished yet." + caveats(a.cpu, a.missing)
    b, ref = a.batch_per_gpu, a.ref_batch
    lr = f"{a.lr:g} x W" + (f" x {b}/{ref}" if b != ref else "")
    text = (f"With W workers (every process on every node counts: 2 nodes of 2 GPUs is W = 4) and the batch per GPU "
            f"kept at {b}, the global batch is W x {b} ({2 * b} for 2, {4 * b} for 4). By the linear rule (Goyal et "
            f"al.) the learning rate grows with it to {lr}, with a few epochs of warmup where that is large.")
    if a.runs:
        how = "On 2 nodes" if a.on_nodes else "This study's multi-GPU runs used it"
        text += f" {how}: " + "; ".join(f"{w.setup}, global batch {w.global_batch}, LR {w.lr_rule}, test accuracy "
                                        f"{accuracy(w.accuracy, w.test_images)}" for w in a.runs) + "."
    return text + caveats(a.cpu, a.missing, list(a.notes))


@dataclass(frozen=True)
class BestAnswer(Record):
    synthetic: bool
    setup: str
    best: str  # its configuration
    accuracy: Optional[Measured]
    runner_up: str
    runner_accuracy: Optional[Measured]
    verdict: Optional[Difference]  # the runner-up against the best, in points
    notes: tuple[str, ...] = ()
    test_images: float = float("nan")  # the best's, that its accuracy is over
    none_planned: bool = False  # no accuracy because the study planned no run on 2 nodes


def best_answer(tables: Tables) -> Optional[BestAnswer]:
    if not lab(tables):
        return None
    sweep = tables["sweep"].reset_index(drop=True)
    two = sweep[(sweep.nodes > 1) & (sweep.status == "ok") & sweep.test_accuracy.notna()] if len(sweep) else sweep
    if not len(two):
        why = _no_nodes(tables)
        return BestAnswer((), why, False, "", "", None, "", None, None, none_planned=why == (NONE_PLANNED,))
    ranked = two.sort_values("test_accuracy", ascending=False)
    rows = list(ranked.itertuples())
    best = rows[0]
    second = rows[1] if len(rows) > 1 else None
    a, b = Measured.of(best, "test_accuracy"), Measured.of(second, "test_accuracy") if second is not None else None
    evidence = tuple(Evidence("sweep", int(r.Index), lr_rule(r)) for r in rows[:2])
    return BestAnswer(evidence, (), bool((two.dataset == "synthetic").any()), setup_name(best), lr_rule(best), a,
                      lr_rule(second) if second is not None else "", b, points_against(b, a) if b else None,
                      setting_notes(tables.get("train_cells"), rows[:2]), float(best.evaluated_images))


def best_text(a: BestAnswer) -> str:
    if a.accuracy is None and a.none_planned:
        return ("Unanswered: this study planned no run on 2 nodes, so it holds no test accuracy with 2 workers. "
                "The runs that would answer it: DDP on 2 nodes of 2 GPUs each over a few learning rates (each rule, "
                "with and without warmup), the best of them against the rest.")
    if a.accuracy is None:
        return "No run on 2 nodes has a test accuracy." + caveats(False, a.missing)
    text = f"The best test accuracy on {a.setup} is {accuracy(a.accuracy, a.test_images)}, with LR {a.best}."
    if a.verdict and a.runner_accuracy:
        word = says(a.verdict, Words("lower", "higher", "not distinguishable from it",
                                     "not clearly lower: more repeats would tell"))
        text += f" The next, LR {a.runner_up} at {accuracy(a.runner_accuracy, a.test_images, False)}, is {word}."
    return text + caveats(False, a.missing, list(a.notes) + one_run_note(a.verdict))
