"""jobs.train.evidence's pure parts: the BatchNorm spread across ranks and the sampler's repeated order."""
from __future__ import annotations

import pytest
import torch

from jobs.train.evidence import order_overlaps, position_overlap, rank_spread, tensor_bytes


def test_rank_spread_is_the_widest_channel_range_over_the_layers_mean_magnitude():
    """Layer 1: ranges over ranks (0, 2), mean |v| (1+2+1+4)/4 = 2: 2/2 = 1.0. Layer 2: the ranks
    agree, 0. Layer 3: all zero, counted 0. The max: 1.0."""
    layers = [torch.tensor([[1.0, 2.0], [1.0, 4.0]]), torch.tensor([[3.0, 3.0, 3.0]] * 2), torch.zeros(2, 4)]
    assert rank_spread(layers) == 1.0
    assert rank_spread(layers[1:]) == 0.0
    assert rank_spread([torch.tensor([[2.0], [1.0], [3.0]])]) == pytest.approx(1.0)  # range 2 over mean 2, 3 ranks


def test_position_overlap_counts_the_same_sample_at_the_same_place():
    assert position_overlap([3, 1, 2, 0], [3, 2, 1, 0]) == 0.5
    with pytest.raises(ValueError):
        position_overlap([1, 2], [1])


@pytest.mark.parametrize("images, world_size, rank", [(50_000, 4, 3), (48, 2, 0), (7, 2, 1)])
def test_without_set_epoch_the_order_repeats_with_it_only_chance_agrees(images, world_size, rank):
    without, with_epoch = order_overlaps(images, world_size, rank, seed=5)
    assert without == 1.0
    assert with_epoch < (0.01 if images > 1000 else 0.6)


def test_tensor_bytes_counts_each_tensors_element_size():
    assert tensor_bytes([torch.zeros(3), torch.zeros(2, dtype=torch.int64), torch.zeros(4, dtype=torch.bfloat16)]) == 12 + 16 + 8
