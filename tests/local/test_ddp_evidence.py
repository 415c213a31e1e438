"""Q5-Q7's evidence recorded by a DDP job end to end: 2 gloo ranks on the CPU, the tiny CNN, with
DDP's buffer broadcast on (the default) and off (gradients only)."""
from __future__ import annotations

import pytest

from jobs.core.result import read_result
from jobs.train.cell import Cell
from jobs.train.evidence import tensor_bytes
from jobs.train.model import build_model
from tests.helpers import TINY_JOB as TINY, run_job

TINY_NET = build_model("tiny")
PARAMS = sum(p.numel() for p in TINY_NET.parameters() if p.requires_grad)
BUFFER_BYTES = tensor_bytes(TINY_NET.buffers())  # 2 BatchNorms of 8 and 16 channels: mean, var fp32, a count int64


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both runs' results, by broadcast_buffers: the same cell otherwise (48 images, 8 per rank and step)."""
    found = {}
    for broadcast in (True, False):
        cell = Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=8, broadcast_buffers=broadcast, **TINY)
        job = run_job(tmp_path_factory.mktemp(f"broadcast-{broadcast}"), cell)
        assert job.code == 0, job.stderr
        found[broadcast] = read_result(job.path)
    return found


def test_the_bytes_ddp_sends_besides_the_gradients(runs):
    on, off = runs[True].body.ddp_evidence, runs[False].body.ddp_evidence
    assert BUFFER_BYTES == (8 + 16) * 2 * 4 + 2 * 8
    for evidence in (on, off):
        assert evidence.world_size == 2 and evidence.steps_per_epoch == 3  # 48 images / (8 x 2 ranks)
        assert evidence.grad_bytes == 4 * PARAMS == runs[True].body.comm.grad_bytes
    assert (on.broadcast_buffers, on.buffer_bytes, on.init_bytes) == (True, BUFFER_BYTES, 4 * PARAMS + BUFFER_BYTES)
    assert (off.broadcast_buffers, off.buffer_bytes, off.init_bytes) == (False, 0, 4 * PARAMS)


def test_without_set_epoch_every_epoch_repeats_the_first_order(runs):
    for result in runs.values():
        evidence = result.body.ddp_evidence
        assert evidence.order_overlap_without_set_epoch == 1.0
        assert evidence.order_overlap_with_set_epoch < 0.5


def test_the_ranks_batchnorm_statistics_differ_after_training_yet_rank_0s_model_is_the_same(runs):
    """Even with the broadcast on, the ranks end apart: DDP sends rank 0's buffers before each forward,
    and that forward then updates each rank's own from its own images. Rank 0's never take another
    rank's: the weights (gradients are all-reduced either way) and rank 0's statistics, which the
    evaluation shares, are the same with or without the broadcast."""
    on, off = runs[True].body, runs[False].body
    assert on.ddp_evidence.bn_rank_spread > 0 and off.ddp_evidence.bn_rank_spread > 0
    assert [(e.loss, e.accuracy) for e in on.epochs] == [(e.loss, e.accuracy) for e in off.epochs]
    assert [(e.test_loss, e.test_accuracy) for e in on.epochs] == [(e.test_loss, e.test_accuracy) for e in off.epochs]
