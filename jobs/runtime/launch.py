"""Where this process sits in the job: rank, world size and rendezvous, read from the environment.

One reader for every launcher: torchrun, srun under SLURM, submitit's local executor,
or none (a single process).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional
from collections.abc import Mapping

# Below Linux's ephemeral range (32768+), so a port we pick is not one the kernel hands out.
PORT_BASE = 20_000
PORT_SPAN = 12_000


@dataclass(frozen=True)
class Placement:
    rank: int
    world_size: int
    local_rank: int
    master_addr: str
    master_port: int
    launcher: str  # torchrun | slurm | submitit-local | none
    job_id: Optional[str] = None
    array_task_id: Optional[str] = None
    node_name: Optional[str] = None
    local_world_size: int = 1  # ranks on this node (each drives its own GPU under DDP)


def port_for_job(job_id: str) -> int:
    """A port two jobs on one node don't share: every job (and array task) has its own id."""
    digits = re.sub(r"\D", "", job_id) or "0"
    return PORT_BASE + int(digits) % PORT_SPAN


def first_host(nodelist: str) -> str:
    """The first host of a SLURM node list: 'gr[001-003,007],ga001' -> 'gr001'."""
    match = re.match(r"([^,\[]+)(?:\[([^\]]+)\])?", nodelist.strip())
    if not match:
        raise ValueError(f"cannot read SLURM node list {nodelist!r}")
    prefix, ranges = match.groups()
    if not ranges:
        return prefix
    return prefix + ranges.split(",")[0].split("-")[0]


def tasks_on_node(env: Mapping[str, str]) -> int:
    """This node's tasks in the step: SLURM_STEP_TASKS_PER_NODE is "2(x2)" or "3,1" (nodes in order)."""
    counts = env.get("SLURM_STEP_TASKS_PER_NODE") or env.get("SLURM_TASKS_PER_NODE") or "1"
    node = int(env.get("SLURM_NODEID", "0"))
    expanded = []
    for part in counts.split(","):
        count, _, repeat = part.partition("(x")
        expanded += [int(count)] * int(repeat.rstrip(")") or 1)
    return expanded[min(node, len(expanded) - 1)]


def detect(env: Optional[Mapping[str, str]] = None) -> Placement:
    env = os.environ if env is None else env
    if "RANK" in env and "WORLD_SIZE" in env and "MASTER_ADDR" in env:
        return Placement(
            rank=int(env["RANK"]), world_size=int(env["WORLD_SIZE"]),
            local_rank=int(env.get("LOCAL_RANK", "0")), master_addr=env["MASTER_ADDR"],
            master_port=int(env.get("MASTER_PORT", "29500")), launcher="torchrun",
            job_id=env.get("SLURM_JOB_ID"), array_task_id=env.get("SLURM_ARRAY_TASK_ID"),
            node_name=env.get("SLURMD_NODENAME"),
            local_world_size=int(env.get("LOCAL_WORLD_SIZE", env["WORLD_SIZE"])),
        )
    # before SLURM: a local job started from inside an srun shell inherits SLURM_* too
    if "SUBMITIT_LOCAL_GLOBALID" in env:
        job_id = env.get("SUBMITIT_LOCAL_JOB_ID", "0")
        return Placement(
            rank=int(env["SUBMITIT_LOCAL_GLOBALID"]), world_size=int(env.get("SUBMITIT_LOCAL_NTASKS", "1")),
            local_rank=int(env.get("SUBMITIT_LOCAL_LOCALID", "0")), master_addr="127.0.0.1",
            master_port=port_for_job(job_id), launcher="submitit-local", job_id=job_id,
            local_world_size=int(env.get("SUBMITIT_LOCAL_NTASKS", "1")),  # every task runs on this machine
        )
    if "SLURM_PROCID" in env and "SLURM_STEP_ID" in env:  # a task of an srun step
        job_id = env["SLURM_JOB_ID"]
        nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST", "localhost")
        return Placement(
            rank=int(env["SLURM_PROCID"]), world_size=int(env.get("SLURM_STEP_NUM_TASKS", env.get("SLURM_NTASKS", "1"))),
            local_rank=int(env.get("SLURM_LOCALID", "0")), master_addr=first_host(nodelist),
            master_port=port_for_job(job_id), launcher="slurm", job_id=job_id,
            array_task_id=env.get("SLURM_ARRAY_TASK_ID"), node_name=env.get("SLURMD_NODENAME"),
            local_world_size=tasks_on_node(env),
        )
    return Placement(rank=0, world_size=1, local_rank=0, master_addr="127.0.0.1", master_port=0, launcher="none")
