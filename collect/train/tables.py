"""The homework's tables as pure functions over the training cells' frame (collect.train.frame).

Tables are long-form DataFrames, one row per configuration (repeats of a cell collapse into
their median), with a `status` column: a configuration that is not submitted, pending, failed or
oom keeps its row and says so. The arithmetic is collect.train.formulas; rendering is collect.train.grids.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd
from pandas.api.typing import DataFrameGroupBy

import collect.train.formulas as f
from collect.packing import ran_beside
from collect.train.frame import CELL_COLUMNS
from collect.render import ENDED, NO_BASELINE, STATUS_RANK

CPU = "cpu"  # the gpu_model a CPU run records (jobs.runtime.environment)


def on_cpu(model: object) -> bool:
    return isinstance(model, str) and model.lower() == CPU


CONFIG = [c for c in CELL_COLUMNS if c != "repeat"]  # a configuration: a cell up to its repeat number
SHAPE = ["engine", "nodes", "gpus_per_node"]
BASE_KEYS = [c for c in CONFIG if c not in SHAPE]  # what a run shares with its 1-GPU baseline
MULTI_GPU_ONLY = ("broadcast_buffers",)  # fields that do not change a 1-GPU run: ignored when pairing it (T1)
T1_KEYS = [c for c in BASE_KEYS if c not in MULTI_GPU_ONLY]
ENGINE_ORDER = {"single": 0, "dp": 1, "ddp": 2}
Q4_EPOCH = 5
Q4_BASELINE_BATCH = 128
SCALING_VALUES = ["timed_epoch_s", "timed_train_s", "timed_data_wait_s", "timed_h2d_s", "timed_compute_s",
                  "timed_comm_exposed_s", "comm_grad_bytes", "comm_busbw_gbps", "peak_mem_gib"]
TABLE_EXTRA = ["status", "repeats", "seeding", "runs", "gpu_model", "error", "gpus", "global_batch", "hosts_seen",
               "beside", "ended"]
INDEPENDENT, SHARED = "independent", "shared"  # how a configuration's ok repeats were seeded (repeat_seeding)
GPU_VALUES = ["peak_mem_gib", "gpu_util_median_pct", "gpu_util_pct", "gpu_mem_used_max_gib"]  # NaN: no GPU sampled


def plain(frame: pd.DataFrame) -> pd.Series:
    """Cells without a large-batch remedy, DDP's buffers broadcast as by default (a "gradients only"
    cell is Q7's, not a run of the recipe)."""
    return ((frame.lr_scaling == "none") & (frame.warmup_epochs == 0) & (~frame.sync_bn.astype(bool))
            & frame.broadcast_buffers.astype(bool))


def timing_protocol(frame: pd.DataFrame) -> Optional[tuple[int, int]]:
    """(epochs, timed epoch) of the timing runs: the most common pair among cells without a
    remedy, fewer epochs first on a tie (the homework's: 2 epochs, the 2nd timed)."""
    cells = frame[plain(frame)]
    if cells.empty:
        return None
    counts = cells.groupby(["epochs", "timed_epoch"]).size().reset_index(name="n")
    best = counts.sort_values(["n", "epochs", "timed_epoch"], ascending=[False, True, True]).iloc[0]
    return int(best.epochs), int(best.timed_epoch)


def timing_cells(frame: pd.DataFrame) -> pd.DataFrame:
    protocol = timing_protocol(frame)
    if protocol is None:
        return frame.iloc[0:0]
    return frame[plain(frame) & (frame.epochs == protocol[0]) & (frame.timed_epoch == protocol[1])]


def repeat_seeding(ok: pd.DataFrame) -> pd.Series:
    """Per configuration, how its ok repeats were seeded: INDEPENDENT when each trained from a
    seed of its own, SHARED when two trained from one (the same run twice), "" with one repeat.
    A result without run_seed was written before repeats were seeded: it trained with the cell's seed."""
    trained = ok.assign(_trained=ok.run_seed.fillna(ok.seed)).groupby(CONFIG, dropna=False)._trained
    seeds, runs = trained.nunique(), trained.size()
    seeding = pd.Series(INDEPENDENT, index=runs.index).where(seeds == runs, SHARED).where(runs >= 2, "")
    return seeding.rename("seeding")


def median_repeats(cells: pd.DataFrame, values: list[str], ranged: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per configuration: the median of each value over its ok repeats; its status is
    the best of its repeats (collect.render.STATUS_RANK: ok > oom > timeout > failed > pending >
    skipped > not submitted); repeats = ok runs, runs = all cells; seeding = how the ok repeats
    were seeded (repeat_seeding); hosts_seen = the most distinct hosts an ok repeat ran on (0: not
    recorded), so that a setup of N nodes that ran on one machine is named for it (grids.setup_name);
    beside = the ok repeats that ran beside other cells (the grids mark them: grids.BESIDE);
    ended = its cells that ended with no answer (collect.render.ENDED: the grids mark them beside the repeats).
    Each value in `ranged` also gets its spread over the ok
    repeats: `<value>_min` and `<value>_max`, and the values themselves, `<value>_values` (a tuple,
    for collect.verdict; not written to the CSV files: collect.report.KEPT_OUT); with them the ok
    repeats' ids, `cell_id_values` (the cells a verdict's side comes from: collect.settle)."""
    spread = [f"{v}_{end}" for v in ranged for end in ("min", "max", "values")] + (["cell_id_values"] if ranged else [])
    columns = CONFIG + TABLE_EXTRA + values + spread
    if cells.empty:
        return pd.DataFrame(columns=columns)
    ranked = cells.assign(_rank=cells.status.map(STATUS_RANK).fillna(len(STATUS_RANK)))
    best = ranked.sort_values("_rank", kind="stable").drop_duplicates(CONFIG)
    best = best[CONFIG + ["status", "gpu_model", "error", "gpus", "global_batch"]]
    ok = cells[cells.status == "ok"].groupby(CONFIG, dropna=False)
    stats = [ok[values].median(), ok[list(ranged)].min().add_suffix("_min"), ok[list(ranged)].max().add_suffix("_max"),
             *([repeat_values(ok, ranged)] if ranged else []),
             ok.size().rename("repeats"), repeat_seeding(cells[cells.status == "ok"]), _hosts_seen(cells),
             _beside(cells), cells[cells.status.isin(ENDED)].groupby(CONFIG, dropna=False).size().rename("ended")]
    table = best.merge(pd.concat(stats, axis=1).reset_index(), on=CONFIG, how="left")
    table = table.merge(cells.groupby(CONFIG, dropna=False).size().rename("runs").reset_index(), on=CONFIG)
    table["repeats"] = table.repeats.fillna(0).astype(int)
    table["seeding"] = table.seeding.fillna("")
    table["hosts_seen"] = table.hosts_seen.fillna(0).astype(int)
    table["beside"] = table.beside.fillna(0).astype(int)
    table["ended"] = table.ended.fillna(0).astype(int)
    return table[columns]


def _beside(cells: pd.DataFrame) -> pd.Series:
    """Per configuration, its ok repeats that ran beside other cells on their machine (collect.packing)."""
    ok = cells[cells.status == "ok"]
    return ok.assign(beside=ran_beside(ok).astype(int)).groupby(CONFIG, dropna=False).beside.sum()


def _hosts_seen(cells: pd.DataFrame) -> pd.Series:
    """Per configuration, the most distinct hosts of an ok repeat ("n1,n2" -> 2; none recorded -> 0)."""
    ok = cells[cells.status == "ok"]
    names = ok["hosts"] if "hosts" in ok else pd.Series("", index=ok.index)
    count = [len({h for h in v.split(",") if h}) if isinstance(v, str) else 0 for v in names]
    return ok.assign(hosts_seen=count).groupby(CONFIG, dropna=False).hosts_seen.max()


def repeat_values(ok: DataFrameGroupBy, ranged: tuple[str, ...]) -> pd.DataFrame:
    """`<value>_values`: each configuration's ok values of each column in `ranged` as a tuple (NaN
    left out), and `cell_id_values` their cells' ids, by the groups' keys. Sliced from one array
    per column by the groups' positions: a function called per group took 70 s at 100,000
    configurations."""
    positions = ok.indices
    keys = pd.MultiIndex.from_tuples(list(positions), names=CONFIG)
    ids = ok.obj["cell_id"].to_numpy(dtype=object)
    columns = {"cell_id_values": [tuple(ids[i]) for i in positions.values()]}
    for name in ranged:
        column = ok.obj[name].to_numpy(dtype=float)
        columns[f"{name}_values"] = [tuple(v[~np.isnan(v)].tolist()) for v in (column[i] for i in positions.values())]
    return pd.DataFrame(columns, index=keys)


def rename_values(table: pd.DataFrame, names: dict[str, str]) -> pd.DataFrame:
    """Rename values together with their spread columns (<value>_min, <value>_max)."""
    ends = ("", "_min", "_max", "_values")
    return table.rename(columns={old + end: new + end for old, new in names.items() for end in ends})


def _baseline(table: pd.DataFrame, column: str, name: str) -> pd.DataFrame:
    """Each row's 1-GPU baseline (engine single, same batch per GPU and every other field but those
    that do not change a 1-GPU run, MULTI_GPU_ONLY): its `column` as `name`, its status as
    `name`_status (NO_BASELINE where there is none)."""
    base = table[table.engine == "single"][T1_KEYS + [column, "status"]]
    base = base.rename(columns={column: name, "status": f"{name}_status"})
    out = table.merge(base, on=T1_KEYS, how="left")
    out[f"{name}_status"] = out[f"{name}_status"].fillna(NO_BASELINE)
    return out


def _sorted(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    order = table.engine.map(ENGINE_ORDER)
    return table.assign(_o=order).sort_values(by[:1] + ["_o"] + by[1:], kind="stable").drop(columns="_o").reset_index(drop=True)


def scaling_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The timing runs by configuration, with their 1-GPU baselines: t1_s (whole epoch) and
    t1_train_s (epoch without data wait) of the single-GPU run at the same batch per GPU."""
    table = median_repeats(timing_cells(frame), SCALING_VALUES, ranged=("timed_epoch_s", "timed_train_s"))
    table = rename_values(table, {"timed_epoch_s": "epoch_s", "timed_train_s": "train_s"})
    table = _baseline(_baseline(table, "epoch_s", "t1_s"), "train_s", "t1_train_s")
    return _sorted(table, ["gpus", "nodes", "batch_per_gpu"])


def _scaling(frame: pd.DataFrame, scaling: Optional[pd.DataFrame]) -> pd.DataFrame:
    """scaling_table(frame), or a copy of the one the caller already built from it."""
    return scaling_table(frame) if scaling is None else scaling.copy()


def q1_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Q1: the timed epoch on 1 GPU by batch size, up to the first batch that does not fit.

    train_s = epoch_s - data_wait_s (copies to the GPU, forward, backward, update: the Q1 figure);
    epoch_s = the whole epoch; train_images_per_s = train_images / train_s; steps = ceil(train_images /
    batch); step_ms = 1000 train_s / steps (one step's train time). GPU_VALUES: the timed
    epoch's median GPU utilization and the peak memory (torch's allocator; NVML's used), NaN on a CPU.
    Rows after the first OOM that are OOM too are left out (a larger batch cannot fit either).
    """
    cells = timing_cells(frame)
    table = median_repeats(cells[cells.engine == "single"],
                           ["timed_train_s", "timed_epoch_s", "timed_data_wait_s", *GPU_VALUES],
                           ranged=("timed_train_s", "timed_epoch_s"))
    table = rename_values(table, {"timed_train_s": "train_s", "timed_epoch_s": "epoch_s",
                                  "timed_data_wait_s": "data_wait_s"})
    table["train_images_per_s"] = table.train_images / table.train_s
    table["steps"] = [f.steps_per_epoch(int(i), int(b), 1) for i, b in zip(table.train_images, table.batch_per_gpu,
                                                                           strict=True)]
    table["step_ms"] = 1000 * table.train_s / table.steps
    table["data_share"] = table.data_wait_s / table.epoch_s
    table = table.sort_values(BASE_KEYS, kind="stable").reset_index(drop=True)
    rest = [k for k in BASE_KEYS if k != "batch_per_gpu"]
    first_oom = table[table.status == "oom"].groupby(rest, dropna=False).batch_per_gpu.min().rename("_first_oom")
    table = table.merge(first_oom.reset_index(), on=rest, how="left")
    beyond = (table.status == "oom") & (table.batch_per_gpu > table._first_oom)
    return table[~beyond].drop(columns="_first_oom").reset_index(drop=True)


def largest_fitting_batch(q1: pd.DataFrame) -> Optional[int]:
    """The largest batch that ran (status ok) on 1 GPU in Q1, for Q4."""
    ok = q1[q1.status == "ok"]
    return None if ok.empty else int(ok.batch_per_gpu.max())


def table1(frame: pd.DataFrame, scaling: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Table 1: time and speedup by GPUs and batch per GPU, for each engine (weak scaling).

    speedup = T1 / TN, T1 the 1-GPU epoch time (engine single) at the same batch per GPU, TN
    the N-GPU epoch time: each of N GPUs does 1/N of the epoch. efficiency = speedup / N.
    Times are the whole timed epoch (epoch_s), data loading included (the Q2 figure); data_share =
    rank 0's wait on its loader over that epoch (the share Q2 quotes).
    Batches run on 1 GPU only (the rest of the Q1 sweep) are left to Q1.
    """
    table = _scaling(frame, scaling)
    table["data_share"] = table.timed_data_wait_s / table.epoch_s
    multi = set(table[table.engine != "single"].batch_per_gpu)
    if multi:
        table = table[table.batch_per_gpu.isin(multi)].reset_index(drop=True)
    table["speedup"] = [f.speedup(a, b) for a, b in zip(table.t1_s, table.epoch_s, strict=True)]
    table["efficiency"] = [f.efficiency(s, n) for s, n in zip(table.speedup, table.gpus, strict=True)]
    keep = CONFIG + TABLE_EXTRA + ["epoch_s", "epoch_s_min", "epoch_s_max", "epoch_s_values", "cell_id_values",
                                   "train_s", "t1_s", "t1_s_status", "speedup", "efficiency", "data_share"]
    return table[keep]


def strong_scaling(frame: pd.DataFrame, scaling: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Strong scaling where the study has it: an N-GPU run at b per GPU against the 1-GPU run
    at the same global batch B = b x N (same steps per epoch).

    strong speedup = T1(batch B on 1 GPU) / TN(batch B/N per GPU); efficiency = speedup / N.
    Only N-GPU runs whose 1-GPU run at batch B is in the study appear.
    """
    table = _scaling(frame, scaling)
    base = table[table.engine == "single"][T1_KEYS + ["epoch_s", "status"]]
    base = base.rename(columns={"batch_per_gpu": "global_batch", "epoch_s": "t1_strong_s", "status": "t1_strong_status"})
    multi = table[table.gpus > 1][CONFIG + TABLE_EXTRA + ["epoch_s", "epoch_s_min", "epoch_s_max", "epoch_s_values",
                                                         "cell_id_values", "train_s"]]
    keys = [k for k in T1_KEYS if k != "batch_per_gpu"] + ["global_batch"]
    out = multi.merge(base, on=keys, how="inner")
    out["speedup"] = [f.speedup(a, b) for a, b in zip(out.t1_strong_s, out.epoch_s, strict=True)]
    out["efficiency"] = [f.efficiency(s, n) for s, n in zip(out.speedup, out.gpus, strict=True)]
    return _sorted(out, ["gpus", "nodes", "global_batch"])


def table2(frame: pd.DataFrame, scaling: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Table 2: compute vs communication of the N-GPU runs, per epoch (seconds).

    Times are the timed epoch without data wait (train_s, the Q1 figure), so data loading
    counts as neither. Estimate (the homework's): compute = T1 / N, comm = TN - T1 / N.
    comm_share = comm / TN (the share Q3.1 quotes); t1n_breaks: the compute measured is far from T1/N either way
    (formulas.t1n_breaks), so that share is none.
    Measured: compute = h2d_s + compute_s - comm_exposed_s, comm = comm_exposed_s (NaN: not measured);
    comm_measured_share = that comm / TN (Q3.1 quotes it beside the estimate's share).
    data_wait_s: the N-GPU run's own wait on its data loader in the timed epoch (what Q3.1 holds the
    estimate against: a rank that waits for data holds the others at the all-reduce).
    """
    table = _scaling(frame, scaling)
    table = table[table.engine != "single"].reset_index(drop=True)
    table["compute_est_s"] = [f.compute_estimate_s(t, n) for t, n in zip(table.t1_train_s, table.gpus, strict=True)]
    table["comm_est_s"] = [f.comm_estimate_s(t, tn, n)
                           for t, tn, n in zip(table.t1_train_s, table.train_s, table.gpus, strict=True)]
    table["comm_share"] = table.comm_est_s / table.train_s
    table["comm_measured_s"] = table.timed_comm_exposed_s
    table["comm_measured_share"] = table.comm_measured_s / table.train_s
    table["compute_measured_s"] = table.timed_h2d_s + table.timed_compute_s - table.timed_comm_exposed_s
    table["data_wait_s"] = table.timed_data_wait_s
    table["t1n_breaks"] = [f.t1n_breaks(m, e) for m, e in zip(table.compute_measured_s, table.compute_est_s, strict=True)]
    keep = CONFIG + TABLE_EXTRA + ["t1_train_s", "t1_train_s_status", "train_s", "train_s_min", "train_s_max",
                                   "train_s_values", "cell_id_values", "compute_est_s", "comm_est_s", "comm_share",
                                   "t1n_breaks", "compute_measured_s", "comm_measured_s", "comm_measured_share",
                                   "data_wait_s", "comm_grad_bytes",
                                   "comm_busbw_gbps"]
    return table[keep]


def table3(frame: pd.DataFrame, scaling: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Table 3: bandwidth utilization of the N-GPU runs (GB/s = 1e9 bytes/s).

    P = comm_grad_bytes / 4 when the job measured it (or another run of the same model did:
    DataParallel records no all-reduce), else 11,173,962;
    steps = ceil(train_images / (b x N)); bytes = steps x 2(N-1)/N x P x 4 per GPU per epoch;
    utilization = bytes / comm time / 1e9, with the estimated and the measured comm time of
    Table 2; share = utilization / busbw (the job's measured all-reduce busbw).
    """
    table = table2(frame, scaling)
    known = table.dropna(subset=["comm_grad_bytes"]).groupby("model").comm_grad_bytes.median()
    grad_bytes = table.comm_grad_bytes.fillna(table.model.map(known))
    table["gradients"] = [f.gradients_of(b) for b in grad_bytes]
    table["steps"] = [f.steps_per_epoch(i, b, n)
                      for i, b, n in zip(table.train_images, table.batch_per_gpu, table.gpus, strict=True)]
    table["bytes_per_gpu"] = [f.epoch_comm_bytes(i, b, n, p) for i, b, n, p
                              in zip(table.train_images, table.batch_per_gpu, table.gpus, table.gradients, strict=True)]
    table["util_est_gbps"] = [f.bandwidth_gbps(b, t) for b, t in zip(table.bytes_per_gpu, table.comm_est_s, strict=True)]
    table["util_measured_gbps"] = [f.bandwidth_gbps(b, t)
                                   for b, t in zip(table.bytes_per_gpu, table.comm_measured_s, strict=True)]
    table["busbw_gbps"] = table.comm_busbw_gbps
    table["share_est"] = [f.busbw_share(u, b) for u, b in zip(table.util_est_gbps, table.busbw_gbps, strict=True)]
    table["share_measured"] = [f.busbw_share(u, b) for u, b in zip(table.util_measured_gbps, table.busbw_gbps, strict=True)]
    return table.drop(columns=["comm_grad_bytes", "comm_busbw_gbps"])


EARLIER_ACCURACY = [f"accuracy_e{k}" for k in range(1, Q4_EPOCH)]  # Q4's runs' training accuracy before epoch 5


def q4_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Q4's runs: the 1-GPU batch-128 baseline without remedy, and every run on 4 GPUs,
    each trained for at least Q4_EPOCH epochs."""
    long = frame[frame.epochs >= Q4_EPOCH]
    baseline = (long.engine == "single") & (long.batch_per_gpu == Q4_BASELINE_BATCH) & plain(long)
    return long[baseline | (long.gpus == 4)]


def q4_table(frame: pd.DataFrame, epochs: pd.DataFrame) -> pd.DataFrame:
    """Q4: training loss and accuracy of the 5th epoch (means over that epoch, all ranks),
    large batches on 4 GPUs against batch 128 on 1 GPU, with and without each remedy.

    d_loss = loss - baseline loss; d_accuracy = accuracy - baseline accuracy (0..1); accuracy_e1 ..
    accuracy_e4 = the training accuracy of each earlier epoch (the swing the Q4.1 answer cites).
    """
    cells = q4_cells(frame)
    fifth = epochs[epochs.epoch == Q4_EPOCH][["cell_id", "loss", "accuracy", "lr"]]
    cells = cells.merge(fifth.rename(columns={"lr": "epoch_lr"}), on="cell_id", how="left")
    before = epochs[epochs.epoch < Q4_EPOCH].pivot_table(index="cell_id", columns="epoch", values="accuracy")
    before = before.reindex(columns=range(1, Q4_EPOCH))
    before.columns = EARLIER_ACCURACY
    cells = cells.merge(before.reset_index(), on="cell_id", how="left")
    table = median_repeats(cells, ["loss", "accuracy", "epoch_lr", *EARLIER_ACCURACY], ranged=("loss", "accuracy"))
    is_base = (table.engine == "single") & (table.batch_per_gpu == Q4_BASELINE_BATCH) & plain(table)
    table["baseline"] = is_base
    base = table[is_base & (table.status == "ok")]
    base_loss = base.loss.iloc[0] if len(base) else float("nan")
    base_acc = base.accuracy.iloc[0] if len(base) else float("nan")
    table["d_loss"] = table.loss - base_loss
    table["d_accuracy"] = table.accuracy - base_acc
    table["_b"], table["_lin"] = ~is_base, table.lr_scaling != "none"
    table = table.sort_values(["_b", "gpus", "batch_per_gpu", "_lin", "warmup_epochs", "sync_bn"],
                              ascending=[True, True, False, True, True, True], kind="stable")
    return table.drop(columns=["_b", "_lin"]).reset_index(drop=True)


def q4_curves(frame: pd.DataFrame, epochs: pd.DataFrame) -> pd.DataFrame:
    """Training loss and accuracy, and test accuracy after each epoch (NaN where not recorded),
    per epoch of Q4's ok runs, the median over repeats."""
    values = ["loss", "accuracy", "test_accuracy"]
    cells = q4_cells(frame)
    cells = cells[cells.status == "ok"][CONFIG + ["cell_id", "gpus"]]
    rows = cells.merge(epochs[["cell_id", "epoch"] + values], on="cell_id")
    if rows.empty:
        return pd.DataFrame(columns=CONFIG + ["gpus", "epoch"] + values)
    return rows.groupby(CONFIG + ["gpus", "epoch"], dropna=False)[values].median().reset_index()


def per_run(epochs: pd.DataFrame) -> pd.DataFrame:
    """One row per result: time_to_train_s = the sum of its epochs' epoch_s; test_accuracy,
    test_loss and evaluated_images (its test_images) of its last epoch (NaN where it recorded none).
    evaluated_images may be below the cell's test_images: a synthetic set holds 100."""
    columns = ["cell_id", "time_to_train_s", "test_accuracy", "test_loss", "evaluated_images"]
    if epochs.empty:
        return pd.DataFrame(columns=columns)
    total = epochs.groupby("cell_id").epoch_s.sum().rename("time_to_train_s")
    last = epochs.sort_values("epoch").groupby("cell_id").tail(1).set_index("cell_id")
    last = last[["test_accuracy", "test_loss", "test_images"]].rename(columns={"test_images": "evaluated_images"})
    return pd.concat([total, last], axis=1).reset_index()[columns]


DDP_EVIDENCE = ["ddp_grad_bytes", "ddp_buffer_bytes", "ddp_init_bytes", "ddp_order_overlap_without_set_epoch",
                "ddp_order_overlap_with_set_epoch", "ddp_bn_rank_spread"]  # Q5-Q7 quote them from the test table


def accuracy_table(frame: pd.DataFrame, epochs: pd.DataFrame) -> pd.DataFrame:
    """Final test accuracy and time to train, one row per configuration (every run of the study).

    time_to_train_s = the sum of the run's epoch_s over all its epochs (the first included);
    test_accuracy, test_loss = after the last epoch, over evaluated_images images (all ranks);
    speedup = T1 / TN on time to train, T1 the 1-GPU run (engine single) at the same batch per
    GPU with every other field the same (t1_time_s; NaN where the study has none);
    GPU_VALUES: as in Q1 (utilization over the timed epoch), NaN where none was sampled;
    DDP_EVIDENCE: a DDP run's own evidence (jobs.train.result.DDPEvidence): the bytes it sent, its sampler's
    repeats, its ranks' BatchNorm spread; NaN where none.
    """
    cells = frame.merge(per_run(epochs), on="cell_id", how="left")
    values = ["time_to_train_s", "test_accuracy", "test_loss", "evaluated_images", *GPU_VALUES]
    values += [c for c in DDP_EVIDENCE if c in cells]  # Q5-Q7's figures, printed in this table
    table = median_repeats(cells, values, ranged=("time_to_train_s", "test_accuracy"))
    table = _baseline(table, "time_to_train_s", "t1_time_s")
    table["speedup"] = [f.speedup(a, b) for a, b in zip(table.t1_time_s, table.time_to_train_s, strict=True)]
    table["lr_after_warmup"] = [f.scaled_lr(lr, b, ref, rule) for lr, b, ref, rule
                                in zip(table.lr, table.global_batch, table.lr_ref_batch, table.lr_scaling, strict=True)]
    order = table.assign(_engine=table.engine.map(ENGINE_ORDER), _lin=table.lr_scaling != "none")
    order = order.sort_values(["epochs", "batch_per_gpu", "gpus", "nodes", "_engine", "_lin", "warmup_epochs", "sync_bn"],
                              kind="stable")
    return order.drop(columns=["_engine", "_lin"]).reset_index(drop=True)
