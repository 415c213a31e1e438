"""Two sets' runs paired by configuration: the same kind and the same fields (but those the user
ignores and those repeats differ in), whatever their files are named; a configuration found in
one set only is paired with nothing."""
from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from collect.comparable import Run
from collect.kinds import registry


@dataclass(frozen=True)
class Pair:
    """One configuration's runs in set A and in set B (either may be empty: only in the other)."""

    kind: str
    fields: Mapping[str, Any]  # its fields, the ignored ones left out
    label: str  # the fields that tell it from the others of its kind: "engine=ddp, batch_per_gpu=128"
    a: tuple[Run, ...]
    b: tuple[Run, ...]

    @property
    def headline(self) -> str:
        """The metric that stands for the configuration: its runs' ("" when none ran)."""
        return next((r.headline for r in self.a + self.b if r.headline), "")


@dataclass(frozen=True)
class Paired:
    pairs: tuple[Pair, ...]
    notes: tuple[str, ...]  # what ignoring fields did that the user should know


class UnknownField(ValueError):
    """A field to ignore that no configuration has; the message names it and lists those there are."""


def check_ignored(ignore: Sequence[str], runs: Iterable[Run]) -> None:
    """UnknownField naming a field to ignore that no configuration of either set has, and the fields there are."""
    known = {name for run in runs for name in run.fields}
    unknown = [name for name in ignore if name not in known]
    if unknown:
        raise UnknownField(f"--ignore {unknown[0]}: no configuration has that field; the fields are "
                         + ", ".join(sorted(known)))


def pair(a: Sequence[Run], b: Sequence[Run], ignore: Sequence[str] = ()) -> Paired:
    """Every configuration of A (in order first seen), then those only in B, each with its runs
    on both sides. Ignored fields are left out of the configuration, so cells that differ only
    in them pair up; a note says where that also merges configurations within one set."""
    check_ignored(ignore, list(a) + list(b))
    groups: dict[str, dict[str, list[Run]]] = {}
    fields: dict[str, dict[str, Any]] = {}
    for side, runs in (("a", a), ("b", b)):
        for run in runs:
            kept = {k: v for k, v in run.fields.items() if k not in ignore}
            key = json.dumps([run.kind, kept], sort_keys=True, default=str)
            groups.setdefault(key, {"a": [], "b": []})[side].append(run)
            fields[key] = kept
    labels = _labels({key: (group["a"] + group["b"])[0].kind for key, group in groups.items()}, fields)
    pairs = tuple(Pair((g["a"] + g["b"])[0].kind, fields[key], labels[key], tuple(g["a"]), tuple(g["b"]))
                  for key, g in groups.items())
    return Paired(pairs, _merged_notes(pairs, ignore))


def _labels(kinds: Mapping[str, str], fields: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Each configuration (by key) named by labels()."""
    keys = list(kinds)
    return dict(zip(keys, labels([(kinds[k], fields[k]) for k in keys]), strict=True))


def labels(configs: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Each (kind, fields) named by the fields whose values differ among its kind's configurations
    here (in field order), worded by its kind's labeller (KindTables.label; name=value for a kind without
    one), prefixed by its kind when there are several; its kind alone when it is its kind's only one."""
    several = len({kind for kind, _ in configs}) > 1
    out = [""] * len(configs)
    for kind in dict.fromkeys(k for k, _ in configs):
        mine = [i for i, (k, _) in enumerate(configs) if k == kind]
        names = list(dict.fromkeys(name for i in mine for name in configs[i][1]))
        varying = [n for n in names if len({json.dumps(configs[i][1].get(n), default=str) for i in mine}) > 1]
        name = getattr(registry().get(kind), "label", None) or _plain
        for i in mine:
            text = name(configs[i][1], varying) if varying else ""
            out[i] = f"{kind}: {text}" if several and text else (text or kind)
    return out


def _plain(fields: Mapping[str, Any], vary: Collection[str]) -> str:
    """"nodes=1, gpus_per_node=4": each field of `vary` as name=value."""
    return ", ".join(f"{n}={_text(fields.get(n))}" for n in vary)



def _text(value: Any) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def _merged_notes(pairs: Sequence[Pair], ignore: Sequence[str]) -> tuple[str, ...]:
    """"--ignore pipeline merges configurations within A: pipeline=fast, faithful are one (engine=ddp)"."""
    notes = []
    for p in pairs:
        for side, runs in (("A", p.a), ("B", p.b)):
            for name in ignore:
                values = sorted({_text(r.fields.get(name)) for r in runs})
                if len(values) > 1:
                    notes.append(f"--ignore {name} merges configurations within {side}: {name}="
                                 f"{', '.join(values)} count as repeats of one ({p.label})")
    return tuple(notes)
