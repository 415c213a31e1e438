"""The CommandCell: the user's own script as a cell. Its fields are the study's keys: the
resources (nodes, gpus_per_node or cpu_ranks_per_node), the argv `command` with `{field}`
placeholders, its `workdir`, how collect reads the metrics (timed_epoch, time_metric), the
repeat, and any other key as the user's own field (a string, a whole number, a number or
true/false).

No torch and no shell here: the argv is a list, and each placeholder's value becomes one argument
(`command_line`), so `1; rm -rf ~` is one argument, never a command.
"""
from __future__ import annotations

import dataclasses
import math
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Union

from jobs.core.cell import CellError, RanksOnGPUs, content_id, kind_of

KIND = "command"
Scalar = Union[str, int, float, bool]
MAX_TEXT = 4096  # characters in one argument or field value: an argv holds settings, not data
MAX_ARGV = 256  # arguments in `command`
MAX_FIELDS = 64  # the user's own fields
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
LAST = -1  # timed_epoch's default: the last metrics line
ESTIMATE_S = 600.0  # a user's script takes what it takes: plan's guess until a run is measured


@dataclass(frozen=True, init=False)
class CommandCell(RanksOnGPUs):
    """One run of the user's command. `own_fields` holds the user's own fields, sorted by name; every
    field, the user's too, is a key of the cell's JSON (to_dict) and of its id. The constructor takes
    them as keywords (a study's keys, the JSON's) or as own_fields (dataclasses.replace: a new repeat)."""

    kind: ClassVar[str] = KIND
    command: tuple[str, ...]  # argv; "{name}" anywhere in an argument: that field's value
    workdir: str = "."  # where it runs: made absolute at plan time, relative to the study file
    nodes: int = 1
    gpus_per_node: int = 1  # one process per GPU, as torchrun starts them
    cpu_ranks_per_node: int = 0  # with gpus_per_node = 0: CPU processes per node
    cpus_per_task: int = 4  # CPU cores per process: the script and its loader workers
    timed_epoch: int = LAST  # the metrics line whose "epoch" is this; -1: the last line
    time_metric: str = "epoch_s"  # the metric speedup and efficiency are computed from
    repeat: int = 0
    own_fields: tuple[tuple[str, Scalar], ...] = ()  # the user's, by name (a reserved name: no key of a study)

    def __init__(self, /, command: Any = (), workdir: Any = ".", nodes: Any = 1, gpus_per_node: Any = 1,
                 cpu_ranks_per_node: Any = 0, cpus_per_task: Any = 4, timed_epoch: Any = LAST,
                 time_metric: Any = "epoch_s", repeat: Any = 0, own_fields: Any = (), **user: Any) -> None:
        given = dict(command=_argv(command), workdir=_text("workdir", workdir), nodes=nodes,
                     gpus_per_node=gpus_per_node, cpu_ranks_per_node=cpu_ranks_per_node, cpus_per_task=cpus_per_task,
                     timed_epoch=timed_epoch, time_metric=_text("time_metric", time_metric), repeat=repeat,
                     own_fields=tuple(sorted((_name(k), _value(k, v)) for k, v in {**_pairs(own_fields), **user}.items())))
        for name, value in given.items():
            object.__setattr__(self, name, value)
        _check_counts(self)
        if len(self.own_fields) > MAX_FIELDS:
            raise CellError(f"{len(self.own_fields)} fields of your own: at most {MAX_FIELDS}")
        self.command_line()  # every placeholder names a field

    @property
    def fields(self) -> dict[str, Any]:
        """Every field a placeholder may name: the cell's own (but command) and the user's."""
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("command", "own_fields")}
        return own | dict(self.own_fields)

    def command_line(self) -> list[str]:
        """The argv with each "{name}" replaced by that field's text (value_text), each argument
        staying one; CellError naming the argument whose placeholder names no field."""
        fields = self.fields
        argv = []
        for i, arg in enumerate(self.command):
            for name in PLACEHOLDER.findall(arg):
                if name not in fields:
                    raise CellError(f"command[{i}] = {arg!r}: {{{name}}} names no field; fields: "
                                    f"{', '.join(sorted(fields))} (give it in [defaults] or the grid)")
            argv.append(PLACEHOLDER.sub(lambda m: value_text(fields[m[1]]), arg))
        return argv

    @property
    def cell_id(self) -> str:
        return content_id(self.to_dict())

    @property
    def label(self) -> str:
        """"command-2g-batch_per_gpu=64-r0": the processes, the user's fields, the repeat; not unique."""
        shape = f"{self.nodes}x{self.tasks_per_node}" if self.nodes > 1 else str(self.tasks_per_node)
        own = "".join(f"-{k}={value_text(v)}" for k, v in self.own_fields)
        return f"command-{shape}{'g' if self.gpus_per_node else 'cpu'}{own}-r{self.repeat}"[:200]

    def plan_columns(self) -> dict[str, str]:
        """What `plan --cells` shows: the processes, and the argv as it will run (quoted where an
        argument holds a space or a quote, so that each argument's bounds show)."""
        return {"processes": processes_text(self), "command": shlex.join(self.command_line())}

    def estimate_s(self, images_per_s_per_gpu: float) -> float:
        """ESTIMATE_S: the script's time is unknown before it runs (images_per_s_per_gpu does not apply)."""
        return ESTIMATE_S

    def to_dict(self) -> dict[str, Any]:
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "own_fields"}
        return {"kind": self.kind, **own, "command": list(self.command), **dict(self.own_fields)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CommandCell:
        if kind_of(data) != KIND:
            raise CellError(f"not a {KIND} cell: kind = {kind_of(data)!r}")
        return cls(**{k: v for k, v in data.items() if k != "kind"})


def processes_text(cell: CommandCell) -> str:
    """"1 GPU", "4 GPUs", "2 nodes x 4 GPUs", "2 CPU processes"."""
    what = "GPU" if cell.gpus_per_node else "CPU process"
    per = f"{cell.tasks_per_node} {what}{('es' if what.endswith('s') else 's') if cell.tasks_per_node != 1 else ''}"
    return f"{cell.nodes} nodes x {per}" if cell.nodes > 1 else per


def value_text(value: Scalar) -> str:
    """A field's value as one argument: true/false as TOML writes them, a float as Python reads it
    back (0.1, 1e-05), a whole number and a string as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def _pairs(own_fields: Any) -> dict[str, Any]:
    """own_fields as dataclasses.replace passes it back: (name, value) pairs; a study's key of that name is refused."""
    if isinstance(own_fields, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in own_fields):
        return dict(own_fields)
    raise CellError("own_fields is the cell's own name for your fields; give yours other names")


def _argv(command: Any) -> tuple[str, ...]:
    if isinstance(command, (list, tuple)) and command and all(isinstance(a, str) for a in command):
        if len(command) > MAX_ARGV:
            raise CellError(f"command has {len(command)} arguments: at most {MAX_ARGV}")
        for i, arg in enumerate(command):
            _text(f"command[{i}]", arg)
        return tuple(command)
    raise CellError(f"command must be a list of strings, the program and its arguments (e.g. [\"python\", "
                    f"\"train.py\", \"--lr\", \"{{lr}}\"]), got {command!r}"[:300])


def _text(where: str, value: Any) -> str:
    if not isinstance(value, str):
        raise CellError(f"{where} must be a string, got {value!r}"[:300])
    if "\0" in value:
        raise CellError(f"{where} holds a NUL character, which no argument can carry; remove it")
    if len(value) > MAX_TEXT:
        raise CellError(f"{where} is {len(value):,} characters long: at most {MAX_TEXT:,}")
    return value


def _name(name: str) -> str:
    if name == "kind":
        raise CellError("kind names the study's kind, at the top of the study file; it is no field of a cell")
    if not NAME.fullmatch(name):
        raise CellError(f"field name {name!r} must be letters, digits and _ (the first not a digit, at most 64): "
                        "a {placeholder} names it"[:300])
    return name


def _value(name: str, value: Any) -> Scalar:
    if isinstance(value, str):
        return _text(name, value)
    if isinstance(value, float) and not math.isfinite(value):
        raise CellError(f"{name} = {value!r}: give a finite number")
    if isinstance(value, (bool, int, float)):
        return value
    raise CellError(f"{name} must be a string, a number or true/false (a list in [[grid]] is expanded into one "
                    f"cell per value), got {value!r}"[:300])


def _check_counts(cell: CommandCell) -> None:
    for name in ("nodes", "gpus_per_node", "cpu_ranks_per_node", "cpus_per_task", "timed_epoch", "repeat"):
        value = getattr(cell, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise CellError(f"{name} must be a whole number, got {value!r}")
    for name, least in (("nodes", 1), ("gpus_per_node", 0), ("cpu_ranks_per_node", 0), ("cpus_per_task", 1),
                        ("timed_epoch", LAST), ("repeat", 0)):
        if getattr(cell, name) < least:
            raise CellError(f"{name} must be >= {least}, got {getattr(cell, name)}")
    if cell.gpus_per_node and cell.cpu_ranks_per_node:
        raise CellError("give gpus_per_node (a process per GPU) or cpu_ranks_per_node (CPU processes), not both; "
                        f"got {cell.gpus_per_node} and {cell.cpu_ranks_per_node}")
    if not cell.tasks_per_node:
        raise CellError("no processes: give gpus_per_node >= 1, or gpus_per_node = 0 and cpu_ranks_per_node >= 1")
