"""An all-reduce cell's findings (the result JSON's "allreduce" block), typed, and read back with
every field's type and range checked: a hand-edited or hostile file raises TypeError or ValueError
naming the field (allreduce.sizes[3].seconds), so a wrong number never reaches a table. No torch.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar
from collections.abc import Mapping

from jobs.allreduce.cell import BACKENDS
from jobs.core.bandwidth import FP32_BYTES, bandwidth_gbps
from jobs.core.cell import check_choice
from jobs.core.result import Block

DEVICES = ("cuda", "cpu")
REL_TOL = 1e-9  # algbw and busbw must follow from bytes, seconds and world_size


@dataclass(frozen=True)
class SizeTiming:
    bytes: int  # the fp32 buffer all-reduced in place
    seconds: float  # per all-reduce: the timed loop / iters, the mean over ranks (nccl-tests' default)
    algbw_gbps: float  # bytes / seconds / 1e9
    busbw_gbps: float  # algbw x 2(N-1)/N


@dataclass(frozen=True)
class AllreduceFindings(Block):
    KEY: ClassVar[str] = "allreduce"
    world_size: int  # ranks that took part
    backend: str  # nccl | gloo, as the process group ran
    device: str  # cuda | cpu: where the buffers lived
    warmup: int  # untimed all-reduces per size
    iters: int  # timed all-reduces per size
    sizes: tuple[SizeTiming, ...]  # ascending bytes

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"sizes": [dataclasses.asdict(s) for s in self.sizes]}

    @classmethod
    def from_dict(cls, data: Any, where: str = "allreduce") -> AllreduceFindings:
        """The findings from their JSON; TypeError (a wrong type) or ValueError (out of range,
        missing, unknown, or inconsistent) naming the field."""
        fields = _fields(data, cls, where)
        world_size = _whole(fields, "world_size", where, least=2)
        backend, device = _choice(fields, "backend", BACKENDS, where), _choice(fields, "device", DEVICES, where)
        warmup, iters = _whole(fields, "warmup", where, least=0), _whole(fields, "iters", where, least=1)
        sizes = fields["sizes"]
        if not isinstance(sizes, list):
            raise TypeError(f"{where}.sizes must be a list, got {type(sizes).__name__}")
        if not sizes:
            raise ValueError(f"{where}.sizes is empty: the job timed no size")
        timings = tuple(_size(s, world_size, f"{where}.sizes[{i}]") for i, s in enumerate(sizes))
        if any(a.bytes >= b.bytes for a, b in zip(timings, timings[1:], strict=False)):
            raise ValueError(f"{where}.sizes must be in ascending bytes, each once")
        return cls(world_size, backend, device, warmup, iters, timings)


def _size(data: Any, world_size: int, where: str) -> SizeTiming:
    fields = _fields(data, SizeTiming, where)
    nbytes = _whole(fields, "bytes", where, least=FP32_BYTES)
    if nbytes % FP32_BYTES:
        raise ValueError(f"{where}.bytes must be a multiple of {FP32_BYTES} (fp32 elements), got {nbytes}")
    seconds, algbw, busbw = (_positive(fields, name, where) for name in ("seconds", "algbw_gbps", "busbw_gbps"))
    for name, got, want in zip(("algbw_gbps", "busbw_gbps"), (algbw, busbw), bandwidth_gbps(nbytes, seconds, world_size),
                               strict=True):
        if not math.isclose(got, want, rel_tol=REL_TOL):
            raise ValueError(f"{where}.{name} = {got} disagrees with bytes / seconds ({want:.6g}); the file was edited")
    return SizeTiming(nbytes, seconds, algbw, busbw)


def _fields(data: Any, cls: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(data, dict):
        raise TypeError(f"{where} must be an object, got {type(data).__name__}")
    names = [f.name for f in dataclasses.fields(cls)]
    missing, unknown = [n for n in names if n not in data], sorted(set(data) - set(names))
    if missing:
        raise ValueError(f"{where}: missing {missing}")
    if unknown:
        raise ValueError(f"{where}: unknown {unknown}; valid fields: {names}")
    return data


def _whole(fields: Mapping[str, Any], name: str, where: str, least: int) -> int:
    value = fields[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}.{name} must be a whole number, got {value!r}")
    if value < least:
        raise ValueError(f"{where}.{name} must be >= {least}, got {value}")
    return value


def _positive(fields: Mapping[str, Any], name: str, where: str) -> float:
    value = fields[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{where}.{name} must be a number, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{where}.{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _choice(fields: Mapping[str, Any], name: str, choices: tuple[str, ...], where: str) -> str:
    value = fields[name]
    if not isinstance(value, str):
        raise TypeError(f"{where}.{name} must be a string, got {value!r}")
    return check_choice(f"{where}.{name}", value, choices)
