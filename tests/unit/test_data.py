"""jobs.data: the synthetic CIFAR-10 is read by torchvision's own CIFAR10 code."""
from __future__ import annotations

import numpy as np

from jobs.cell import Cell
from jobs.data import BATCHES_DIR, CIFAR10Files, dataset_root, ensure_synthetic, open_train_set, write_synthetic


def test_torchvision_reads_what_write_synthetic_wrote(tmp_path):
    folder = write_synthetic(tmp_path, 50, seed=0)
    assert folder == tmp_path / BATCHES_DIR
    train = CIFAR10Files(str(tmp_path), train=True, download=False)
    assert len(train) == 50
    assert train.data.shape == (50, 32, 32, 3) and train.data.dtype == np.uint8
    assert set(train.targets) <= set(range(10))
    assert len(set(train.targets)) > 1  # not one class for every image
    image, label = train[0]
    assert image.size == (32, 32) and image.mode == "RGB" and 0 <= label <= 9
    test = CIFAR10Files(str(tmp_path), train=False, download=False)
    assert len(test) == 100


def test_an_image_count_not_divisible_by_five_files_is_kept(tmp_path):
    write_synthetic(tmp_path, 13, seed=0)  # 3,3,3,2,2
    assert len(CIFAR10Files(str(tmp_path), train=True, download=False)) == 13


def test_same_seed_same_images_other_seed_other_images(tmp_path):
    a, b, c = (CIFAR10Files(str(write_synthetic(tmp_path / name, 20, seed).parent), train=True)
               for name, seed in (("a", 0), ("b", 0), ("c", 1)))
    assert np.array_equal(a.data, b.data) and a.targets == b.targets
    assert not np.array_equal(a.data, c.data)


def test_images_carry_their_class_colour(tmp_path):
    """Noise around a per-class colour: a model can learn it, so the loss falls."""
    write_synthetic(tmp_path, 200, seed=0)
    train = CIFAR10Files(str(tmp_path), train=True)
    targets = np.array(train.targets)
    means = {k: train.data[targets == k].mean(axis=(0, 1, 2)) for k in set(train.targets)}
    spread_between = np.std([m for m in means.values()], axis=0).mean()
    assert spread_between > 10  # class means differ by far more than the per-pixel noise averages out to


def test_ensure_synthetic_is_idempotent(tmp_path):
    root = tmp_path / "syn"
    ensure_synthetic(root, 50, seed=0)
    meta = root / BATCHES_DIR / "batches.meta"
    batch = root / BATCHES_DIR / "data_batch_1"
    stamps = (meta.stat().st_mtime_ns, batch.stat().st_mtime_ns)
    before = batch.read_bytes()
    ensure_synthetic(root, 50, seed=0)
    assert (meta.stat().st_mtime_ns, batch.stat().st_mtime_ns) == stamps
    assert batch.read_bytes() == before
    assert sorted(p.name for p in root.iterdir()) == [BATCHES_DIR]  # no staging folder left
    assert len(CIFAR10Files(str(root), train=True)) == 50


def test_open_train_set_writes_a_synthetic_cell_data_under_its_own_root(tmp_path):
    cell = Cell(engine="single", batch_per_gpu=16, dataset="synthetic", train_images=50, seed=3)
    root = dataset_root(cell, tmp_path)
    assert root == tmp_path / "synthetic-cifar10-50-s3"
    assert len(open_train_set(cell, tmp_path)) == 50
    assert (root / BATCHES_DIR / "batches.meta").is_file()


def test_real_cifar10_lives_directly_under_data_dir(tmp_path):
    assert dataset_root(Cell(engine="single", batch_per_gpu=16), tmp_path) == tmp_path


def test_missing_cifar10_says_how_to_download_it(tmp_path):
    import pytest

    with pytest.raises(FileNotFoundError, match="python -m jobs.data --download"):
        open_train_set(Cell(engine="single", batch_per_gpu=16), tmp_path)
