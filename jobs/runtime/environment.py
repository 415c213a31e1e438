"""What the job ran on: GPUs, driver, library versions, hosts, and what ran beside it. Recorded in every result."""
from __future__ import annotations

import datetime as dt
import functools
import os
import platform
import socket
import subprocess
import traceback
from typing import Any, Optional

import torch

from jobs.core import beside
from jobs.core.result import Result, Status


@functools.cache  # asked once per process: cells run one after another (jobs.runtime.reuse) share the driver
def gpu_driver() -> Optional[str]:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=True,
        )
        return out.stdout.split("\n")[0].strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def describe(device: torch.device) -> dict[str, Any]:
    """This process's view; hostnames and node names are gathered across ranks by the caller."""
    cuda = device.type == "cuda"
    nccl = None
    if cuda and hasattr(torch.cuda, "nccl"):
        try:
            nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
        except Exception:  # NCCL missing from this build
            nccl = None
    return {
        "device": device.type,
        "gpu_model": torch.cuda.get_device_name(device) if cuda else "cpu",
        "gpus_visible": torch.cuda.device_count() if cuda else 0,
        "driver": gpu_driver() if cuda else None,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if cuda else None,
        "nccl": nccl,
        "python": platform.python_version(),
        "cpu_threads": torch.get_num_threads(),
        "hostname": socket.gethostname(),
    }


def gather_hosts(place, env: dict[str, Any]) -> None:
    """Every rank's hostname and SLURM node name, into env (hostnames, nodes)."""
    import torch.distributed as dist

    mine = (env["hostname"], place.node_name)
    everyone: list[Any] = [mine]
    if place.world_size > 1:
        everyone = [None] * place.world_size
        dist.all_gather_object(everyone, mine)
    env["hostnames"] = sorted({h for h, _ in everyone})
    env["nodes"] = sorted({n for _, n in everyone if n})


def record_failure(result: Result, exc: BaseException) -> None:
    """The result says the run failed, with the traceback's tail."""
    result.status, result.error = Status.FAILED, "".join(traceback.format_exception(exc))[-4000:]


def finish(result: Result, place, device: torch.device, started: str, first: Optional[beside.Look] = None) -> None:
    """The envelope's last facts, for every kind of job: peak GPU memory, where it ran, when, and,
    run by the local executor, beside what (`first`: the other GPUs as it started; jobs.core.beside)."""
    spec = beside.spec_of(os.environ)
    if first is not None and spec is not None:
        result.env.update(beside.beside(spec.gpus, first, beside.look(os.environ) or {}).to_env())
    if device.type == "cuda":
        result.peak_mem_gib = torch.cuda.max_memory_allocated(device) / 2**30
    result.env.update(
        world_size=place.world_size, launcher=place.launcher, job_id=place.job_id,
        array_task_id=place.array_task_id, started_at=started, ended_at=dt.datetime.now(dt.UTC).isoformat(),
    )
