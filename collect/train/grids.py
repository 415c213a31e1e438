"""The tables (collect.train.tables) laid out for people as Grids: the homework's layouts, a status
where a configuration has no number, a caption with units, timed epoch, GPU and repeats, and
the formulas beside each table."""
from __future__ import annotations

import math
from typing import Optional

import pandas as pd

import collect.train.formulas as f
from jobs.core.bandwidth import bytes_text
from collect.render import (NO_BASELINE, Grid, accuracy_digits, gbps, number, percent, seconds, signed,
                            status_text)
from collect.packing import beside_mark, beside_note
from collect.repeats import ranged
from collect.view import VARIES
from collect.train.tables import CONFIG, EARLIER_ACCURACY, INDEPENDENT, Q4_BASELINE_BATCH, Q4_EPOCH, SHARED, on_cpu

ENGINE_NAMES = {"single": "1 GPU", "dp": "DataParallel", "ddp": "DDP"}
GPU_FORMULA = ("GPU util. = the mean of NVML's utilization samples, taken every 50 ms over the timed epoch on the "
               "GPUs of rank 0 (each the share of its last period a kernel ran): the share of the epoch the GPU was "
               "busy; - where the samples span less than half the epoch or none was taken (a CPU run); peak memory "
               "= torch's peak allocation on the GPU")
STEP_FORMULA = "steps = ceil(images per epoch / batch size); train time / step = train time / steps"
SHOWN = {"engine", "nodes", "gpus_per_node", "batch_per_gpu"}




def setup_name(row) -> str:
    """"1 GPU", "2 GPUs, DDP", "2 nodes x 2 GPUs, DDP"; a setup of N nodes whose results ran on fewer
    hosts (the row's hosts_seen, where the table has it) is named for what ran: "4 GPUs on one host
    (launched as 2 x 2), DDP" (the one name of that setup, in every table and answer)."""
    if row.engine == "single":
        return "1 GPU"
    where = launch_name(int(row.nodes), int(row.gpus_per_node), int(getattr(row, "hosts_seen", 0) or 0))
    return f"{where}, {ENGINE_NAMES[row.engine]}"


def launch_name(nodes: int, per_node: int, hosts: int = 0) -> str:
    """"2 GPUs"; "2 nodes x 2 GPUs"; where its results ran on fewer `hosts` than nodes (0: not known),
    "4 GPUs on one host (launched as 2 x 2)"."""
    if nodes < 2:
        return _gpus(per_node)
    if not 0 < hosts < nodes:
        return f"{nodes} nodes x {_gpus(per_node)}"
    on = "one host" if hosts == 1 else f"{hosts} hosts"
    return f"{_gpus(nodes * per_node)} on {on} (launched as {nodes} x {per_node})"


def _gpus(count: int) -> str:
    return f"{count} GPU{'s' if count > 1 else ''}"


def remedy_name(row) -> str:
    parts = []
    if row.lr_scaling in ("linear", "sqrt"):
        parts.append(f"{row.lr_scaling} LR scaling")
    if row.warmup_epochs:
        parts.append(f"{row.warmup_epochs}-epoch warmup")
    if bool(row.sync_bn):
        parts.append("SyncBatchNorm")
    if not bool(getattr(row, "broadcast_buffers", True)):
        parts.append("gradients only (no buffer broadcast)")
    return " + ".join(parts) or "none"


def varying(table: pd.DataFrame, shown: set[str]) -> list[str]:
    """Configuration fields, other than those a grid shows, that differ between its rows; between
    all the rows of its table where it shows some of them (collect.view.VARIES)."""
    whole = table.attrs.get(VARIES)
    if whole is not None:
        return [c for c in CONFIG if c not in shown and c in whole]
    return [c for c in CONFIG if c not in shown and c in table and table[c].nunique(dropna=False) > 1]


DDP_ONLY = ("broadcast_buffers",)  # settings of DDP alone: no label on a 1-GPU or DataParallel row (TA5 18)


def row_name(row, fields: list[str]) -> str:
    """The setup and, in brackets, the varying `fields` that apply to it."""
    extra = ", ".join(f"{c}={getattr(row, c)}" for c in fields if c not in DDP_ONLY or row.engine == "ddp")
    return setup_name(row) + (f" [{extra}]" if extra else "")


def gpu_text(table: pd.DataFrame) -> str:
    models = sorted({str(m) for m in table.gpu_model.dropna() if str(m)}) if len(table) else []
    return ", ".join(models) or "unknown (no result yet)"


def repeats_text(table: pd.DataFrame) -> str:
    counts = sorted({int(r) for r in table.repeats if r}) if len(table) else []
    if not counts:
        return "no finished run yet"
    span = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    return f"{span} per configuration" + (" (median (min-max) shown)" + seeding_text(table) if counts[-1] > 1 else "")


def seeding_text(table: pd.DataFrame) -> str:
    """How the repeats behind a spread were seeded: each from its own run_seed, or, for results
    written before repeats were seeded, all from the cell's seed (the same run, so no spread to speak of)."""
    spread = table[table.seeding.isin([INDEPENDENT, SHARED])]
    shared = int((spread.seeding == SHARED).sum())
    if not shared:
        return ", seeded independently (run_seed)"
    which = "the repeats" if shared == len(spread) else f"the repeats of {shared} of {len(spread)} configurations"
    return (f"; {which} trained from one seed (results written before repeats were seeded): their spread is not "
            "that of independent runs")


def repeats_cell(row) -> str:
    """The ok repeats, "3 (one seed)" where they are not independent runs; "1 (+1 failed)" where runs of the
    configuration ended with no answer (ENDED_NOTE, TA7 15)."""
    ended = f" (+{row.ended} failed)" if getattr(row, "ended", 0) else ""
    return (f"{row.repeats} (one seed)" if row.seeding == SHARED else str(row.repeats)) + ended


ENDED_NOTE = ("+N failed beside the repeats: runs of the configuration that ended with no answer (failed, timed out "
              "or cancelled), named at the top of the hand-in")


def ended_note(table: pd.DataFrame) -> list[str]:
    """ENDED_NOTE where a row of `table` is so marked."""
    return [ENDED_NOTE] if "ended" in table and (table.ended > 0).any() else []


def caption(table: pd.DataFrame, units: str, timed: str) -> str:
    return f"Units: {units}. Timed: {timed}. GPU: {gpu_text(table)}. Repeats: {repeats_text(table)}."


def timed_text(protocol: Optional[tuple[int, int]]) -> str:
    if protocol is None:
        return "no timing runs in this study"
    epochs, timed = protocol
    return f"epoch {timed} of {epochs}" + (" (the earlier ones warm up)" if timed > 1 else "")




def q1_grid(q1: pd.DataFrame, protocol) -> Grid:
    header = ["batch size", "train time (s)", "epoch time (s)", "data wait (s)", "data wait / epoch", "train images/s",
              "steps", "train time / step (ms)", "peak memory (GiB)", "GPU util. (%)", "repeats"]
    fields = varying(q1, SHOWN)
    rows = []
    for r in q1.itertuples(index=False):
        extra = f" [{', '.join(f'{c}={getattr(r, c)}' for c in fields)}]" if fields else ""
        name = str(r.batch_per_gpu) + extra + beside_mark(r)
        if r.status != "ok":
            rows.append([name, status_text(r.status)] + [""] * 8 + [str(r.runs)])
            continue
        rows.append([name, ranged(r, "train_s"), ranged(r, "epoch_s"), seconds(r.data_wait_s), percent(r.data_share, 0),
                     number(r.train_images_per_s, 0), f"{r.steps:,}", number(r.step_ms, 2), number(r.peak_mem_gib, 2),
                     number(r.gpu_util_pct, 0), repeats_cell(r)])
    return Grid("q1", "Q1: one epoch on 1 GPU by batch size", caption(q1, "seconds per epoch", timed_text(protocol)),
                header, rows,
                ["train time = the steps' copies to the GPU, forward, backward and update, timed on the GPU (CUDA "
                 "events): the epoch with its data ready, the Q1 figure; data wait = time the loop was blocked on "
                 "the loader (the GPU may still be busy then, so train time + data wait can exceed the epoch)",
                 "train images/s = images per epoch / train time", STEP_FORMULA, GPU_FORMULA,
                 "the sweep stops at the first batch that does not fit (OOM)", f.FORMULAS["spread"], *beside_note(q1),
                 *ended_note(q1)],
                "" if rows else "No 1-GPU timing runs in this study.")


def table1_grid(t1: pd.DataFrame, protocol) -> Grid:
    """The homework's layout: a row per setup, a time / speedup / efficiency column group per batch."""
    batches = sorted(t1.batch_per_gpu.unique())
    fields = varying(t1, SHOWN)
    header = ["setup"] + [f"b={b} {what}" for b in batches
                          for what in ("time (s)", "speedup", "efficiency", "data wait / epoch")]
    names = [row_name(r, fields) for r in t1.itertuples(index=False)]
    rows = []
    for name, group in t1.groupby(pd.Series(names, index=t1.index), sort=False):
        by_batch = {r.batch_per_gpu: r for r in group.itertuples(index=False)}
        line = [name]
        for b in batches:
            line += _table1_cells(by_batch.get(b))
        rows.append(line)
    lines = tuple(list(dict.fromkeys(names)).index(name) for name in names)  # each table row's printed line
    formulas = [f.FORMULAS["speedup"], f.FORMULAS["efficiency"],
                "T = the whole timed epoch, data loading included (the Q2 figure); T1 = the 1-GPU run's at the same b "
                "(Table 2's T1 and TN are train times, without data loading)",
                "data wait / epoch = rank 0's wait on its data loader over its epoch T",
                f.FORMULAS["spread"]]
    formulas += one_process_note(t1) + beside_note(t1)
    return Grid("table1", "Table 1: time and speedup of one epoch (weak scaling per step, fixed epoch)",
                caption(t1, "seconds per epoch; speedup and efficiency are ratios", timed_text(protocol)),
                header, rows, formulas, "" if rows else "No timing runs in this study.", lines=lines)


def table1_lines(t1: pd.DataFrame) -> list[str]:
    """The columns that name Table 1's lines (one per setup, its batches side by side)."""
    return ["engine", "nodes", "gpus_per_node"] + varying(t1, SHOWN)


ONE_PROCESS = "one process (CPU)"  # DataParallel on a CPU: T1 / TN is no speedup of N workers


def _one_process(r) -> bool:
    return r.engine == "dp" and on_cpu(r.gpu_model)


def one_process_note(table: pd.DataFrame) -> list[str]:
    """The footnote of a table that prints ONE_PROCESS for a speedup (Table 1, the test table: TA4 22), where it does."""
    if not any(_one_process(r) for r in table.itertuples(index=False)):
        return []
    return [f"{ONE_PROCESS}: on a CPU DataParallel runs one process on the global batch, so its T1 / TN is no speedup "
            "of N workers"]


def _table1_cells(r) -> list[str]:
    if r is None:
        return [NO_BASELINE, "", "", ""]
    if r.status != "ok":
        return [status_text(r.status), "", "", ""]
    wait = _or_not_measured(r.data_share, lambda v: percent(v, 0))
    if isinstance(r.t1_s, float) and math.isnan(r.t1_s):
        return [seconds(r.epoch_s), f"no T1 ({status_text(r.t1_s_status)})", "", wait]
    time = ranged(r, "epoch_s") + beside_mark(r)
    if _one_process(r):
        return [time, ONE_PROCESS, "", wait]
    return [time, number(r.speedup), number(r.efficiency), wait]


def strong_grid(strong: pd.DataFrame, protocol) -> Grid:
    header = ["setup", "global batch B", "batch per GPU", "T1 at batch B (s)", "TN (s)", "speedup", "efficiency"]
    fields = varying(strong, SHOWN | {"global_batch"})
    rows = []
    for r in strong.itertuples(index=False):
        base = seconds(r.t1_strong_s) if r.t1_strong_status == "ok" else status_text(r.t1_strong_status)
        line = [row_name(r, fields), str(r.global_batch), str(r.batch_per_gpu), base]
        line += ([status_text(r.status), "", ""] if r.status != "ok" else [ranged(r, "epoch_s"), ONE_PROCESS, ""]
                 if _one_process(r) else [ranged(r, "epoch_s"), number(r.speedup), number(r.efficiency)])
        rows.append(line)
    return Grid("strong", "Strong scaling: the global batch fixed",
                caption(strong, "seconds per epoch; ratios", timed_text(protocol)), header, rows,
                [f.FORMULAS["strong"], f.FORMULAS["efficiency"], f.FORMULAS["spread"]],
                "" if rows else "No strong-scaling pairs: no 1-GPU run at any N-GPU run's global batch.")


def table2_grid(t2: pd.DataFrame, protocol) -> Grid:
    header = ["setup", "batch per GPU", "T1 train (s)", "TN train (s)", "compute est. T1/N (s)", "comm est. TN - T1/N (s)",
              "comm share", "compute measured (s)", "comm measured (s)", "comm measured / TN", "data wait (s)"]
    fields = varying(t2, SHOWN)
    rows = []
    for r in t2.itertuples(index=False):
        t1 = seconds(r.t1_train_s) if r.t1_train_s_status == "ok" else f"no T1 ({status_text(r.t1_train_s_status)})"
        line = [row_name(r, fields) + beside_mark(r), str(r.batch_per_gpu), t1]
        if r.status != "ok":
            rows.append(line + [status_text(r.status)] + [""] * 7)
            continue
        not_measured = math.isnan(r.comm_measured_s)
        silent = _one_process(r)  # one process on the global batch: nothing is communicated
        line += [ranged(r, "train_s"), seconds(r.compute_est_s)]
        share = T1N_BREAKS if r.t1n_breaks else _or_not_measured(r.comm_share, comm_share_text)
        line += [NO_TRAFFIC, ""] if silent else [seconds(r.comm_est_s), share]
        line += ["not measured"] * 3 if not_measured else [seconds(r.compute_measured_s), seconds(r.comm_measured_s),
                                                           comm_share_text(r.comm_measured_share)]
        line += [_or_not_measured(r.data_wait_s, seconds)]
        rows.append(line)
    formulas = [f.FORMULAS["compute"], f.FORMULAS["comm"], "comm share = (TN - T1 / N) / TN", f.FORMULAS["measured"],
                f"{T1N_BREAKS}: compute measured over {f.BREAKS:g} x T1/N or under T1/N / {f.BREAKS:g}, so TN - T1/N is "
                "no communication time and no share is given",
                "T1, TN here = train times: the timed epoch without waiting on data (the Q1 figure; Table 1's T1, TN "
                "are whole epochs, data loading included): data loading is neither compute nor communication; data "
                "wait = rank 0's wait on its loader in that epoch (outside T)",
                f.FORMULAS["spread"], *beside_note(t2)]
    return Grid("table2", "Table 2: compute and communication per epoch",
                caption(t2, "seconds per epoch", timed_text(protocol)), header, rows, formulas,
                "" if rows else "No multi-GPU timing runs in this study.")


T1N_BREAKS = "T1/N breaks"  # Table 2's comm share where formulas.t1n_breaks: the one rule of the table and Q3.1
NO_TRAFFIC = "no traffic (CPU)"  # DataParallel on a CPU: one process, so no communication and no rate


# Tables 2 and 3's figures as printed: the answers that quote them (Q3.1, Q3.2) format them with these (TA4 10, 23)
def comm_share_text(value: float) -> str:  # Table 2's comm share: a whole percent
    return percent(value, 0)


def busbw_text(value: float) -> str:  # Table 3's busbw measured (GB/s): two decimals (0.98, not 1.0)
    return number(value)


def busbw_share_text(value: float) -> str:  # Table 3's share of busbw: a tenth of a percent
    return percent(value)


# Table 3's "Q3.2 range" column (the table's q32_range, from collect.train.answers_bandwidth.range_codes): which rates
# Q3.2's range keeps and why the others are left out (TA8 11)
KEPT, OVER, BREAKS, TWICE, UNSETTLED = "kept", "over", "T1/N", "2x", "noise"
RANGE_CODES = (f"Q3.2 range: {KEPT} = in Q3.2's range; {OVER} = TN - T1/N under the all-reduce the run measured (may "
               f"overstate); {BREAKS} = T1/N breaks (Table 2); {TWICE} = TN - T1/N over twice the all-reduce measured "
               f"(mostly not link time); {UNSETTLED} = TN - T1/N not settled by the runs")


def table3_grid(t3: pd.DataFrame, protocol) -> Grid:
    header = ["setup", "batch per GPU", "steps", "P", "GB per GPU", "comm est. (s)", "util. est. (GB/s)",
              "comm measured (s)", "util. measured (GB/s)", "busbw measured (GB/s)", "share est.", "share measured",
              "Q3.2 range"]
    fields = varying(t3, SHOWN)
    rows = []
    for r in t3.itertuples(index=False):
        line = [row_name(r, fields) + beside_mark(r), str(r.batch_per_gpu), str(r.steps), f"{r.gradients:,}",
                number(r.bytes_per_gpu / f.GB)]
        if r.status != "ok":
            rows.append(line + [status_text(r.status)] + [""] * 7)
            continue
        if r.engine == "dp" and on_cpu(r.gpu_model):  # one process on the global batch: nothing is communicated
            rows.append(line + [NO_TRAFFIC] + [""] * 7)
            continue
        est = seconds(r.comm_est_s) if r.t1_train_s_status == "ok" else f"no T1 ({status_text(r.t1_train_s_status)})"
        line += [est, _gbps(r.util_est_gbps, r.comm_est_s), _or_not_measured(r.comm_measured_s, seconds),
                 _or_not_measured(r.util_measured_gbps, gbps), _or_not_measured(r.busbw_gbps, busbw_text),
                 _share(r.share_est, r.busbw_gbps), _share(r.share_measured, r.busbw_gbps), getattr(r, "q32_range", "")]
        rows.append(line)
    formulas = [f.FORMULAS["steps"], f.FORMULAS["bytes"], f.FORMULAS["bandwidth"], f.FORMULAS["share"],
                f"P = the job's all-reduced bytes / 4 (else another run's of the same model), else ResNet-18's "
                f"{f.RESNET18_GRADIENTS:,} gradients; "
                "images = the cell's train_images (50,000 for CIFAR-10)",
                "comm est. and comm measured are Table 2's; GB = 1e9 bytes",
                "util. measured divides by the exposed all-reduce only (the part the backward pass did not hide): "
                "not the link's bandwidth; a share over 100% means the time divided by is shorter than the transfer",
                RANGE_CODES, *beside_note(t3)]
    return Grid("table3", "Table 3: communication bandwidth utilization",
                caption(t3, "GB/s (1e9 bytes per second) per GPU; GB per GPU per epoch", timed_text(protocol)),
                header, rows, formulas, "" if rows else "No multi-GPU timing runs in this study.")


def _gbps(value, comm_s) -> str:
    if not math.isnan(comm_s) and comm_s <= 0:
        return "n/a (comm est. <= 0)"
    return gbps(value)


def _share(value, busbw) -> str:
    """A share of busbw; over 100% no share (the time divided by is shorter than the transfer)."""
    if math.isnan(busbw):
        return "no busbw"
    return "over 100%: no rate" if over_busbw(value) else busbw_share_text(value)


def over_busbw(share: float) -> bool:
    """A share of busbw over 100%: the time divided by is shorter than the transfer, so Table 3 gives it no rate."""
    return share > 1


def _or_not_measured(value, fmt) -> str:
    return "not measured" if value is None or math.isnan(value) else fmt(value)


def by_epoch(r) -> str:
    """"23, 67, 15, 22, 34": a Q4 row's training accuracy by epoch in whole percent ("-" where not recorded)."""
    values = [getattr(r, c) for c in EARLIER_ACCURACY] + [r.accuracy]
    return ", ".join("-" if v != v else f"{100 * v:.0f}" for v in values)


def q4_grid(q4: pd.DataFrame, largest_fit: Optional[int]) -> Grid:
    header = ["setup", "batch per GPU", "global batch", "remedy", f"LR at epoch {Q4_EPOCH}", "loss", "accuracy",
              "loss - baseline", "accuracy - baseline (points)", f"accuracy by epoch 1-{Q4_EPOCH} (%)", "note"]
    fields = varying(q4, SHOWN | {"lr_scaling", "warmup_epochs", "sync_bn", "epochs", "timed_epoch"})
    rows = []
    for r in q4.itertuples(index=False):
        note = "; ".join(filter(None, ["diverged" if f.diverged(r.loss) else "", "baseline (Lab 2)" if r.baseline else (
            "largest batch that fits 1 GPU (Q1)" if r.batch_per_gpu == largest_fit else "")]))
        line = [row_name(r, fields), str(r.batch_per_gpu), str(r.global_batch), remedy_name(r)]
        if r.status != "ok" or math.isnan(r.loss):
            text = status_text(r.status) if r.status != "ok" else f"no epoch {Q4_EPOCH}"
            rows.append(line + [text, "", "", "", "", "", note])
            continue
        rows.append(line + [number(r.epoch_lr, 4), ranged(r, "loss", lambda v: number(v, 4)),
                            ranged(r, "accuracy", lambda v: percent(v, 2)),
                            "" if r.baseline else signed(r.d_loss, 4), "" if r.baseline else signed(100 * r.d_accuracy, 2),
                            by_epoch(r), note])
    formulas = [f"loss, accuracy = means over the {Q4_EPOCH}th epoch's training images, all GPUs",
                f"baseline = batch {Q4_BASELINE_BATCH} on 1 GPU, no remedy; accuracy - baseline in percentage points",
                "linear LR scaling: lr x global batch / lr_ref_batch; warmup: lr ramps to it over the warmup epochs",
                f"accuracy by epoch = the training accuracy of each epoch, whole percent (epoch {Q4_EPOCH}: the "
                "accuracy column)",
                f"{f.FORMULAS['diverged']}, at epoch {Q4_EPOCH}: the one rule of this table, the Q4 plot's legend and "
                "the answers", f.FORMULAS["spread"]]
    return Grid("q4", f"Q4: training loss and accuracy of epoch {Q4_EPOCH}, large batch vs batch {Q4_BASELINE_BATCH}",
                caption(q4, "loss (cross-entropy), accuracy (%)", f"epoch {Q4_EPOCH}"), header, rows, formulas,
                "" if rows else f"No runs of {Q4_EPOCH}+ epochs (1-GPU batch {Q4_BASELINE_BATCH}, or 4 GPUs) in this study.",
                text_columns=(0, 3, 9, 10))


def lr_rule(row) -> str:
    """"0.1"; "linear: 0.1 x 512/128 = 0.4"; with ", 2-epoch warmup" and ", SyncBN" where set."""
    text = f"{row.lr:g}"
    if row.lr_scaling == "linear":
        text = f"linear: {row.lr:g} x {row.global_batch}/{row.lr_ref_batch} = {row.lr_after_warmup:g}"
    if row.lr_scaling == "sqrt":
        text = f"sqrt: {row.lr:g} x sqrt({row.global_batch}/{row.lr_ref_batch}) = {row.lr_after_warmup:g}"
    if row.warmup_epochs:
        text += f", {row.warmup_epochs}-epoch warmup"
    return text + (", SyncBN" if bool(row.sync_bn) else "")


NO_TEST_ACCURACY = ("No run recorded test accuracy: results written before the job evaluated the test set, "
                    "or cells with test_images = 0.")


def accuracy_grid(table: pd.DataFrame) -> Grid:
    """Every configuration's final test accuracy and time to train, with the speedup of the
    time to train over the 1-GPU run at the same batch per GPU."""
    header = ["setup", "batch per GPU", "global batch", "LR rule", "epochs", "test accuracy", "time to train (s)",
              "speedup", "GPU util. (%)", "peak memory (GiB)", "test images", "repeats"]
    fields = varying(table, SHOWN | {"lr", "lr_scaling", "lr_ref_batch", "warmup_epochs", "sync_bn", "epochs",
                                     "timed_epoch"})
    # the ranks' BatchNorm spread Q7 quotes, where a DDP run measured it (collect.train.answers_q7)
    spread = "ddp_bn_rank_spread" in table and bool(table.ddp_bn_rank_spread.notna().any())
    header += ["BN spread (%)"] * spread
    # the bytes and the sampler's repeats Q5 and Q6 quote, where a DDP run recorded them (collect.train.answers_ddp)
    traffic = "ddp_grad_bytes" in table and bool(table.ddp_grad_bytes.notna().any())
    header += DDP_COLUMNS * traffic
    rows = []
    for r in table.itertuples(index=False):
        line = [row_name(r, fields), str(r.batch_per_gpu), str(r.global_batch), lr_rule(r), str(r.epochs)]
        if r.status != "ok":
            rows.append(line + [status_text(r.status)] + [""] * 5 + [str(r.runs)] + [""] * (spread + len(DDP_COLUMNS) * traffic))
            continue
        recorded = not math.isnan(r.test_accuracy)
        # the count is the test images column's: "100% of 100 (92% of 100-100% of 100)" would say it thrice
        line.append(ranged(r, "test_accuracy", lambda v, n=r.evaluated_images: percent(v, accuracy_digits(n))) if recorded
                    else "not recorded")
        line.append(ranged(r, "time_to_train_s"))
        line.append(ONE_PROCESS if _one_process(r) else number(r.speedup) if not math.isnan(r.speedup)
                    else f"no T1 ({status_text(r.t1_time_s_status)})")
        line += [number(r.gpu_util_pct, 0), number(r.peak_mem_gib, 2)]
        line += [test_images_text(r) if recorded else "-", repeats_cell(r)]
        line += [_or_not_measured(100 * r.ddp_bn_rank_spread, lambda v: f"{v:.1f}")] * spread
        line += _ddp_cells(r) * traffic
        rows.append(line)
    ok = table[table.status == "ok"]
    note = "" if ok.test_accuracy.notna().any() or ok.empty else " " + NO_TEST_ACCURACY
    formulas = [f.FORMULAS["time_to_train"], f.FORMULAS["train_speedup"],
                "test accuracy = top-1 over the test images after the last epoch: the model in eval mode "
                "(BatchNorm's running statistics: rank 0's on every rank, broadcast to all before each evaluation), each "
                "image once over all ranks; test images = how many (an "
                "accuracy shows the decimals they resolve: 100 images, whole points); \"of N planned\": the cell asked "
                "N (test_images) and its data set holds fewer",
                f.FORMULAS["scaled_lr"], GPU_FORMULA, f.FORMULAS["spread"], *one_process_note(table), *ended_note(table)]
    formulas += [DDP_FORMULA] * traffic
    formulas += ["BN spread = the widest difference between ranks in one BatchNorm channel's running variance, as a "
                 "share of its layer's mean variance, after the last epoch and before its evaluation (a DDP run's; 0: the "
                 "ranks agree); each evaluation gives all ranks rank 0's statistics, so it is the drift of the last epoch "
                 "(of its last step where the buffers are broadcast each step)"] * spread
    return Grid("test", "Test accuracy and time to train",
                caption(table, "test accuracy (%), time to train (seconds)", "every epoch, summed") + note,
                header, rows, formulas, "" if rows else "No runs in this study.", text_columns=(0, 3))


def test_images_text(r) -> str:
    """The images the accuracy is over, and the cell's test_images where the data set held fewer (TA4 18: the
    printed plan's 10,000 against a synthetic set's 100)."""
    evaluated = int(r.evaluated_images)
    planned = getattr(r, "test_images", float("nan"))
    if planned == planned and evaluated < int(planned):
        return f"{evaluated:,} of {int(planned):,} planned"
    return f"{evaluated:,}"


DDP_COLUMNS = ["gradients per step", "buffers per step", "broadcast at wrap", "same position w/o set_epoch",
               "same position with set_epoch"]
DDP_FORMULA = ("a DDP run's own record: the gradients it all-reduces each step, the buffers (BatchNorm's running "
               "statistics) rank 0 broadcasts before each forward, the parameters and buffers broadcast once when DDP "
               "wraps the model (MiB = 2^20 bytes); same position = the share of places i in a rank's order of samples "
               "(its i-th sample of the epoch) that hold the same sample in epoch 2 as in epoch 1, without and with "
               "set_epoch (by chance about 1 in the data set's images)")


def _ddp_cells(r) -> list[str]:
    if math.isnan(r.ddp_grad_bytes):
        return ["-"] * len(DDP_COLUMNS)
    return [bytes_text(r.ddp_grad_bytes), bytes_text(r.ddp_buffer_bytes), bytes_text(r.ddp_init_bytes),
            percent(r.ddp_order_overlap_without_set_epoch), percent(r.ddp_order_overlap_with_set_epoch)]
