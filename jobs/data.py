"""CIFAR-10 on disk: the real data set (torchvision), or a synthetic one in the same format.

The synthetic set is written as CIFAR-10's python batches (pickled dicts of uint8 rows),
so the job reads it through the very same torchvision code as the real one. Its pixels
are noise around a per-class colour, so a model can learn it and the loss falls.
"""
from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from pathlib import Path

import numpy as np
from torchvision.datasets import CIFAR10

from jobs.cell import Cell

BATCHES_DIR = "cifar-10-batches-py"
CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
MEAN = (0.4914, 0.4822, 0.4465)
STD = (0.2023, 0.1994, 0.2010)
_TRAIN_FILES = 5
_TEST_IMAGES = 100


class CIFAR10Files(CIFAR10):
    """torchvision's CIFAR10 with the md5 sums dropped (only the published files match
    them): torchvision then checks that each file exists, and reads them as usual."""

    train_list = [[name, None] for name, _ in CIFAR10.train_list]
    test_list = [[name, None] for name, _ in CIFAR10.test_list]
    meta = {**CIFAR10.meta, "md5": None}


def dataset_root(cell: Cell, data_dir: Path) -> Path:
    """Where the cell's data set lives under data_dir (it holds cifar-10-batches-py/)."""
    if cell.dataset == "cifar10":
        return Path(data_dir)
    return Path(data_dir) / f"synthetic-cifar10-{cell.train_images}-s{cell.seed}"


def open_train_set(cell: Cell, data_dir: Path, transform=None) -> CIFAR10:
    """The training set; synthetic data is written first if it is missing."""
    root = dataset_root(cell, data_dir)
    if cell.dataset == "synthetic":
        ensure_synthetic(root, cell.train_images, cell.seed)
        return CIFAR10Files(str(root), train=True, download=False, transform=transform)
    if not (root / BATCHES_DIR).is_dir():
        raise FileNotFoundError(
            f"CIFAR-10 not found under {root}; download it once on a login node: "
            f"python -m jobs.data --download {root}"
        )
    return CIFAR10(str(root), train=True, download=False, transform=transform)


def ensure_synthetic(root: Path, train_images: int, seed: int) -> None:
    """Write the synthetic set once; concurrent writers race safely (build aside, then rename)."""
    root = Path(root)
    if (root / BATCHES_DIR / "batches.meta").is_file():
        return
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=root, prefix=".synthetic-"))
    try:
        write_synthetic(staging, train_images, seed)
        try:
            os.rename(staging / BATCHES_DIR, root / BATCHES_DIR)
        except OSError:
            if not (root / BATCHES_DIR / "batches.meta").is_file():
                raise  # not another writer's win: a real failure
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_synthetic(root: Path, train_images: int, seed: int) -> Path:
    """Write CIFAR-10's on-disk layout under root/cifar-10-batches-py and return that folder."""
    folder = Path(root) / BATCHES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    colours = rng.integers(40, 216, size=(len(CLASSES), 3))
    sizes = np.full(_TRAIN_FILES, train_images // _TRAIN_FILES)
    sizes[: train_images % _TRAIN_FILES] += 1
    for i, size in enumerate(sizes, start=1):
        _write_batch(folder / f"data_batch_{i}", f"training batch {i} of 5", int(size), colours, rng)
    _write_batch(folder / "test_batch", "testing batch 1 of 1", _TEST_IMAGES, colours, rng)
    meta = {"label_names": CLASSES, "num_cases_per_batch": int(sizes[0]), "num_vis": 3072}
    _pickle(folder / "batches.meta", meta)
    return folder


def _write_batch(path: Path, label: str, size: int, colours: np.ndarray, rng: np.random.Generator) -> None:
    labels = rng.integers(0, len(CLASSES), size=size)
    noise = rng.normal(0, 48, size=(size, 3, 32 * 32))
    pixels = np.clip(colours[labels][:, :, None] + noise, 0, 255).astype(np.uint8)
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


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Prepare CIFAR-10 for the jobs.")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--download", metavar="DIR", type=Path, help="download the real CIFAR-10 into DIR")
    group.add_argument("--synthetic", metavar="DIR", type=Path, help="write a synthetic CIFAR-10 into DIR")
    parser.add_argument("--images", type=int, default=50_000, help="synthetic training images")
    args = parser.parse_args()
    if args.download:
        download(args.download)
    else:
        print(write_synthetic(args.synthetic, args.images, seed=0))
