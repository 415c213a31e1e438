"""What this machine can run, for the local executor: GPUs visible and CPUs usable.

The one place that decides what fits here: `submit` skips what does not, and `plan` says it
will. Asked once per verb without importing torch: nvidia-smi lists the GPUs, and
CUDA_VISIBLE_DEVICES narrows them as CUDA would. A machine without GPUs runs any cell (a
"GPU" is then a process); one with GPUs runs only the cells whose GPUs it has.
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from typing import Optional
from collections.abc import Iterable, Mapping

from jobs.core.cell import StudyCell


@dataclass(frozen=True)
class Machine:
    gpus: int  # CUDA devices a job here would see; 0: none
    cpus: int  # CPUs this process may run on
    gpu_ids: tuple[int, ...] = ()  # those GPUs as nvidia-smi numbers them; () with gpus: 0 .. gpus-1


def visible_gpus(smi_lines: str, visible: Optional[str]) -> tuple[int, ...]:
    """The indices of the GPUs listed by `nvidia-smi -L`, narrowed by CUDA_VISIBLE_DEVICES when it is
    set (CUDA stops at the first entry it cannot use: "2,0" -> (2, 0), "" -> (), "1,7" on 2 GPUs -> (1,))."""
    listed = sum(1 for line in smi_lines.splitlines() if line.startswith("GPU "))
    if visible is None:
        return tuple(range(listed))
    found: list[int] = []
    for entry in visible.split(","):
        entry = entry.strip()
        if not entry.isdigit() or int(entry) >= listed:
            break
        found.append(int(entry))
    return tuple(found)


def count_gpus(smi_lines: str, visible: Optional[str]) -> int:
    return len(visible_gpus(smi_lines, visible))


def this_machine(env: Optional[Mapping[str, str]] = None) -> Machine:
    env = os.environ if env is None else env
    try:
        smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        smi = ""
    ids = visible_gpus(smi, env.get("CUDA_VISIBLE_DEVICES"))
    return Machine(gpus=len(ids), cpus=len(os.sched_getaffinity(0)), gpu_ids=ids)


def why_not_here(cell: StudyCell, machine: Machine) -> str:
    """"" when the cell can run on this machine; else why not and what to do, in one line.
    Every rank of a cell runs here, a multi-node cell's too."""
    if machine.gpus and cell.gpus > machine.gpus:
        return (f"needs {cell.gpus} GPUs, this machine has {machine.gpus}; run it on SLURM "
                f"(submit --executor slurm on a login node) or on a machine with {cell.gpus} GPUs")
    ranks = cell.nodes * cell.tasks_per_node
    if ranks > machine.cpus:
        return f"needs {ranks} processes, this machine has {machine.cpus} CPUs; run it on SLURM or a bigger machine"
    return ""


def not_here(cells: Iterable[StudyCell], machine: Machine) -> dict[str, list[StudyCell]]:
    """The cells this machine cannot run, by why (why_not_here), in the cells' order."""
    found: dict[str, list[StudyCell]] = {}
    for cell in cells:
        why = why_not_here(cell, machine)
        if why:
            found.setdefault(why, []).append(cell)
    return found
