"""A PTQ cell's job on the CPU, on a tiny synthetic set: what it trains, reuses and replaces."""
from __future__ import annotations

import pytest
import torch

from jobs.runtime import checkpoint
from jobs.core.layout import net_path
from jobs.ptq.cell import PTQCell
from jobs.ptq.run import run
from jobs.core.result import read_result

TINY = dict(dataset="synthetic", train_images=64, test_images=32, epochs=1, gpus_per_node=0, notebook_calibration=16,
            calibration_images=[16], weight_bits=[8], activation_bits=[8], granularities=["tensor"],
            range_methods=["max"], integer_run="none")


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    """One cell run to the end: its networks are in nets/."""
    out, data = tmp_path_factory.mktemp("out"), tmp_path_factory.mktemp("data")
    cell = PTQCell(**TINY)
    return cell, run(cell, out, data), out, data


def test_a_training_set_smaller_than_the_default_calibration_runs(first):
    """64 training images, every calibration 16: the weights-only variants ask for none."""
    cell, status, out, _ = first
    assert status == "ok"
    result = read_result(out / f"{cell.cell_id}.json")
    assert result.to_dict()["ptq"]["outcome"]["calibration_images"] == 16 and result.run_seed == cell.training_seed


def test_the_result_carries_the_code_that_ran(first):
    """The hand-in prints B.Q2, B.Q4 and B.Q5's code from the result: the job records each function's
    source as its file holds it, for every notebook function the assignment asks to write."""
    import inspect

    from jobs.ptq.notebook import quantized_weights

    cell, _, out, _ = first
    code = {c["function"]: c for c in read_result(out / f"{cell.cell_id}.json").to_dict()["ptq"]["code"]}
    assert code["jobs.ptq.notebook.quantized_weights"]["source"] == inspect.getsource(quantized_weights)
    assert code["jobs.ptq.notebook.quantized_bias"]["stands_for"] == "quantized_bias"
    assert {c["stands_for"] for c in code.values()} == {"quantized_weights", "quantize_initial_input",
                                                        "quantize_activations", "forward", "quantized_bias"}


@pytest.mark.parametrize("damage", ["truncated", "garbage", "another network"])
def test_a_corrupt_trained_network_is_named_trained_again_and_replaced(first, tmp_path, capsys, damage):
    cell, _, out, data = first
    results = tmp_path / "results"
    path = net_path(results, cell.training_id(False))
    path.parent.mkdir(parents=True)
    good = net_path(out, cell.training_id(False)).read_bytes()
    bias_net = net_path(out, cell.training_id(True)).read_bytes()  # fc3 has a bias: not Net's weights
    path.write_bytes({"truncated": good[: len(good) // 2], "garbage": b"not a network",
                      "another network": bias_net}[damage])
    capsys.readouterr()

    assert run(cell, results, data) == "ok"
    assert f"{path} is unreadable" in capsys.readouterr().out
    training = read_result(results / f"{cell.cell_id}.json").to_dict()["ptq"]["training"]
    assert [t["reused"] for t in training] == [False, False]
    assert checkpoint.load(path, torch.device("cpu")) is not None  # replaced by the network trained now
    assert not list(path.parent.glob("*.tmp*"))

    again = PTQCell(**dict(TINY, weight_bits=[4]))
    assert run(again, results, data) == "ok"
    assert [t["reused"] for t in read_result(results / f"{again.cell_id}.json").to_dict()["ptq"]["training"]] == [True, True]
