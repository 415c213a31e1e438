"""Part B's findings from the hand-built PTQ study (tests/collect/dirs.py) and from tables built
by hand, each condition on both sides.

Per seed (NOTEBOOK_ACCURACY), each variant against its own float network, in points:
  Net W8                     +1, -1,  0 -> median 0  (-1 to +1): within the spread, not distinguishable
  Net W8A8                   -1, -2,  0 -> -1        (-2 to 0):  |1| <= 2, not distinguishable
  NetWithBias W8 float-bias  -5, -5, -6 -> -5        (-6 to -5): |5| > 1, 5.00 points below
  NetWithBias W8A8B32         0, +1, -1 -> 0                     not distinguishable
  int32 bias vs float bias: 0 (-1 to +1) against -5 (-6 to -5): 5 > 2, recovers 5.00 points
Sweep (the float accuracy less a penalty): a penalty of exactly 1 point is within 1 point, though 0.51 - 0.52
is -0.0100000000000000009 in floats (per channel, max at 4 bits; 8-bit activations from 16 images).
"""
from __future__ import annotations

import pandas as pd
import pytest

from collect.ptq import findings as ptq
from collect.report import collect
from tests.collect.dirs import ptq_results, write_ptq


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    return collect(write_ptq(tmp_path_factory.mktemp("ptq"))).findings


def texts(found, question: str) -> list[str]:
    return [f.text for f in found if f.question == question]


def test_each_notebook_variant_against_its_own_float_network_by_hand(found):
    assert texts(found, "B.Q2") == ["Net W8: test accuracy 52.00% (51.00%-53.00% over 3 of 5 runs), not distinguishable "
                                    "from its own float network's 52.00% (50.00%-54.00% over 3 of 5 runs); delta +0.00 "
                                    "points (-1.00 to +1.00 over 3 seeds)."]
    assert "Net W8A8: " in texts(found, "B.Q4")[0] and "not distinguishable from its own" in texts(found, "B.Q4")[0]
    float_bias, b32, bias = texts(found, "B.Q5")
    assert "NetWithBias W8 float-bias: test accuracy 50.00%" in float_bias
    assert "5.00 points below its own float network's 55.00%" in float_bias
    assert "not distinguishable from its own float network" in b32
    assert bias == ("Quantizing the bias to int32 at the sum's scale (NetWithBias W8A8B32) recovers 5.00 points over "
                    "leaving it float (NetWithBias W8 float-bias): deltas +0.00 and -5.00 points against their float "
                    "network.")


def test_the_bias_finding_follows_the_deltas(found):
    table = pd.DataFrame([
        dict(setup="", name="NetWithBias float", model="NetWithBias", quantized=False, bias=None, activation_bits=None,
             accuracy=0.55, delta=0.0, delta_min=0.0, delta_max=0.0, accuracy_min=0.55, accuracy_max=0.55, repeats=3),
        dict(setup="", name="NetWithBias W8 float-bias", model="NetWithBias", quantized=True, bias="float",
             activation_bits=None, accuracy=0.54, delta=-0.01, delta_min=-0.03, delta_max=0.01, accuracy_min=0.5,
             accuracy_max=0.56, repeats=3),
        dict(setup="", name="NetWithBias W8A8B32", model="NetWithBias", quantized=True, bias="int32", activation_bits=8,
             accuracy=0.55, delta=0.0, delta_min=-0.01, delta_max=0.01, accuracy_min=0.54, accuracy_max=0.56, repeats=3),
    ])
    out = ptq.notebook(table)
    assert "5.00 points below" not in out[0].text and "not distinguishable from its own" in out[0].text
    assert "is not distinguishable from leaving it float" in out[-1].text
    worse = table.assign(delta=[0.0, -0.01, -0.04], delta_min=[0.0, -0.015, -0.045], delta_max=[0.0, -0.005, -0.035])
    assert "loses 3.00 points against leaving it float" in ptq.notebook(worse)[-1].text
    assert "4.00 points below its own float network" in ptq.notebook(worse)[1].text


def test_ranges_say_narrower_and_wider_by_layer(found):
    weights, = texts(found, "B.Q1")
    assert weights.startswith("Net's weights, training seed 0 (cell ")
    assert "is wider in conv1, conv2, fc1, fc2 and fc3 (a 3-sigma clip would waste range there)" in weights
    assert "narrower" not in weights
    activations, = texts(found, "B.Q3")
    assert ("narrower than max|x| in conv1, conv2, fc1, fc2 and fc3 (a 3-sigma clip would cut their largest values); "
            "wider in input") in activations


def test_the_integer_run_agrees_or_says_how_many_images_differ(tmp_path, found):
    agree = texts(found, "B.integer")
    assert agree[0] == ("Net W8A8 run integer-only (int32 accumulator) agrees with the float simulation on every one of "
                        "3,000 test images (0 with any output integer different; 3 seeds).")
    assert agree[2] == ("8 other variants with quantized activations (inputs checked only): every one of 120,000 values "
                        "entering a quantized layer was an integer in range.")
    differ = texts(collect(write_ptq(tmp_path, ptq_results(mismatches=7))).findings, "B.integer")
    assert differ[0].startswith("Net W8A8 run integer-only (int32 accumulator) predicts another class than the float "
                                "simulation on 7 of 3,000 test images (7 with any output integer different")


def test_the_sweep_lowest_bits_within_one_point_by_hand(found):
    weights, activations = texts(found, "B.sweep")
    assert ("tensor, max: 8 bits (+0.00 points; 4 bits: -4.00); tensor, MSE-optimal: 8 bits (+0.00 points; 4 bits: "
            "-2.00); channel, max: even the sweep's lowest, 4 bits (-1.00 points): the sweep did not go low enough to "
            "find the limit; channel, MSE-optimal: even the sweep's lowest, 4 bits (+0.00 points)") in weights
    # 0.51 - 0.52 = -0.0100000000000000009: within 1 point, not "none"
    assert "max, 16 images: 8 bits (-1.00 points; 2 bits: -40.00)" in activations


def sweep_rows(deltas: dict[int, float]) -> pd.DataFrame:
    return pd.DataFrame([dict(setup="", part="weights", choice="tensor, max", name=f"Net W{b}", bits=b, delta=d)
                         for b, d in sorted(deltas.items(), reverse=True)])


@pytest.mark.parametrize("deltas, words", [
    ({8: -0.015, 4: -0.05}, "tensor, max: none (8 bits: -1.50 points)"),
    ({8: 0.0, 6: -0.005, 4: -0.03}, "tensor, max: 6 bits (-0.50 points; 4 bits: -3.00)"),
    ({8: -0.02, 6: -0.005, 4: -0.03}, "6 bits (-0.50 points; 4 bits: -3.00), though 8 bits did not stay within"),
    ({8: 0.0, 2: -0.01}, "even the sweep's lowest, 2 bits (-1.00 points): the sweep did not go low enough"),
])
def test_the_sweep_wording_follows_the_deltas(deltas, words):
    assert words in ptq.sweep(sweep_rows(deltas))[0].text


def test_cells_without_result_are_said_first(found):
    first = found[0]
    assert first.question == "B" and first.text.startswith("Part B's figures rest on 3 of 5 cells (training seeds); "
                                                          "without a result: cell ")
    assert "(failed: RuntimeError: CUDA error)" in first.text and "(not submitted)" in first.text
