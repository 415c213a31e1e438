"""CIFAR-10 on disk: the real data set (torchvision), or a synthetic one in the same format.

The synthetic set is written as CIFAR-10's python batches (pickled dicts of uint8 rows),
so the job reads it through the very same torchvision code as the real one. Its pixels
are noise around a per-class colour, so a model can learn it and the loss falls.
A colour jitter (a per-image shift of the class colour) makes classes overlap, so accuracy
stays well below 100 % and quantization has something to lose; its test set can be as
large as CIFAR-10's. Neither option changes the training batches of a set without jitter.
"""
from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
from torchvision.datasets import CIFAR10

from jobs.core.synthetic import SYNTHETIC_TEST_IMAGES
from jobs.runtime import reuse

BATCHES_DIR = "cifar-10-batches-py"
CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
MEAN = (0.4914, 0.4822, 0.4465)
STD = (0.2023, 0.1994, 0.2010)
_TRAIN_FILES = 5


class CIFAR10Files(CIFAR10):
    """torchvision's CIFAR10 with the md5 sums dropped (only the published files match
    them): torchvision then checks that each file exists, and reads them as usual."""

    train_list = [[name, None] for name, _ in CIFAR10.train_list]
    test_list = [[name, None] for name, _ in CIFAR10.test_list]
    meta = {**CIFAR10.meta, "md5": None}


class DataCell(Protocol):
    """What the data functions read from a cell (a training Cell, or any cell kind with these
    fields). A cell may also carry `test_images` and `colour_jitter` for a synthetic set."""

    @property
    def dataset(self) -> str: ...

    @property
    def train_images(self) -> int: ...

    @property
    def seed(self) -> int: ...


@dataclass(frozen=True)
class SyntheticSpec:
    train_images: int
    seed: int
    test_images: int = SYNTHETIC_TEST_IMAGES
    colour_jitter: float = 0.0  # std (pixel levels, 0..255) of a per-image shift of the class colour

    @classmethod
    def of(cls, cell: DataCell) -> SyntheticSpec:
        """The set's test size: the cell's `synthetic_test_images` where its kind fixes one (a training
        Cell's test_images is how many test images it evaluates, not the size of its set: its synthetic
        set holds jobs.core.synthetic's count for its size), else its test_images."""
        fixed = getattr(cell, "synthetic_test_images", None)
        test = int(fixed if fixed is not None else getattr(cell, "test_images", SYNTHETIC_TEST_IMAGES))
        return cls(cell.train_images, cell.seed, test, float(getattr(cell, "colour_jitter", 0.0)))

    def folder_name(self) -> str:
        """The name of old sets (default test size, no jitter) is kept, so they are found again."""
        name = f"synthetic-cifar10-{self.train_images}-s{self.seed}"
        if self.test_images != SYNTHETIC_TEST_IMAGES:
            name += f"-t{self.test_images}"
        if self.colour_jitter:
            name += f"-j{self.colour_jitter:g}"
        return name


def dataset_root(cell: DataCell, data_dir: Path) -> Path:
    """Where the cell's data set lives under data_dir (it holds cifar-10-batches-py/)."""
    if cell.dataset == "cifar10":
        return Path(data_dir)
    return Path(data_dir) / SyntheticSpec.of(cell).folder_name()


def open_train_set(cell: DataCell, data_dir: Path, transform=None) -> CIFAR10:
    """The training set; synthetic data is written first if it is missing."""
    return _open(cell, data_dir, transform, train=True)


def open_test_set(cell: DataCell, data_dir: Path, transform=None) -> CIFAR10:
    """The test set (CIFAR-10's 10,000 images, or the synthetic set's test batch)."""
    return _open(cell, data_dir, transform, train=False)


def _open(cell: DataCell, data_dir: Path, transform, train: bool) -> CIFAR10:
    root = dataset_root(cell, data_dir)
    if cell.dataset == "synthetic":
        spec = SyntheticSpec.of(cell)
        ensure_synthetic(root, spec.train_images, spec.seed, spec.test_images, spec.colour_jitter)
        return reuse.dataset(CIFAR10Files, root, train, transform)
    if not (root / BATCHES_DIR).is_dir():
        raise FileNotFoundError(
            f"CIFAR-10 not found under {root}; download it once on a login node: "
            f"python -m jobs.runtime.data --download {root}"
        )
    return reuse.dataset(CIFAR10, root, train, transform)


def ensure_synthetic(root: Path, train_images: int, seed: int, test_images: int = SYNTHETIC_TEST_IMAGES,
                     colour_jitter: float = 0.0) -> None:
    """Write the synthetic set once; concurrent writers race safely (build aside, then rename)."""
    root = Path(root)
    if (root / BATCHES_DIR / "batches.meta").is_file():
        return
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=".synthetic-"))
    try:
        write_synthetic(staging, train_images, seed, test_images, colour_jitter)
        try:
            os.rename(staging / BATCHES_DIR, root / BATCHES_DIR)
        except OSError:
            if not (root / BATCHES_DIR / "batches.meta").is_file():
                raise  # not another writer's win: a real failure
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_synthetic(root: Path, train_images: int, seed: int, test_images: int = SYNTHETIC_TEST_IMAGES,
                    colour_jitter: float = 0.0) -> Path:
    """Write CIFAR-10's on-disk layout under root/cifar-10-batches-py and return that folder.
    The training batches are written first and draw the same numbers whatever test_images is;
    with colour_jitter 0 they are byte for byte those of earlier versions."""
    folder = Path(root) / BATCHES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    colours = rng.integers(40, 216, size=(len(CLASSES), 3))
    sizes = np.full(_TRAIN_FILES, train_images // _TRAIN_FILES)
    sizes[: train_images % _TRAIN_FILES] += 1
    for i, size in enumerate(sizes, start=1):
        _write_batch(folder / f"data_batch_{i}", f"training batch {i} of 5", int(size), colours, rng, colour_jitter)
    _write_batch(folder / "test_batch", "testing batch 1 of 1", test_images, colours, rng, colour_jitter)
    meta = {"label_names": CLASSES, "num_cases_per_batch": int(sizes[0]), "num_vis": 3072}
    _pickle(folder / "batches.meta", meta)
    return folder


def _write_batch(path: Path, label: str, size: int, colours: np.ndarray, rng: np.random.Generator,
                 colour_jitter: float = 0.0) -> None:
    labels = rng.integers(0, len(CLASSES), size=size)
    noise = rng.normal(0, 48, size=(size, 3, 32 * 32))
    centre = colours[labels].astype(np.float64)
    if colour_jitter:  # drawn only when asked, so sets without jitter keep their bytes
        centre = centre + rng.normal(0, colour_jitter, size=(size, 3))
    pixels = np.clip(centre[:, :, None] + noise, 0, 255).astype(np.uint8)
    batch = {
        "batch_label": label,
        "labels": labels.tolist(),
        "data": pixels.reshape(size, 3072),  # rows of R plane, G plane, B plane, as CIFAR-10 stores them
        "filenames": [f"synthetic_{k:05d}.png" for k in range(size)],
    }
    _pickle(path, batch)


def _pickle(path: Path, obj: object) -> None:
    with open(path, "wb") as f:
        pickle.dump(obj, f, protocol=2)


def download(root: Path) -> None:
    """Fetch the real CIFAR-10 (needs internet: run it on a login node)."""
    CIFAR10(str(root), train=True, download=True)
    CIFAR10(str(root), train=False, download=True)


def main(argv=None) -> None:
    """python -m jobs.data: download CIFAR-10, or write a synthetic one."""
    import argparse


    parser = argparse.ArgumentParser(description="Prepare CIFAR-10 for the jobs.")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--download", metavar="DIR", type=Path, help="download the real CIFAR-10 into DIR")
    group.add_argument("--synthetic", metavar="DIR", type=Path, help="write a synthetic CIFAR-10 into DIR")
    parser.add_argument("--images", type=int, default=50_000, help="synthetic training images")
    parser.add_argument("--test-images", type=int, default=SYNTHETIC_TEST_IMAGES, help="synthetic test images")
    parser.add_argument("--colour-jitter", type=float, default=0.0,
                        help="std (pixel levels) of a per-image shift of the class colour: harder classes")
    args = parser.parse_args(argv)
    if args.download:
        download(args.download)
    else:
        print(write_synthetic(args.synthetic, args.images, seed=0, test_images=args.test_images,
                              colour_jitter=args.colour_jitter))


if __name__ == "__main__":
    main()
