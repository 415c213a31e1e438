"""The fast pipeline on a CPU: same optimizer as torch.optim.SGD, correct augmentation,
every image counted once per epoch, DDP ranks in step."""
from __future__ import annotations

import torch
from torch import nn

from jobs.train.cell import Cell
from jobs.train.evidence import tensor_bytes
from jobs.train.fast import augment
from jobs.train.model import build_model
from jobs.runtime.optim import sgd_step
from jobs.core.result import read_result
from tests.helpers import TINY_JOB as TINY, run_job


def test_sgd_step_matches_torch_sgd_with_momentum_and_weight_decay():
    torch.manual_seed(0)
    params = [torch.randn(4, 3), torch.randn(7)]
    reference = [p.clone().requires_grad_() for p in params]
    optimizer = torch.optim.SGD(reference, lr=0.1, momentum=0.9, weight_decay=5e-4)
    buffers = [torch.zeros_like(p) for p in params]
    for lr in (0.1, 0.05, 0.2):  # a changing LR, as warmup does
        grads = [torch.randn_like(p) for p in params]
        for r, g in zip(reference, grads):
            r.grad = g.clone()
        optimizer.param_groups[0]["lr"] = lr
        optimizer.step()
        sgd_step(params, grads, buffers, torch.tensor(lr), 0.9, 5e-4)
    for mine, theirs in zip(params, reference):
        torch.testing.assert_close(mine, theirs.detach(), rtol=1e-6, atol=1e-6)


def test_augment_crops_within_the_zero_padding_and_flips():
    images = torch.arange(1, 1 + 3 * 32 * 32, dtype=torch.float32).view(1, 3, 32, 32).repeat(64, 1, 1, 1)
    out = augment(images, torch.Generator().manual_seed(0))
    assert out.shape == images.shape
    kept = out[out != 0]
    assert set(kept.unique().tolist()) <= set(images.unique().tolist()), "only original pixels or padding"
    unflipped = [torch.equal(o, images[0]) or torch.equal(o.flip(2), images[0]) for o in out]
    assert 0 < sum(unflipped) < 64, "some crops are shifted, not all"
    row = out[:, 0, 16, :]  # a middle row: increasing left to right unless flipped
    increasing = (row[:, 10] < row[:, 20]).sum().item()
    assert 10 < increasing < 54, "about half the images are flipped"


def test_fast_single_and_ddp_count_every_image_once_and_learn(tmp_path):
    for cell in (Cell(engine="single", batch_per_gpu=16, pipeline="fast", **TINY),
                 Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=10, pipeline="fast", **TINY)):
        job = run_job(tmp_path, cell)
        assert job.code == 0
        result = read_result(job.path)
        assert result.status == "ok"
        assert [e.images for e in result.body.epochs] == [48, 48], "padding images carry no weight"
        assert result.body.epochs[1].loss < result.body.epochs[0].loss
        assert result.body.epochs[1].h2d_s == 0.0, "data already on the device"
        assert result.env["compiled"] is False and result.env["cuda_graph"] is False, "a CPU runs the step eagerly"
    evidence = result.body.ddp_evidence  # the DDP run's: one broadcast of the whole state, then gradients only
    params, buffers = (tensor_bytes(f(build_model("tiny"))) for f in (nn.Module.parameters, nn.Module.buffers))
    assert (evidence.broadcast_buffers, evidence.buffer_bytes, evidence.init_bytes) == (False, 0, params + buffers)
    assert evidence.steps_per_epoch == 3 and evidence.bn_rank_spread > 0  # 48 images, 10 per rank and step
