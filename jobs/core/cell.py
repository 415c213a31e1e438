"""What every kind's cell shares, with no torch: the interface the orchestrator needs of a cell
(StudyCell), its content id, the kind named in its JSON, the check of its fields, the seed of
a run, and the data sets' sizes."""
from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

DATASETS = ("cifar10", "synthetic")
TRAIN = "train"  # the training cell's kind: a cell's JSON without "kind" is one (as every result before kinds)
CIFAR10_TRAIN_IMAGES = 50_000
CIFAR10_TEST_IMAGES = 10_000
SEED_LIMIT = 2**32


class CellError(ValueError):
    """A cell field holds a value no run can use; the message names the field."""


def content_id(data: Mapping[str, Any]) -> str:
    """A short stable hash of JSON data: the same fields give the same id on any machine."""
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def run_seed(seed: int, repeat: int) -> int:
    """The seed a run's randomness starts from (initial weights, data order, augmentation).

    Repeat 0 trains with the cell's seed, as every run did before repeats were seeded. Repeat
    n > 0 takes a seed drawn from (seed, n) by hash, in 0 .. 2**32 - 1: repeats are independent
    runs, and (seed 1, repeat 0) never trains as (seed 0, repeat 1) would, as seed + repeat did.
    """
    if repeat == 0:
        return seed
    digest = hashlib.sha256(f"run-seed:{seed}:{repeat}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def kind_of(data: Mapping[str, Any]) -> str:
    """A cell's kind from its JSON: "kind", or a training cell where there is none."""
    return str(data.get("kind", TRAIN))


def check_choice(name: str, value: Any, choices: Sequence[Any]) -> Any:
    """`value` when it is one of `choices`; else CellError (a ValueError) naming the field and every choice."""
    if value not in choices:
        raise CellError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def check_data_size(dataset: str, train_images: int, test_images: int) -> None:
    """A data set is a prefix of CIFAR-10's (the synthetic set stands in for it: no larger, so
    nothing writes gigabytes unasked); CellError names the field, the limit and the value."""
    stands_in = " (it stands in for CIFAR-10)" if dataset == "synthetic" else ""
    for name, value, limit in (("train_images", train_images, CIFAR10_TRAIN_IMAGES),
                               ("test_images", test_images, CIFAR10_TEST_IMAGES)):
        if value > limit:
            raise CellError(f"{name} must be <= {limit} for {dataset}{stands_in}, got {value}")


def check_colour_jitter(dataset: str, colour_jitter: float) -> None:
    """The synthetic set's colour jitter (jobs.runtime.data.SyntheticSpec), every kind's: >= 0, and
    on the synthetic set only (CIFAR-10's images are what they are)."""
    if colour_jitter < 0:
        raise CellError(f"colour_jitter must be >= 0, got {colour_jitter:g}")
    if colour_jitter and dataset != "synthetic":
        raise CellError(f"colour_jitter = {colour_jitter:g} applies to dataset = \"synthetic\" only; "
                        f"remove it for dataset = {dataset!r}")


def cell_fields(cls: Any, data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a cell of class `cls` from its JSON: its kind must be the class's (a cell
    without one is a training cell), and no field unknown to the class."""
    fields = dict(data)
    fields.pop("kind", None)
    if kind_of(data) != cls.kind:
        raise CellError(f"not a {cls.kind} cell: kind = {kind_of(data)!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(fields) - names)
    if unknown:
        what = "cell" if cls.kind == TRAIN else f"{cls.kind} cell"
        raise CellError(f"unknown {what} field(s) {unknown}; valid fields: {sorted(names)}")
    return fields


class RanksOnGPUs:
    """A cell's processes: one per GPU, or `cpu_ranks_per_node` of them where it asks for no GPU (the
    all-reduce and command kinds' dataclasses hold these three fields)."""
    nodes: int
    gpus_per_node: int
    cpu_ranks_per_node: int

    @property
    def tasks_per_node(self) -> int:
        return self.gpus_per_node or self.cpu_ranks_per_node

    @property
    def ranks(self) -> int:
        return self.nodes * self.tasks_per_node

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node


class StudyCell(Protocol):
    @property
    def kind(self) -> str: ...  # the name it is registered by (jobs.core.kinds.PACKAGES)

    @property
    def cell_id(self) -> str: ...  # a hash of to_dict(): the same cell has the same id anywhere

    @property
    def label(self) -> str: ...  # a human name; not unique

    @property
    def nodes(self) -> int: ...

    @property
    def gpus_per_node(self) -> int: ...

    @property
    def tasks_per_node(self) -> int: ...  # processes per node

    @property
    def gpus(self) -> int: ...

    @property
    def cpus_per_task(self) -> int: ...

    def plan_columns(self) -> dict[str, str]: ...  # what `plan` shows of it

    def estimate_s(self, images_per_s_per_gpu: float) -> float: ...  # one run's seconds, roughly

    def to_dict(self) -> dict[str, Any]: ...
