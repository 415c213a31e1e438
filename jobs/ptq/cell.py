"""The PTQCell: one trained pair of the notebook's networks (Net, NetWithBias) and every
quantization of them that a PTQ study asks (Part B of the assignment).

A cell trains (or reuses, by content id, a network an earlier cell trained the same way) and
then evaluates the notebook's six variants and the sweep its axes span. The quantization axes
are swept inside the cell, on the one trained network: they are cheap next to training.
No torch here: the orchestrator builds and checks cells on a login node.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar
from collections.abc import Mapping

from jobs.core.cell import (CIFAR10_TEST_IMAGES, CIFAR10_TRAIN_IMAGES, DATASETS, SEED_LIMIT,
                            CellError, cell_fields, check_choice, check_colour_jitter, check_data_size,
                            content_id, run_seed)
from jobs.ptq.config import INTEGER_RUNS, PTQConfig, QuantSpec
from jobs.ptq.choices import GRANULARITIES, PERCENTILE, RANGE_METHODS, check_bits, check_percentile

# The fields that hold a list of choices swept inside one cell (a study's list of them is not
# expanded into cells).
SWEPT = ("weight_bits", "activation_bits", "granularities", "range_methods", "calibration_images")
# What shapes a trained network, beside its training seed: the training set (the synthetic set's
# training images are drawn from seed, train_images and colour_jitter alone, whatever test_images
# is) and the training's settings.
TRAINING = ("dataset", "seed", "train_images", "colour_jitter", "epochs", "batch_size", "lr", "momentum")


@dataclass(frozen=True)
class PTQCell:
    kind: ClassVar[str] = "ptq"
    dataset: str = "cifar10"  # "synthetic": the real on-disk format, made here
    train_images: int = CIFAR10_TRAIN_IMAGES  # a prefix of the training set: training and calibration
    test_images: int = CIFAR10_TEST_IMAGES  # a prefix of the test set: every accuracy
    colour_jitter: float = 0.0  # synthetic only: per-image colour noise, so accuracy is below 100 %
    epochs: int = 2  # the notebook's training: SGD, batch 4, lr 0.001, momentum 0.9, 2 epochs
    batch_size: int = 4
    lr: float = 0.001
    momentum: float = 0.9
    seed: int = 0  # a synthetic set's data; the training seed (weights, order) is run_seed(seed, repeat)
    repeat: int = 0
    gpus_per_node: int = 1  # 1: one GPU; 0: the CPU (the integer-only check runs on the CPU anyway)
    weight_bits: tuple[int, ...] = (8, 6, 5, 4, 3, 2)  # weights-only sweep
    activation_bits: tuple[int, ...] = (8, 6, 5, 4, 3, 2)  # with 8-bit weights
    granularities: tuple[str, ...] = GRANULARITIES  # per-tensor or per-channel weight scales
    range_methods: tuple[str, ...] = RANGE_METHODS  # clipping ranges of weights and activations
    calibration_images: tuple[int, ...] = (16, 400, 4000)  # training images profiled for activation ranges
    notebook_calibration: int = 400  # the notebook's own variants
    percentile: float = PERCENTILE
    integer_run: str = "notebook"  # which variants also run integer-only: none, notebook, all

    def __post_init__(self) -> None:
        for name in SWEPT:
            value = getattr(self, name)
            if isinstance(value, (list, tuple)):
                object.__setattr__(self, name, tuple(value))
            else:
                object.__setattr__(self, name, (value,))
        for name in ("lr", "momentum", "colour_jitter", "percentile"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise CellError(f"{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))
        _ints(self, ("train_images", "test_images", "epochs", "batch_size", "seed", "repeat", "gpus_per_node",
                     "notebook_calibration"))
        _check(self)

    @property
    def nodes(self) -> int:
        return 1

    @property
    def tasks_per_node(self) -> int:
        return 1

    @property
    def gpus(self) -> int:
        return self.gpus_per_node

    @property
    def cpus_per_task(self) -> int:
        return 2  # data resident on the device: no loader workers

    @property
    def training_seed(self) -> int:
        """Initial weights and data order: the one rule of every run (jobs.train.cell.run_seed)."""
        return run_seed(self.seed, self.repeat)

    @property
    def cell_id(self) -> str:
        return content_id(self.to_dict())

    def training_id(self, with_bias: bool) -> str:
        """The content id of one trained network: only cells whose data and training are the same
        share it, so no network trained on one seed's data is counted as another seed's."""
        fields = {name: getattr(self, name) for name in TRAINING}
        return content_id(dict(fields, training_seed=self.training_seed, with_bias=with_bias))

    @property
    def label(self) -> str:
        where = "cpu" if self.gpus_per_node == 0 else "1g"
        repeat = f"-r{self.repeat}" if self.repeat else ""
        return f"ptq-{where}-{self.dataset}{self.train_images}-s{self.seed}{repeat}"

    def plan_columns(self) -> dict[str, str]:
        return {"data": f"{self.dataset} {self.train_images} / test {self.test_images}",
                "training": f"{self.epochs} ep, batch {self.batch_size}, lr {self.lr:g}, seed {self.training_seed}",
                "variants": str(6 + len(self.config().sweep))}

    def estimate_s(self, images_per_s_per_gpu: float) -> float:
        """Training two networks dominates: 2 x epochs x images at batch 4 (about 15,000 images/s
        on one GPU, 1,500 on a CPU core pair), then the sweep (about 10 s on a GPU)."""
        rate = 15_000.0 if self.gpus_per_node else 1_500.0
        return 2 * self.epochs * self.train_images / rate + 10.0

    def config(self) -> PTQConfig:
        """The run's variants: the notebook's six, then weights only (bits x granularity x method)
        and 8-bit weights with quantized activations (bits x method x calibration)."""
        weights = [QuantSpec(weight_bits=b, activation_bits=None, granularity=g, weight_method=m,
                             percentile=self.percentile)
                   for b in self.weight_bits for g in self.granularities for m in self.range_methods]
        activations = [QuantSpec(weight_bits=8, activation_bits=b, activation_method=m, calibration_images=n,
                                 percentile=self.percentile)
                       for b in self.activation_bits for m in self.range_methods for n in self.calibration_images]
        notebook = QuantSpec(calibration_images=self.notebook_calibration, percentile=self.percentile)
        return PTQConfig(notebook=notebook, sweep=tuple(weights + activations), integer_run=self.integer_run)

    def to_dict(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {"kind": self.kind, **{k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PTQCell:
        return cls(**cell_fields(cls, data))


def _ints(cell: PTQCell, names: tuple[str, ...]) -> None:
    for name in names:
        value = getattr(cell, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise CellError(f"{name} must be a whole number, got {value!r}")


def _check(cell: PTQCell) -> None:
    """Every choice a run could not use, named by its field, before anything is submitted."""
    _check_swept(cell)
    try:
        check_choice("dataset", cell.dataset, DATASETS)
        check_choice("integer_run", cell.integer_run, INTEGER_RUNS)
        for b in cell.weight_bits:
            check_bits(b, "weight_bits")
        for b in cell.activation_bits:
            check_bits(b, "activation_bits")
        for g in cell.granularities:
            check_choice("granularities", g, GRANULARITIES)
        for m in cell.range_methods:
            check_choice("range_methods", m, RANGE_METHODS)
        check_percentile(cell.percentile)
    except ValueError as exc:
        raise CellError(str(exc)) from None
    for name in ("train_images", "test_images", "epochs", "batch_size"):
        if getattr(cell, name) < 1:
            raise CellError(f"{name} must be > 0, got {getattr(cell, name)}")
    if cell.gpus_per_node not in (0, 1):
        raise CellError(f"gpus_per_node must be 0 (the CPU) or 1 for a ptq cell, got {cell.gpus_per_node}")
    if not 0 <= cell.seed < SEED_LIMIT or cell.repeat < 0:
        raise CellError(f"seed must be in 0 .. 2**32 - 1 and repeat >= 0, got seed {cell.seed}, repeat {cell.repeat}")
    _check_data(cell)
    if cell.lr <= 0 or cell.momentum < 0:
        raise CellError(f"lr must be > 0 and momentum >= 0, got lr {cell.lr:g}, momentum {cell.momentum:g}")
    _check_calibration(cell)


def _check_swept(cell: PTQCell) -> None:
    """An empty list would drop a sweep without a word; a value twice would run its variants twice."""
    for name in SWEPT:
        values = getattr(cell, name)
        if not values:
            raise CellError(f"{name} is an empty list; give at least one value")
        seen: list[Any] = []
        for v in values:
            if v in seen:
                raise CellError(f"{name} lists {v!r} twice; give each value once")
            seen.append(v)


def _check_data(cell: PTQCell) -> None:
    """No larger than CIFAR-10 (check_data_size); colour jitter on the synthetic set only."""
    check_data_size(cell.dataset, cell.train_images, cell.test_images)
    check_colour_jitter(cell.dataset, cell.colour_jitter)


def _check_calibration(cell: PTQCell) -> None:
    for name, sizes in (("calibration_images", cell.calibration_images),
                        ("notebook_calibration", (cell.notebook_calibration,))):
        for n in sizes:
            if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= cell.train_images:
                raise CellError(f"{name}: {n!r} images to calibrate on, but the cell trains on "
                                f"train_images = {cell.train_images}; give 1 .. {cell.train_images}")
