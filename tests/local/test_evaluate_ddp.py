"""jobs.runtime.evaluate under torch.distributed (2 gloo ranks on the CPU): each rank evaluates its shard
(DistributedSampler, shuffle=False) and every rank returns the whole test set's figures."""
from __future__ import annotations

import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from jobs.__main__ import free_port
from jobs.runtime.evaluate import evaluate


def _data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(23, 10, generator=g), torch.randint(0, 10, (23,), generator=g)


def _rank(rank: int, port: int, out: dict) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    try:
        images, labels = _data()
        sampler = DistributedSampler(TensorDataset(images, labels), num_replicas=2, rank=rank, shuffle=False,
                                     drop_last=True)  # 11 each: no image counted twice
        loader = DataLoader(TensorDataset(images, labels), batch_size=4, sampler=sampler)
        e = evaluate(lambda x: x, loader, "cpu")
        out[rank] = (e.images, e.correct, e.loss)
    finally:
        dist.destroy_process_group()


def test_two_ranks_sum_their_shards():
    images, labels = _data()
    whole = evaluate(lambda x: x, [(images[:22], labels[:22])], "cpu")
    with mp.Manager() as manager:
        out = manager.dict()
        mp.spawn(_rank, args=(free_port(), out), nprocs=2)
        results = dict(out)
    assert results[0] == results[1]
    images_seen, correct, loss = results[0]
    assert (images_seen, correct) == (22, whole.correct)
    assert abs(loss - whole.loss) < 1e-5  # float32 losses summed in another order
