"""The synthetic data set's test size, which every side reads: jobs.runtime.data writes it,
jobs.train.cell bounds its test_images by it, collect shows the count its accuracy rests on."""
from __future__ import annotations

from jobs.core.cell import CIFAR10_TEST_IMAGES, CIFAR10_TRAIN_IMAGES

SYNTHETIC_TEST_IMAGES = 100  # the test batch of a set smaller than CIFAR-10 (the quick study, the tests)


def synthetic_test_images(train_images: int) -> int:
    """The test images a training cell's synthetic set holds: CIFAR-10's 10,000 for a set of
    CIFAR-10's size (its accuracy then as precise as CIFAR-10's: 0.01 points), else
    SYNTHETIC_TEST_IMAGES (a set that size is a quick test: 1 point)."""
    return CIFAR10_TEST_IMAGES if train_images >= CIFAR10_TRAIN_IMAGES else SYNTHETIC_TEST_IMAGES
