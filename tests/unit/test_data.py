"""jobs.runtime.data: the synthetic CIFAR-10 is read by torchvision's own CIFAR10 code."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pytest

from jobs.train.cell import Cell
from jobs.runtime.data import BATCHES_DIR, CIFAR10Files, dataset_root, ensure_synthetic, open_test_set, open_train_set, write_synthetic

# sha256 of the files write_synthetic(root, 50, seed=0) wrote before test sets could grow
# (commit fa0c56f): a set on disk must read the same after the change.
GOLDEN_50_S0 = {
    "batches.meta": "ff094ad778ba2ec845d601b2cb67a2a160b43df9de850426751824055464edc2",
    "data_batch_1": "3d2e0c2cacc0c7e4d2beb7faf1c76c40db50de40624f8a0106e1a986cb2b382a",
    "data_batch_2": "373acc8ffb85d8979b450e5a4d6394937fba40dddcaffc1fa345f821d018720b",
    "data_batch_3": "2fb3e60b3952c58661e2023552fd7c439f25ac8606d37f6c89665d0850082a3f",
    "data_batch_4": "426d80d61df74d865824dd4ad3c78bc5ec0ea58be010906faebbc4f0bf420be1",
    "data_batch_5": "f1d4c041e87bb917dc73250f4c452971769221580aa5feea9d3b122160fe60de",
    "test_batch": "c3ab5bb5da493d2a0681beb06314f948e41fe288cf1b84c429b5a26dcd0de8bc",
}


def _sha(folder, name):
    return hashlib.sha256((folder / name).read_bytes()).hexdigest()


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


def test_every_repeat_of_a_cell_reads_the_data_set_of_its_seed(tmp_path):
    """A repeat changes the run's randomness (Cell.run_seed), never the data it trains on."""
    roots = {dataset_root(Cell(engine="single", batch_per_gpu=16, dataset="synthetic", train_images=50, seed=3,
                               repeat=r), tmp_path) for r in range(3)}
    assert roots == {tmp_path / "synthetic-cifar10-50-s3"}


def test_real_cifar10_lives_directly_under_data_dir(tmp_path):
    assert dataset_root(Cell(engine="single", batch_per_gpu=16), tmp_path) == tmp_path


def test_missing_cifar10_says_how_to_download_it(tmp_path):
    import pytest

    with pytest.raises(FileNotFoundError, match="python -m jobs.runtime.data --download"):
        open_train_set(Cell(engine="single", batch_per_gpu=16), tmp_path)


def test_default_synthetic_files_are_byte_identical_to_earlier_versions(tmp_path):
    folder = write_synthetic(tmp_path, 50, seed=0)
    assert {name: _sha(folder, name) for name in GOLDEN_50_S0} == GOLDEN_50_S0


def test_a_larger_test_set_keeps_the_training_batches_byte_identical(tmp_path):
    folder = write_synthetic(tmp_path, 50, seed=0, test_images=2000)
    for name in GOLDEN_50_S0:
        if name.startswith("data_batch") or name == "batches.meta":
            assert _sha(folder, name) == GOLDEN_50_S0[name], name
    assert len(CIFAR10Files(str(tmp_path), train=False)) == 2000


def test_colour_jitter_makes_the_classes_overlap(tmp_path):
    """With jitter, an image's mean colour is often nearer another class's colour."""
    def nearest_class_hits(jitter):
        write_synthetic(tmp_path / f"j{jitter}", 2000, seed=0, colour_jitter=jitter)
        train = CIFAR10Files(str(tmp_path / f"j{jitter}"), train=True)
        targets = np.array(train.targets)
        colours = train.data.reshape(len(targets), -1, 3).mean(axis=1)
        centres = np.stack([colours[targets == k].mean(axis=0) for k in range(10)])
        nearest = np.argmin(((colours[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)
        return (nearest == targets).mean()

    assert nearest_class_hits(0.0) > 0.99
    assert nearest_class_hits(40.0) < 0.9


@dataclass(frozen=True)
class _PTQLikeCell:  # a cell kind with the synthetic options
    dataset: str = "synthetic"
    train_images: int = 50
    seed: int = 0
    test_images: int = 300
    colour_jitter: float = 20.0


def test_open_test_set_writes_and_reads_a_synthetic_set_with_its_options(tmp_path):
    cell = _PTQLikeCell()
    assert dataset_root(cell, tmp_path) == tmp_path / "synthetic-cifar10-50-s0-t300-j20"
    assert len(open_test_set(cell, tmp_path)) == 300
    assert len(open_train_set(cell, tmp_path)) == 50
    plain = Cell(engine="single", batch_per_gpu=16, dataset="synthetic", train_images=50)
    assert len(open_test_set(plain, tmp_path)) == 100  # a training cell keeps its old set and name


def test_missing_cifar10_test_set_says_how_to_download_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="python -m jobs.runtime.data --download"):
        open_test_set(Cell(engine="single", batch_per_gpu=16), tmp_path)
