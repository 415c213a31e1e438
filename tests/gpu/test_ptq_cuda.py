"""The PTQ core on a GPU (skipped without one): the captured training step is the eager one,
and the integer-only run (on the CPU) agrees with the simulation run on the GPU."""
from __future__ import annotations

import pytest
import torch

from jobs.ptq import lenet
from jobs.ptq.train import TrainSettings, train
from jobs.ptq.config import QuantSpec
from jobs.ptq.integer import compare_with_simulation
from tests.factories import calibrated_plan

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_the_cuda_graph_step_trains_as_the_eager_step():
    g = torch.Generator().manual_seed(0)
    images = (torch.rand(2002, 3, 32, 32, generator=g) * 2 - 1).cuda()  # 500 full batches and a short one
    labels = torch.randint(0, 10, (2002,), generator=g).cuda()
    graphed, eager = lenet.build(False, 0).cuda(), lenet.build(False, 0).cuda()
    report = train(graphed, images, labels, TrainSettings(epochs=1))
    eager_report = train(eager, images, labels, TrainSettings(epochs=1), use_graph=False)
    assert report.cuda_graph, report.graph_error
    assert report.steps == eager_report.steps == 501
    for a, b in zip(graphed.parameters(), eager.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    assert report.epoch_losses[0] == pytest.approx(eager_report.epoch_losses[0], rel=1e-4)


@pytest.mark.parametrize("spec", [QuantSpec(), QuantSpec(weight_bits=4, activation_bits=3, granularity="channel"),
                                  QuantSpec(weight_bits=12, activation_bits=10)], ids=["W8A8", "W4A3", "W12A10"])
def test_integer_only_run_agrees_on_cuda(spec):
    p, images = calibrated_plan(spec)
    data = [(images.cuda(), torch.zeros(64, dtype=torch.long).cuda())]
    agreement = compare_with_simulation(p, data, "cuda")
    assert (agreement.prediction_mismatches, agreement.logit_mismatches) == (0, 0)
