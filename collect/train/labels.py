"""How the training answers name what they speak of: a row of a table (its setup and batch),
the device it ran on, and the 1-GPU run a speedup is measured against."""
from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from types import SimpleNamespace
from typing import Any, Optional

import pandas as pd

from collect.evidence import Evidence
from collect.render import status_text
from collect.train.grids import SHOWN, launch_name, row_name, setup_name, varying
from collect.train.tables import BASE_KEYS, CPU, on_cpu  # noqa: F401 (CPU, on_cpu: their home is tables, for grids)


def cpu_only(models: Iterable[Any]) -> bool:
    """Every run recorded (at least one) ran on a CPU: such a study speaks of no GPU-hours (its
    "GPUs" were processes sharing a few cores)."""
    named = [m for m in models if isinstance(m, str) and m]
    return bool(named) and all(map(on_cpu, named))


def device(models: Iterable[Any]) -> str:
    """"NVIDIA H200"; "a CPU, not a GPU"; both named where the rows ran on both."""
    names = sorted({"a CPU, not a GPU" if on_cpu(m) else str(m) for m in models if isinstance(m, str) and m})
    return " and ".join(names) or "an unrecorded device"


def hosts(value: Any) -> int:
    """The distinct hosts of a result's `hosts` ("n1,n2,n1" -> 2; not recorded -> 0)."""
    return len({h for h in value.split(",") if h}) if isinstance(value, str) else 0


def on_fewer_hosts(cells: Optional[pd.DataFrame], engine: Any, nodes: int, per_node: int) -> bool:
    """A multi-node setup none of whose ok results (in `cells`, the train_cells frame) ran on as many
    hosts as nodes (by their hostnames)."""
    return nodes > 1 and hosts_ran(cells, engine, nodes, per_node) < nodes


def hosts_ran(cells: Optional[pd.DataFrame], engine: Any, nodes: int, per_node: int) -> int:
    """The most distinct hosts an ok result of the setup ran on (0: none recorded)."""
    if cells is None or "hosts" not in cells:
        return 0
    mine = cells[(cells.engine == engine) & (cells.nodes == nodes) & (cells.gpus_per_node == per_node)
                 & (cells.status == "ok")]
    return max((hosts(h) for h in mine.hosts), default=0)


class Namer:
    """Names a table's rows as its grid does: the setup, the fields that vary among the rows
    beyond those named, and the batch per GPU. Given the study's cells, a setup of N nodes whose
    results all ran on fewer hosts is named for what ran: "4 GPUs on one host (launched as 2 x 2), DDP"."""

    def __init__(self, table: pd.DataFrame, key: str, shown: Optional[set[str]] = None,
                 cells: Optional[pd.DataFrame] = None) -> None:
        self.key = key
        self.table = table
        self.fields = varying(table, (shown or set()) | SHOWN)
        self.cells = cells

    def name(self, row: Any, batch: bool = True) -> str:
        text = row_name(row, self.fields)
        nodes, per_node = int(row.nodes), int(row.gpus_per_node)
        if (not getattr(row, "hosts_seen", 0) and self.cells is not None
                and on_fewer_hosts(self.cells, row.engine, nodes, per_node)):  # a table without hosts_seen
            text = text.replace(launch_name(nodes, per_node),
                                launch_name(nodes, per_node, max(1, hosts_ran(self.cells, row.engine, nodes, per_node))), 1)
        return text + (f", batch {row.batch_per_gpu} per GPU" if batch else "")

    def evidence(self, position: int, row: Any, batch: bool = True) -> Evidence:
        return Evidence(self.key, position, self.name(row, batch))


def base_key(row: Any) -> tuple:
    """What a run shares with its 1-GPU baseline (collect.train.tables.BASE_KEYS)."""
    return tuple(getattr(row, k) for k in BASE_KEYS)


def missing_reason(row: Any) -> str:
    """Why a row has no figure: its status ("OOM", "failed: <last error line>", "pending"...); a failed
    row without an error line is a job that ended without writing a result (collect.load.ended_state)."""
    why = status_text(row.status)
    error = getattr(row, "error", None)
    if row.status != "failed":
        return why
    return f"{why}: {error}" if isinstance(error, str) and error else f"{why}: its job left no result or error"


def present(value: Any) -> bool:
    """A number that is there (not None, not NaN)."""
    return value is not None and not (isinstance(value, float) and math.isnan(value))


SETUP_FIELDS = ("engine", "nodes", "gpus_per_node")
REMEDY_FIELDS = ("lr_scaling", "warmup_epochs", "sync_bn", "broadcast_buffers")


def config_label(fields: Mapping[str, Any], vary: Collection[str]) -> str:
    """A training configuration named by the fields in `vary` (those that differ among the
    configurations named together), in the tables' words: the setup ("2 GPUs, DDP") where the engine
    or the GPUs vary, "batch 512", "5 epochs", "timed 2", its remedies where they vary ("linear LR,
    warmup 2, SyncBN, gradients only": each only where on), any other field as name=value.
    Example: {engine: ddp, nodes: 1, gpus_per_node: 2, batch_per_gpu: 512, ...}, vary {engine, batch_per_gpu}
    -> "2 GPUs, DDP, batch 512"."""
    parts = []
    if any(f in vary for f in SETUP_FIELDS):
        nodes, per_node = int(fields.get("nodes", 1)), int(fields.get("gpus_per_node", 1))
        parts.append(setup_name(SimpleNamespace(engine=fields.get("engine"), nodes=nodes, gpus_per_node=per_node,
                                                gpus=nodes * per_node)))
    words = {"batch_per_gpu": lambda v: f"batch {v}", "epochs": lambda v: f"{v} epochs", "timed_epoch": lambda v: f"timed {v}",
             "lr_scaling": lambda v: f"{v} LR" if v != "none" else "", "warmup_epochs": lambda v: f"warmup {v}" if v else "",
             "sync_bn": lambda v: "SyncBN" if v else "", "broadcast_buffers": lambda v: "" if v else "gradients only"}
    for name in vary:
        if name in SETUP_FIELDS:
            continue
        word = words.get(name, lambda v, n=name: f"{n}={v}")
        parts.append(word(fields.get(name)))
    return ", ".join(p for p in parts if p)
