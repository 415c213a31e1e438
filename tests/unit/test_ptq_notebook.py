"""jobs.ptq.notebook: the notebook's functions, with its signatures, worked by hand; the notebook's
variants built from them give the integers of the generic path (jobs.ptq.simulate.plan); a run calls
them, and the code it records for the hand-in is theirs (TA3 7)."""
from __future__ import annotations

import dataclasses
import inspect
import textwrap

import pytest
import torch

from jobs.ptq import lenet, notebook
from jobs.ptq.config import PTQConfig, QuantSpec
from jobs.ptq.experiment import run_ptq
from jobs.ptq.lenet import LAYERS
from jobs.ptq.listing import listings
from jobs.ptq.profile import activation_ranges, profile_activations
from jobs.ptq.quantize import quantize_weight
from jobs.ptq.simulate import SimulatedNet, plan


def test_the_notebook_functions_by_hand():
    """Weights [-0.5, 0.25]: n = 127 / 0.5 = 254, codes [-127, 64] (63.5 rounds to even). Input max 2: 63.5.
    A layer with n_w 254 after the input (63.5) and one earlier layer (n_w 100, n_out 0.01): its sum carries
    254 x 63.5 x 100 x 0.01 = 16,129; outputs up to 4 -> n_out = 127 / 4 / 16,129; a bias 0.5 -> 8,064 (8,064.5
    to even)."""
    q, n = notebook.quantized_weights(torch.tensor([-0.5, 0.25]))
    assert n == 254.0 and q.tolist() == [-127.0, 64.0]
    assert notebook.quantize_initial_input(torch.tensor([-2.0, 1.0])) == 63.5
    ns = [(100.0, 0.01)]
    assert notebook.quantize_activations(torch.tensor([0.0, 4.0]), 254.0, 63.5, ns) == pytest.approx(127 / 4 / 16_129)
    assert notebook.quantized_bias(torch.tensor([0.5]), 254.0, 63.5, ns).tolist() == [8064.0]


def test_the_signatures_are_the_notebooks():
    names = {f: list(inspect.signature(getattr(notebook, f)).parameters) for f in
             ("quantized_weights", "quantize_initial_input", "quantize_activations", "quantized_bias")}
    assert names == {"quantized_weights": ["weights"], "quantize_initial_input": ["pixels"],
                     "quantize_activations": ["activations", "n_w", "n_initial_input", "ns"],
                     "quantized_bias": ["bias", "n_w", "n_initial_input", "ns"]}


@pytest.fixture(scope="module")
def trained():
    torch.manual_seed(0)
    images = torch.randn(40, 3, 32, 32)
    nets = {b: lenet.build(b, seed=1) for b in (False, True)}
    with torch.no_grad():
        nets[True].fc3.bias.copy_(torch.linspace(-0.3, 0.3, 10))
    return nets, images


@pytest.mark.parametrize("spec", [QuantSpec(calibration_images=16), QuantSpec(calibration_images=16, activation_bits=None),
                                  QuantSpec(calibration_images=16, activation_bits=None, bias="float")],
                         ids=["W8A8", "W8", "W8 float-bias"])
@pytest.mark.parametrize("with_bias", [False, True])
def test_the_notebook_plan_gives_the_generic_integers(trained, spec, with_bias):
    nets, images = trained
    net = nets[with_bias]
    profile = profile_activations(net, images[:16])
    mine = notebook.notebook_plan(net, spec, profile)
    weights = {n: quantize_weight(net.layer(n).weight, 8) for n in LAYERS}
    ranges = activation_ranges(profile, 16, "max", 8) if spec.quantizes_activations else None
    generic = plan(net, spec, weights, ranges)
    for a, b in zip(mine.layers, generic.layers, strict=True):
        assert torch.equal(a.weight, b.weight) and torch.equal(a.weight_scale, b.weight_scale)
        assert torch.allclose(a.multiplier, b.multiplier, rtol=1e-12, atol=0)
        assert (a.bias is None) == (b.bias is None) and (a.bias is None or torch.allclose(a.bias, b.bias, rtol=1e-12))
    assert torch.equal(SimulatedNet(mine, "cpu").forward(images), SimulatedNet(generic, "cpu").forward(images))


def test_a_run_takes_the_notebook_variants_scales_from_the_notebook_functions_and_hands_them_in(trained, monkeypatch):
    """The notebook's W8, W8A8, W8A8B32 and float-bias variants call the functions the hand-in prints, with
    the notebook's arguments; the sweep does not; the listing is their source as the file holds it."""
    nets, images = trained
    calls: dict[str, int] = {}
    for name in ("quantized_weights", "quantize_initial_input", "quantize_activations", "quantized_bias"):
        original = getattr(notebook, name)

        def spy(*args, _f=original, _name=name):
            calls[_name] = calls.get(_name, 0) + 1
            return _f(*args)
        monkeypatch.setattr(notebook, name, spy)
    labels = torch.arange(40) % 10
    config = PTQConfig(notebook=QuantSpec(calibration_images=16), sweep=(QuantSpec(calibration_images=16),))
    outcome = run_ptq(nets[False], nets[True], (images, labels), (images[:8], labels[:8]), config)
    assert len(outcome.variants) == 7
    # 4 quantized notebook variants x 5 layers; W8A8 and W8A8B32 profile; fc3 of W8A8B32 and of the float-bias
    # variant have a bias, quantized only in W8A8B32
    assert calls == {"quantized_weights": 20, "quantize_initial_input": 2, "quantize_activations": 10,
                     "quantized_bias": 1}
    monkeypatch.undo()
    code = {c.function: c for c in listings()}
    for name in ("quantized_weights", "quantize_initial_input", "quantize_activations", "quantized_bias"):
        f = getattr(notebook, name)
        assert code[f"jobs.ptq.notebook.{name}"].source == textwrap.dedent(inspect.getsource(f))
        assert code[f"jobs.ptq.notebook.{name}"].stands_for == name
        assert f"def {name}(" in code[f"jobs.ptq.notebook.{name}"].source


def test_the_notebook_functions_are_used_only_for_the_notebooks_choices():
    assert notebook.is_notebooks(QuantSpec()) and notebook.is_notebooks(QuantSpec(activation_bits=None, bias="float"))
    for change in ({"weight_bits": 4}, {"activation_bits": 6}, {"granularity": "channel"}, {"weight_method": "mse"},
                   {"activation_method": "percentile"}, {"cumulative_scales": False}):
        assert not notebook.is_notebooks(dataclasses.replace(QuantSpec(), **change)), change


def test_the_printed_forward_shows_where_its_weights_multipliers_and_biases_come_from():
    """TA4 26: the forward handed in for B.Q4 reads without the package's other files: every function of the
    package it calls is printed too, and so is the code that fills the self.<name> tensors it uses, down to
    the notebook's quantized_weights / quantize_activations / quantized_bias."""
    import re

    from jobs.ptq import choices, lenet, quantize, simulate

    forward = [c for c in listings() if c.stands_for == "forward"]
    printed = {c.function.rsplit(".", 1)[-1] for c in listings()}  # B.Q2 and B.Q5 print theirs
    text = "\n".join(c.source for c in forward)
    ours = {name for m in (simulate, quantize, lenet, notebook, choices) for name in vars(m)
            if callable(getattr(m, name)) and getattr(getattr(m, name), "__module__", "").startswith("jobs.ptq")}
    ours |= {name for name in vars(simulate.SimulatedNet) if callable(getattr(simulate.SimulatedNet, name))}
    called = set(re.findall(r"\b([A-Za-z_]\w*)\(", text)) | set(re.findall(r"\bwith .*?\b(_\w+)\(", text))
    assert sorted((called & ours) - printed - {"__call__"}) == []
    for used in set(re.findall(r"self\.(\w+)\[", text)):
        # the tensor the forward indexes is filled (or declared, a dataclass field) in printed code
        assert f"self.{used} = " in text or re.search(rf"^    {used}: ", text, re.M), used
    for name in ("quantized_weights", "quantize_activations", "quantized_bias"):
        assert f"{name}(" in text, name
