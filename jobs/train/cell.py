"""The Cell: everything one training run needs, and nothing about where it ran.

The same frozen object flows plan -> sbatch -> job -> result JSON. Its id is a short
hash of its fields, so the same cell has the same id on any machine and a rerun finds
its earlier result.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import Any, ClassVar
from collections.abc import Mapping
from jobs.core.bandwidth import CPU_ITERS, ITERS, WINDOW_STEPS
from jobs.core.synthetic import synthetic_test_images
from jobs.core.cell import (DATASETS, TRAIN, CIFAR10_TRAIN_IMAGES, CIFAR10_TEST_IMAGES,
                            SEED_LIMIT, CellError, check_choice, check_colour_jitter, check_data_size, content_id, run_seed,
                            cell_fields)

ENGINES = ("single", "dp", "ddp")
MODELS = ("resnet18", "tiny")
PIPELINES = ("faithful", "fast")
PRECISIONS = ("fp32", "bf16")
LR_SCALINGS = ("none", "linear", "sqrt")
# What a training job leaves out when its "GPUs" are CPU processes, and why (`plan` shows it there).
CPU_NOTES = (
    "the step that checks, before training, that the batch fits in GPU memory: a CPU has none to run out of",
    "GPU utilisation: no GPU to sample",
    f"most of the communication measurement (DDP): the all-reduce is timed {CPU_ITERS} times per size, not "
    f"{ITERS}, and exposed communication is timed on one step with and one without it, not on windows of up "
    f"to {WINDOW_STEPS} steps after a warm-up pair: gloo between processes sharing a few cores tells nothing "
    "about a GPU network",
)




@dataclass(frozen=True)
class Cell:
    kind: ClassVar[str] = TRAIN  # not a field: not in the id, nor in the JSON (results before kinds read the same)
    # its synthetic set's test batch, whatever test_images it evaluates (jobs.runtime.data.SyntheticSpec.of)
    engine: str  # single: 1 process 1 GPU; dp: 1 process all GPUs; ddp: 1 process per GPU
    batch_per_gpu: int  # images per GPU per step; the global batch is this x GPUs
    nodes: int = 1
    gpus_per_node: int = 1
    model: str = "resnet18"
    dataset: str = "cifar10"  # "synthetic": random pixels in the real on-disk format
    train_images: int = CIFAR10_TRAIN_IMAGES  # a prefix of the training set
    epochs: int = 2
    timed_epoch: int = 2  # 1-based; the figure the tables report
    pipeline: str = "faithful"  # faithful: torchvision transforms + loader workers; fast: data on GPU
    precision: str = "fp32"
    loader_workers: int = 2
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 5e-4
    lr_scaling: str = "none"  # linear: lr x global_batch / lr_ref_batch (Goyal et al. 2017); sqrt: x its square root
    lr_ref_batch: int = 128
    warmup_epochs: int = 0  # ramp the LR linearly from lr to its scaled value over these epochs
    sync_bn: bool = False
    seed: int = 0
    repeat: int = 0  # distinguishes repeats of the same configuration
    # Fields below were added after results were written: list each in ADDED_LATER (ids).
    test_images: int = CIFAR10_TEST_IMAGES  # a prefix of the test set, evaluated after each epoch; 0 = none
    # DDP's broadcast_buffers: rank 0's buffers (BatchNorm's running statistics) sent to every rank before each
    # forward. False: only gradients are exchanged (Q7). The fast pipeline never sends them (it has no DDP module).
    broadcast_buffers: bool = True
    # The synthetic set's per-image colour shift (std, pixel levels; jobs.runtime.data), as the PTQ kind's: classes
    # overlap, so accuracy climbs over the epochs instead of reaching 100 %. Synthetic only; 0 = none.
    colour_jitter: float = 0.0

    def __post_init__(self) -> None:
        for name, type_name in _FIELD_TYPES:
            value = getattr(self, name)
            if type(value) not in _TYPES[type_name]:  # the exact types pass without a call; the rest is checked
                _check_type(name, value, type_name)
            if type_name == "float":  # lr = 1 and lr = 1.0 are one cell, with one id
                object.__setattr__(self, name, float(value))
        check_choice("engine", self.engine, ENGINES)
        check_choice("model", self.model, MODELS)
        check_choice("dataset", self.dataset, DATASETS)
        check_choice("pipeline", self.pipeline, PIPELINES)
        check_choice("precision", self.precision, PRECISIONS)
        check_choice("lr_scaling", self.lr_scaling, LR_SCALINGS)
        for name in ("batch_per_gpu", "nodes", "gpus_per_node", "train_images", "epochs", "lr_ref_batch"):
            if getattr(self, name) <= 0:
                raise CellError(f"{name} must be > 0, got {getattr(self, name)}")
        for name in ("lr", "momentum", "weight_decay", "colour_jitter"):  # TOML has nan and inf; SGD refuses < 0
            if not math.isfinite(getattr(self, name)):
                raise CellError(f"{name} must be a finite number, got {getattr(self, name)}")
        for name in ("loader_workers", "warmup_epochs", "seed", "repeat", "lr", "momentum", "weight_decay",
                     "test_images"):
            if getattr(self, name) < 0:
                raise CellError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.seed >= SEED_LIMIT:  # every generator a run seeds takes it (the fast pipeline's, x 100003)
            raise CellError(f"seed must be < 2**32, got {self.seed}")
        if not 1 <= self.timed_epoch <= self.epochs:
            raise CellError(f"timed_epoch must be within 1..epochs ({self.epochs}), got {self.timed_epoch}")
        if self.engine != "ddp" and self.nodes > 1:
            raise CellError(f"engine '{self.engine}' runs in one process on one node; "
                            f"use engine = \"ddp\" for nodes = {self.nodes}")
        if self.engine == "single" and self.gpus_per_node != 1:
            raise CellError(f"engine 'single' uses 1 GPU, got gpus_per_node = {self.gpus_per_node}; use \"dp\" or \"ddp\"")
        if not self.broadcast_buffers and self.engine != "ddp":
            raise CellError(f"broadcast_buffers = false is a DDP setting; engine '{self.engine}' has no buffers to "
                            "broadcast: use engine = \"ddp\" or leave broadcast_buffers out")
        if self.pipeline == "fast" and self.engine == "dp":  # its step is one captured CUDA graph on one GPU
            raise CellError("pipeline 'fast' runs engines single and ddp, not dp; use engine = \"ddp\" "
                            "or pipeline = \"faithful\"")
        self._check_data_size()

    def _check_data_size(self) -> None:
        """No larger than CIFAR-10 (check_data_size); the synthetic set's test set holds
        synthetic_test_images, so a count between that and the whole set would be reported as
        evaluated while fewer were."""
        check_data_size(self.dataset, self.train_images, self.test_images)
        check_colour_jitter(self.dataset, self.colour_jitter)
        held = self.synthetic_test_images
        if self.dataset == "synthetic" and held < self.test_images < CIFAR10_TEST_IMAGES:
            raise CellError(f"test_images = {self.test_images}: the synthetic set has {held} test images; use "
                            f"1..{held}, or {CIFAR10_TEST_IMAGES} (the whole test set)")

    @property
    def synthetic_test_images(self) -> int:
        """The test images its synthetic set holds (jobs.core.synthetic; its data set's size, not a field)."""
        return synthetic_test_images(self.train_images)

    @property
    def evaluated_test_images(self) -> int:
        """Test images evaluated after each epoch: test_images, at most what the set holds."""
        held = self.synthetic_test_images if self.dataset == "synthetic" else CIFAR10_TEST_IMAGES
        return min(self.test_images, held)

    @property
    def run_seed(self) -> int:
        """What seeds this run's randomness (weights, data order, augmentation): run_seed(seed, repeat).
        The synthetic data set stays keyed by `seed`: every repeat trains on the same data."""
        return run_seed(self.seed, self.repeat)

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def tasks_per_node(self) -> int:
        """Processes per node: one per GPU under DDP, one driving all GPUs otherwise."""
        return self.gpus_per_node if self.engine == "ddp" else 1

    @property
    def global_batch(self) -> int:
        return self.batch_per_gpu * self.gpus

    @property
    def cpus_per_task(self) -> int:
        return self.loader_workers + 1  # the loader's workers and the training process

    def plan_columns(self) -> dict[str, str]:
        """What `plan` shows of the cell, beyond its id, label and array."""
        remedies = ", ".join(filter(None, [
            f"{self.lr_scaling} LR" if self.lr_scaling != "none" else "",
            f"warmup {self.warmup_epochs} ep" if self.warmup_epochs else "", "SyncBN" if self.sync_bn else "",
            "" if self.broadcast_buffers else "gradients only",
        ])) or "-"
        return {"batch/GPU": str(self.batch_per_gpu), "global batch": str(self.global_batch),
                "epochs": f"{self.epochs} (time {self.timed_epoch})", "data": self._data_text(),
                "remedies": remedies}

    def _data_text(self) -> str:
        """"synthetic 512 (jitter 30) / test 100": training images (the synthetic set's colour jitter),
        and the test images evaluated."""
        test = f"test {self.evaluated_test_images}" if self.test_images else "no test"
        jitter = f" (jitter {self.colour_jitter:g})" if self.colour_jitter else ""
        return f"{self.dataset} {self.train_images}{jitter} / {test}"

    def estimate_s(self, images_per_s_per_gpu: float) -> float:
        """Training seconds: epochs x images / (images/s per GPU x GPUs)."""
        return self.epochs * self.train_images / (images_per_s_per_gpu * self.gpus)

    @functools.cached_property
    def cell_id(self) -> str:
        """A hash of every field, except a field of ADDED_LATER that holds its default: a cell
        written before that field existed keeps its id, so its result is found again. Computed
        once per cell (the fields are frozen): a plan of 100,000 cells asks for each id often."""
        fields = self.to_dict()
        for name in ADDED_LATER:
            if fields[name] == _DEFAULTS[name]:
                del fields[name]
        return content_id(fields)

    @property
    def label(self) -> str:
        """A human name; not unique (the id is)."""
        shape = f"{self.nodes}x{self.gpus_per_node}" if self.nodes > 1 else f"{self.gpus}g"
        remedies = {"linear": "-lin", "sqrt": "-sqrt"}.get(self.lr_scaling, "") + (
            f"-wu{self.warmup_epochs}" if self.warmup_epochs else "") + ("-sbn" if self.sync_bn else "") + (
            "" if self.broadcast_buffers else "-gradonly")
        return f"{self.engine}-{shape}-b{self.batch_per_gpu}-e{self.epochs}{remedies}"

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name, _ in _FIELD_TYPES}  # asdict's, without its deep copies

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cell:
        return cls(**cell_fields(cls, data))










# Fields added after results were first written, in the order they came. A new field goes here
# (never removed): at its default it is left out of the id hash, so no earlier id changes.
ADDED_LATER = ("test_images", "broadcast_buffers", "colour_jitter")
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Cell) if f.default is not dataclasses.MISSING}
_FIELD_TYPES = tuple((f.name, str(f.type)) for f in dataclasses.fields(Cell))  # in the order of the fields
assert set(ADDED_LATER) <= set(_DEFAULTS), "every field added later has a default"

_TYPES = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,)}


def _check_type(name: str, value: Any, type_name: str) -> None:
    wanted = _TYPES[type_name]
    # bool is an int in Python, but `batch_per_gpu = true` is a mistake
    if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
        raise CellError(f"{name} must be of type {type_name}, got {value!r} ({type(value).__name__})")
