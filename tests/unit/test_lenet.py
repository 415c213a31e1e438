"""jobs.ptq.lenet and jobs.ptq.train: the notebook's network, its normalisation and its training."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torchvision import transforms

from jobs.ptq import lenet
from jobs.ptq.train import TrainSettings, train


def test_net_has_the_notebooks_61770_weights_and_no_bias():
    net = lenet.Net()
    assert sum(p.numel() for p in net.parameters()) == 61_770
    with_bias = lenet.NetWithBias()
    assert [n for n, _ in with_bias.named_parameters() if n.endswith("bias")] == ["fc3.bias"]
    assert net(torch.zeros(2, 3, 32, 32)).shape == (2, 10)


def test_build_fixes_the_weights_by_seed_without_touching_the_global_rng():
    state = torch.get_rng_state()
    a, b, c = lenet.build(False, 1), lenet.build(False, 1), lenet.build(False, 2)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a.fc1.weight, b.fc1.weight) and not torch.equal(a.fc1.weight, c.fc1.weight)


def test_normalise_is_the_notebooks_totensor_then_normalize_bit_for_bit():
    pixels = np.random.default_rng(0).integers(0, 256, size=(3, 32, 32, 3), dtype=np.uint8)
    notebook = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    expected = torch.stack([notebook(p) for p in pixels])
    got = lenet.normalise(pixels)
    assert torch.equal(got, expected)
    assert got.min() >= -1 and got.max() <= 1


def _reference_training(net, images, labels, s: TrainSettings):
    """The notebook's loop: torch.optim.SGD, batch by batch, in the order of each epoch's permutation."""
    optimizer = torch.optim.SGD(net.parameters(), lr=s.lr, momentum=s.momentum)
    generator = torch.Generator().manual_seed(s.seed)
    for _ in range(s.epochs):
        order = torch.randperm(images.shape[0], generator=generator)
        for start in range(0, images.shape[0], s.batch_size):
            index = order[start:start + s.batch_size]
            optimizer.zero_grad()
            F.cross_entropy(net(images[index]), labels[index]).backward()
            optimizer.step()


def test_training_is_the_notebooks_sgd_on_shuffled_batches_of_four():
    """22 images: 5 full batches and a short one per epoch, 2 epochs, as a DataLoader would give."""
    torch.manual_seed(0)
    images, labels = torch.rand(22, 3, 32, 32) * 2 - 1, torch.randint(0, 10, (22,))
    settings = TrainSettings(epochs=2, lr=0.01, seed=3)
    mine, reference = lenet.build(False, 0), lenet.build(False, 0)
    report = train(mine, images, labels, settings)
    _reference_training(reference, images, labels, settings)
    assert report.steps == 12 and not report.cuda_graph and len(report.epoch_losses) == 2
    for a, b in zip(mine.parameters(), reference.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    assert not torch.equal(mine.fc3.weight, lenet.build(False, 0).fc3.weight)  # it did train


def test_training_is_deterministic_on_the_cpu():
    images, labels = torch.rand(16, 3, 32, 32) * 2 - 1, torch.randint(0, 10, (16,))
    a, b = lenet.build(True, 0), lenet.build(True, 0)
    ra = train(a, images, labels, TrainSettings(epochs=1, seed=5))
    rb = train(b, images, labels, TrainSettings(epochs=1, seed=5))
    assert ra.epoch_losses == rb.epoch_losses
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters()))


def test_bad_settings_name_the_field():
    with pytest.raises(ValueError, match="batch_size must be at least 1"):
        TrainSettings(batch_size=0)
