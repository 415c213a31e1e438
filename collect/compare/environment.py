"""What the two sets ran on, side by side (GPU model, driver, torch, CUDA, NCCL, nodes per run, and
whether the runs had their machine to themselves), so that a comparison across hardware, software
or neighbours is never taken for a change in the code."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from collect.packing import packing
from jobs.core.result import Status

FIELDS = (("GPU model", "gpu_model"), ("driver", "env_driver"), ("torch", "env_torch"), ("CUDA", "env_cuda"),
          ("NCCL", "env_nccl"))  # name for people, collect.load's envelope column


@dataclass(frozen=True)
class EnvLine:
    name: str  # "GPU model"
    a: str  # its values over A's runs: "NVIDIA H200"; "2.5.1; 2.6.0" when they differ; "-" when none recorded
    b: str

    @property
    def differs(self) -> bool:
        return self.a != self.b

    def text(self) -> str:
        return f"{self.name}: {self.a} (A) vs {self.b} (B)" if self.differs else f"{self.name}: {self.a}"


def values(frame: pd.DataFrame, column: str) -> str:
    """The distinct values of a column over the runs that ran (a result of any status), sorted,
    "; "-joined; "-" for none."""
    ran = frame[frame.status.isin(list(Status))]
    found = sorted({str(v) for v in ran[column].dropna()}) if column in ran else []
    return "; ".join(found) or "-"


def nodes_per_run(frame: pd.DataFrame) -> str:
    """The distinct numbers of hosts a run ran on (its envelope's hosts, "n1,n2" -> 2): "1; 2"."""
    ran = frame[frame.status.isin(list(Status))]
    counts = sorted({len(set(str(h).split(","))) for h in ran.hosts.dropna()})
    return "; ".join(map(str, counts)) or "-"


def environment(a: pd.DataFrame, b: pd.DataFrame) -> tuple[EnvLine, ...]:
    """Each field's values in A and in B (collect.load's envelopes of the two sets)."""
    lines = [EnvLine(name, values(a, column), values(b, column)) for name, column in FIELDS]
    lines.append(EnvLine("nodes per run", nodes_per_run(a), nodes_per_run(b)))
    ran = EnvLine("runs", packing(a).words(), packing(b).words())  # said where either set recorded it
    return tuple(lines + ([ran] if {ran.a, ran.b} != {"-"} else []))

