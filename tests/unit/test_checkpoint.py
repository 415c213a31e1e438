"""jobs.runtime.checkpoint: a requeued job's state, loaded as weights only (no code runs from the file)."""
from __future__ import annotations

import pytest
import torch

from jobs.runtime import checkpoint
from jobs.core.layout import checkpoint_path


class NotWeights:
    def __reduce__(self):  # what a tampered or foreign file could hold: a call made while loading
        return (print, ("this ran while loading a checkpoint",))


def test_a_trainers_state_round_trips_as_weights_only(tmp_path):
    model = torch.nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.ones(3, 4)).sum().backward()
    optimizer.step()
    epochs = [{"epoch": 1, "epoch_s": 1.5, "loss": float("nan"), "comm_exposed_s": None}]
    state = {"trainer": {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                         "momentum": [torch.zeros(3)]}, "epochs": epochs}
    path = checkpoint_path(tmp_path, "abc123abc123")
    checkpoint.save(path, state)
    again = checkpoint.load(path, torch.device("cpu"))
    assert torch.equal(again["trainer"]["model"]["weight"], model.weight.detach())
    assert again["trainer"]["optimizer"]["state"][0]["momentum_buffer"].shape == (2, 4)
    assert again["epochs"][0]["epoch_s"] == 1.5 and again["epochs"][0]["comm_exposed_s"] is None


def test_a_checkpoint_holding_more_than_weights_is_refused(tmp_path, capsys):
    path = checkpoint_path(tmp_path, "abc123abc123")
    path.parent.mkdir(parents=True)
    torch.save({"trainer": NotWeights()}, path)
    with pytest.raises(checkpoint.CheckpointError, match=rf"{path}.*delete it"):
        checkpoint.load(path, torch.device("cpu"))
    assert "this ran" not in capsys.readouterr().out
