"""jobs.runtime.evaluate: loss, accuracy and predictions of a model or callable over batches."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from jobs.runtime.evaluate import batches, evaluate, shard


def _one_hot_logits(classes: torch.Tensor) -> torch.Tensor:
    return nn.functional.one_hot(classes, 10).float() * 100


def test_accuracy_loss_and_predictions_of_a_callable():
    """Predicts label 3 for every image: 2 of 5 right; uniform logits would give loss ln 10."""
    labels = torch.tensor([3, 1, 3, 0, 9])
    images = torch.zeros(5, 3, 32, 32)
    e = evaluate(lambda x: _one_hot_logits(torch.full((x.shape[0],), 3)), batches(images, labels, size=2), "cpu",
                 keep_predictions=True)
    assert (e.images, e.correct, e.accuracy) == (5, 2, pytest.approx(0.4))
    assert e.predictions.tolist() == [3, 3, 3, 3, 3]
    uniform = evaluate(lambda x: torch.zeros(x.shape[0], 10), batches(images, labels), "cpu")
    assert uniform.loss == pytest.approx(math.log(10)) and uniform.predictions is None


def test_a_module_is_evaluated_in_eval_mode_and_given_back_as_it_was():
    seen = []

    class Probe(nn.Module):
        def forward(self, x):
            seen.append(self.training)
            return torch.zeros(x.shape[0], 10)

    probe = Probe().train()
    evaluate(probe, batches(torch.zeros(4, 1), torch.zeros(4, dtype=torch.long)), "cpu")
    assert seen == [False] and probe.training


def test_batches_cover_every_image_once_in_order():
    images, labels = torch.arange(7.0), torch.arange(7)
    got = list(batches(images, labels, size=3))
    assert [b[1].tolist() for b in got] == [[0, 1, 2], [3, 4, 5], [6]]


@pytest.mark.parametrize("count, world", [(7, 2), (10_000, 4), (100, 3), (1, 2), (0, 2), (5, 1)])
def test_shards_hold_every_image_once_and_differ_by_at_most_one(count, world):
    """No padding: DistributedSampler would repeat images to even out the ranks."""
    parts = [shard(count, rank, world) for rank in range(world)]
    assert [i for part in parts for i in part] == list(range(count))
    assert max(map(len, parts)) - min(map(len, parts)) <= 1


def test_a_shard_is_contiguous():
    assert [shard(7, rank, 2) for rank in range(2)] == [range(0, 3), range(3, 7)]
