"""A command cell's findings (the result JSON's "command" block): rank 0's metrics lines and
which of them is timed, read back with every line checked as the job checked it. No torch."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from jobs.command.metrics import Line, MetricsError, check_line
from jobs.core.result import Block


@dataclass(frozen=True)
class CommandFindings(Block):
    KEY: ClassVar[str] = "command"
    world_size: int  # processes that ran the script
    lines: tuple[Line, ...]  # rank 0's metrics, one per line it wrote
    timed: int  # the index of the timed line (the cell's timed_epoch)

    @property
    def timed_line(self) -> Line:
        return self.lines[self.timed]

    def to_dict(self) -> dict[str, Any]:
        return {"world_size": self.world_size, "lines": [dict(line) for line in self.lines], "timed": self.timed}

    @classmethod
    def from_dict(cls, data: Any, where: str = "command") -> CommandFindings:
        """The findings from their JSON; TypeError or ValueError naming the field."""
        if not isinstance(data, dict) or sorted(data) != ["lines", "timed", "world_size"]:
            raise ValueError(f"{where} must be an object of world_size, lines and timed")
        world_size, lines, timed = data["world_size"], data["lines"], data["timed"]
        if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
            raise ValueError(f"{where}.world_size must be a whole number >= 1, got {world_size!r:.40}")
        if not isinstance(lines, list) or not lines:
            raise ValueError(f"{where}.lines must be a list of at least one line")
        try:
            checked = tuple(check_line(line, f"{where}.lines[{i}]") for i, line in enumerate(lines))
        except MetricsError as exc:
            raise ValueError(str(exc)) from None
        if isinstance(timed, bool) or not isinstance(timed, int) or not 0 <= timed < len(checked):
            raise ValueError(f"{where}.timed must be a line's index, 0 .. {len(checked) - 1}, got {timed!r:.40}")
        return cls(world_size, checked, timed)
