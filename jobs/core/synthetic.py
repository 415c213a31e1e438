"""The synthetic data set's test size, which every side reads: jobs.runtime.data writes it,
jobs.train.cell bounds its test_images by it, collect shows the count its accuracy rests on."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jobs.core.cell import CIFAR10_TEST_IMAGES, CIFAR10_TRAIN_IMAGES

SYNTHETIC_IMAGES = "a colour per class plus noise"  # what a synthetic image is (jobs.runtime.data), said once
SYNTHETIC_TEST_IMAGES = 100  # the test batch of a set smaller than CIFAR-10 (the quick study, the tests)


def synthetic_test_images(train_images: int) -> int:
    """The test images a training cell's synthetic set holds: CIFAR-10's 10,000 for a set of
    CIFAR-10's size (its accuracy then as precise as CIFAR-10's: 0.01 points), else
    SYNTHETIC_TEST_IMAGES (a set that size is a quick test: 1 point)."""
    return CIFAR10_TEST_IMAGES if train_images >= CIFAR10_TRAIN_IMAGES else SYNTHETIC_TEST_IMAGES


def data_said(cells: Sequence[Mapping[str, Any]]) -> str:
    """The one description of the data the cells read, as the hand-in prints it beside the study file and
    the answers say it (TA4 17): "synthetic (a colour per class plus noise, colour jittered by 30 levels) in
    CIFAR-10's on-disk format, 50,000 training images: not CIFAR-10, so its accuracies are this task's";
    "" where no cell names a data set."""
    said = []
    for dataset, images, jitter in sorted({(str(c["dataset"]), int(c.get("train_images", 0)),
                                            float(c.get("colour_jitter", 0.0) or 0.0))
                                           for c in cells if c.get("dataset")}):
        if dataset != "synthetic":
            said.append(f"{dataset}, {images:,} training images")
            continue
        jittered = f", colour jittered by {jitter:g} levels" if jitter else ""
        said.append(f"synthetic ({SYNTHETIC_IMAGES}{jittered}) in CIFAR-10's on-disk format, {images:,} training images")
    if not said:
        return ""
    synthetic = any(s.startswith("synthetic") for s in said)
    return "; ".join(said) + (": not CIFAR-10, so its accuracies are this task's, not CIFAR-10's" if synthetic else "")
