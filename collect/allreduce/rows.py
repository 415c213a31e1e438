"""An all-reduce study's cells as flat rows (pandas): one per cell (its status), and one per
(cell, message size) of each ok result.

The findings are read through jobs.allreduce.result's checks, and held to their cell (ranks,
backend, device, the sizes it asked): a block that fails shows as an "unreadable" cell saying
why, never a traceback and never a number in a table. Cells that differ only in `repeat` are one
setup; the setup's name is its ranks and backend ("2 nodes x 2 GPUs, nccl"), with any other
field that differs between the study's setups in brackets, and "[ran on 1 node]" where a
multi-node cell's ranks all ran on one machine (the local executor): a setup of its own.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from collect.cells import KindCell
from jobs.allreduce.cell import AllreduceCell, ranks_text
from jobs.allreduce.result import AllreduceFindings

UNREADABLE = "unreadable"
SHOWN = ("backend", "nodes", "gpus_per_node", "cpu_ranks_per_node", "repeat")  # in the name, or what repeats differ in
CELL_COLUMNS = ["cell_id", "setup", "repeat", "status", "error", "backend", "device", "nodes", "ranks_per_node",
                "world_size", "gpu_model", "hosts"]
SIZE_COLUMNS = ["cell_id", "setup", "repeat", "bytes", "seconds", "algbw_gbps", "busbw_gbps"]


@dataclass(frozen=True)
class AllreduceRows:
    cells: pd.DataFrame  # every allreduce cell of the study, any status (CELL_COLUMNS)
    sizes: pd.DataFrame  # each readable ok cell's sizes (SIZE_COLUMNS)


def setup_name(cell: AllreduceCell, extra: list[str]) -> str:
    """"2 nodes x 2 GPUs, nccl"; "2 CPU ranks, gloo [iters=50]" when iters differs between setups."""
    fields = cell.to_dict()
    brackets = ", ".join(f"{k}={fields[k]}" for k in extra)
    name = f"{ranks_text(cell.nodes, cell.gpus_per_node, cell.tasks_per_node)}, {cell.backend}"
    return name + (f" [{brackets}]" if brackets else "")


def varying(cells: list[AllreduceCell]) -> list[str]:
    """The fields, other than those the name shows, that differ between the cells."""
    dicts = [c.to_dict() for c in cells]
    names = [k for k in (dicts[0] if dicts else {}) if k not in SHOWN and k != "kind"]
    return [k for k in names if len({json.dumps(d[k]) for d in dicts}) > 1]


def findings_of(c: KindCell, cell: AllreduceCell) -> AllreduceFindings:
    """The ok result's findings, checked field by field and against the cell that asked for them."""
    found = c.kept.body if c.kept is not None else None
    if not isinstance(found, AllreduceFindings):  # types and ranges were checked when the file was read
        raise ValueError("allreduce: an ok result without its findings")
    for name, want in (("world_size", cell.ranks), ("backend", cell.backend), ("device", cell.device)):
        if getattr(found, name) != want:
            raise ValueError(f"allreduce.{name} = {getattr(found, name)!r}, but the cell asks {want!r}")
    if tuple(s.bytes for s in found.sizes) != cell.sizes():
        raise ValueError("allreduce.sizes are not the sizes the cell asks (its sweep, the gradient and the bucket)")
    return found


def allreduce_rows(kind_cells: tuple[KindCell, ...]) -> AllreduceRows:
    """Every allreduce cell's row, and each readable ok result's sizes."""
    cells = [AllreduceCell.from_dict(c.cell) for c in kind_cells]  # checked when loaded (collect.load)
    order = sorted(range(len(cells)), key=lambda i: _rank(cells[i]))  # setups by size, repeats in order
    kind_cells, cells = tuple(kind_cells[i] for i in order), [cells[i] for i in order]
    extra = varying(cells)
    cell_rows: list[dict[str, Any]] = []
    size_rows: list[dict[str, Any]] = []
    for c, cell in zip(kind_cells, cells, strict=True):
        row = _cell_row(c, cell, setup_name(cell, extra))
        if c.status == "ok":
            try:
                found = findings_of(c, cell)
            except (TypeError, ValueError) as exc:
                row.update(status=UNREADABLE, error=f"result file {c.cell_id}.json: {exc}; move it aside and "
                                                    "rerun `submit` to redo that cell")
            else:
                size_rows += [dict(cell_id=c.cell_id, setup=row["setup"], repeat=cell.repeat, bytes=s.bytes,
                                   seconds=s.seconds, algbw_gbps=s.algbw_gbps, busbw_gbps=s.busbw_gbps)
                              for s in found.sizes]
        cell_rows.append(row)
    return AllreduceRows(pd.DataFrame(cell_rows, columns=CELL_COLUMNS), pd.DataFrame(size_rows, columns=SIZE_COLUMNS))


def _rank(cell: AllreduceCell) -> tuple:
    """CPU before GPU, then fewer nodes, fewer ranks per node, the backend, the other fields, the repeat."""
    fields = cell.to_dict()
    rest = json.dumps({k: v for k, v in fields.items() if k not in SHOWN}, sort_keys=True)
    return (cell.device != "cpu", cell.nodes, cell.tasks_per_node, cell.backend, rest, cell.repeat)


def _cell_row(c: KindCell, cell: AllreduceCell, setup: str) -> dict[str, Any]:
    result = c.kept
    env = result.env if result is not None else {}
    error = result.error if result is not None else None
    ran_on = _node_count(env)
    if ran_on and ran_on < cell.nodes:  # off-cluster every rank runs on one machine: another link was timed
        setup += f" [ran on {ran_on} node{'s' if ran_on > 1 else ''}]"
    return dict(cell_id=c.cell_id, setup=setup, repeat=cell.repeat, status=c.status,
                error=error.strip().splitlines()[-1] if error and error.strip() else None,
                backend=cell.backend, device=cell.device, nodes=cell.nodes, ranks_per_node=cell.tasks_per_node,
                world_size=cell.ranks, gpu_model=_text(env.get("gpu_model")), hosts=_hosts(env))


def _node_count(env: dict[str, Any]) -> int:
    """The nodes the ranks ran on: SLURM's node names, else the hostnames; 0 when not recorded."""
    for key in ("nodes", "hostnames"):
        names = env.get(key)
        if isinstance(names, list) and names:
            return len(set(map(str, names)))
    return 0


def _text(value: Any) -> Any:
    return value if isinstance(value, str) else None


def _hosts(env: dict[str, Any]) -> Any:
    """"n1,n2": the hosts every rank ran on (a hand-edited env that holds no list of names: the one hostname)."""
    names = env.get("hostnames")
    if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
        return ",".join(names)
    return _text(env.get("hostname"))
