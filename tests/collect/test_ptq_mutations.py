"""A PTQ result file edited by hand or cut up: collect never shows a traceback or a wrong number.
Every mutation below is a value no job writes (a wrong type, a NaN string where a fraction goes,
a bool for a number, a huge number, a list for a string): collect refuses the file as it refuses
a bad training result, one `error: result file <name>` line and exit 2."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from jobs.ptq.result import PTQFindings
from orchestrator.cli import main
from tests.collect.dirs import write_ptq
from tests.factories import ptq_cell, ptq_result

DELETE = object()  # the key is removed
V0, V1, V2 = ("ptq", "outcome", "variants", 0), ("ptq", "outcome", "variants", 1), ("ptq", "outcome", "variants", 2)
W0, A1, T0 = ("ptq", "outcome", "weight_stats", 0), ("ptq", "outcome", "activation_stats", 1), ("ptq", "training", 0)
MUTATIONS = [
    # the figures the tables show: a fraction in 0..1, a delta in -1..1, counts
    (V0 + ("accuracy",), "NaN"), (V0 + ("accuracy",), True), (V0 + ("accuracy",), 1e308), (V0 + ("accuracy",), "x"),
    (V0 + ("accuracy",), -0.5), (V0 + ("accuracy",), None), (V0 + ("accuracy",), [0.5]), (V0 + ("accuracy",), DELETE),
    (V1 + ("delta_accuracy",), "Infinity"), (V1 + ("delta_accuracy",), 3.0), (V1 + ("delta_accuracy",), False),
    (V0 + ("loss",), "low"), (V0 + ("loss",), True), (V0 + ("images",), "1000"), (V0 + ("images",), 1e308),
    (V0 + ("images",), 10**30), (V0 + ("images",), -1), (V0 + ("images",), True),
    (V2 + ("integer_agreement", "images"), "1000"), (V2 + ("integer_agreement", "prediction_mismatches"), -1),
    (V2 + ("integer_agreement", "prediction_mismatches"), 1.5), (V2 + ("integer_agreement", "logit_mismatches"), "NaN"),
    (V2 + ("integer_agreement", "accumulator"), 32), (V2 + ("integer_agreement",), "yes"),
    (V2 + ("integer_checks",), "x"), (V2 + ("integer_checks", 0), 5), (V2 + ("integer_checks", 0, "values"), True),
    (V2 + ("integer_checks", 0, "non_integer"), "0"), (V2 + ("integer_checks", 0, "name"), ["conv1"]),
    # names, roles, specs: what the rows are keyed and labelled by
    (V0 + ("name",), ["Net float"]), (V0 + ("name",), 7), (V0 + ("role",), "other"), (V0 + ("model",), 7),
    (V0 + ("baseline",), None), (V0 + ("dtype",), 32), (V0 + ("input_scale",), "big"),
    (V1 + ("spec",), "x"), (V1 + ("spec",), [8]), (V1 + ("spec", "weight_bits"), "8"),
    (V1 + ("spec", "weight_bits"), True), (V1 + ("spec", "weight_bits"), 1e308), (V1 + ("spec", "granularity"), ["tensor"]),
    (V1 + ("spec", "calibration_images"), "400"), (V1 + ("spec", "percentile"), "NaN"),
    (V2 + ("scales",), {}), (V2 + ("scales", 0, "weight_scale"), 5), (V2 + ("scales", 0, "weight_scale"), ["a"]),
    (V2 + ("scales", 0, "name"), 3), (V2 + ("scales", 0, "input_scale"), [1]), (V2 + ("scales", 0, "bias_scale"), "x"),
    (V0 + ("extra",), 1), (V0 + ("eval_s",), "slow"),
    # the outcome's other parts
    (("ptq", "outcome", "variants"), {}), (("ptq", "outcome", "variants"), "x"), (("ptq", "outcome", "variants", 0), 5),
    (("ptq", "outcome", "config"), []), (("ptq", "outcome", "config", "notebook"), 5),
    (("ptq", "outcome", "config", "notebook", "calibration_images"), "400"),
    (("ptq", "outcome", "config", "sweep"), "x"), (("ptq", "outcome", "config", "integer_run"), ["all"]),
    (W0 + ("stats", "histogram", "counts"), ["a"]), (W0 + ("stats", "histogram", "edges"), "x"),
    (W0 + ("stats", "min"), "abc"), (W0 + ("stats", "values"), "100"), (W0 + ("stats", "name"), None),
    (W0 + ("bits",), "8"), (W0 + ("kl_divergence",), [0.1]), (A1 + ("range",), [1]), (A1 + ("bits",), True),
    (("ptq", "outcome", "activation_stats"), 5), (("ptq", "outcome", "calibration_images"), "400"),
    (("ptq", "outcome", "total_s"), "NaN"), (("ptq", "outcome"), None), (("ptq", "outcome"), "x"),
    # the trained networks
    (("ptq", "training"), "x"), (("ptq", "training"), {}), (T0, 5), (T0 + ("model",), ["Net"]),
    (T0 + ("model",), "LeNet"), (T0 + ("train_s",), "fast"), (T0 + ("train_s",), True),
    (T0 + ("epoch_losses",), 2.0), (T0 + ("epoch_losses",), ["x"]), (T0 + ("reused",), "yes"), (T0 + ("reused",), 1),
    (T0 + ("cuda_graph",), "no"), (T0 + ("training_id",), 5),
    (("ptq",), []), (("ptq",), "x"), (("ptq",), {"training": []}), (("ptq",), None),
    # the envelope beside it
    (("env", "hostnames"), 5), (("env", "hostnames"), [5]), (("env", "hostnames"), "node1"),
    (("env", "gpu_model"), ["H200"]), (("env", "gpu_model"), ["x" * 100] * 10_000),
    (V0 + ("name",), ["x"] * 10_000), (("env", "started_at"), {"t": 1}), (("env", "nodes"), 3),
]


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A PTQ results dir whose files all read, and the path of one ok result in it."""
    results = write_ptq(tmp_path_factory.mktemp("good"))
    path = next(p for p in sorted(results.glob("*.json")) if '"status": "ok"' in p.read_text()
                and p.name != "plan.json")
    return results, path.name


def mutated(data, keys, value):
    data = json.loads(json.dumps(data))
    *parents, last = keys
    target = data
    for key in parents:
        target = target[key]
    if value is DELETE:
        del target[last]
    else:
        target[last] = value
    return data


def test_the_good_dir_collects(good, tmp_path, capsys):
    assert main(["collect", "--results", str(good[0]), "--out", str(tmp_path)]) == 0


@pytest.mark.parametrize("keys, value", MUTATIONS, ids=[f"{'.'.join(map(str, k))}={v!r}"[:80] for k, v in MUTATIONS])
def test_a_mutated_ptq_result_is_an_error_naming_its_file(good, tmp_path, capsys, keys, value):
    source, name = good
    results = shutil.copytree(source, tmp_path / "results")
    path = results / name
    path.write_text(json.dumps(mutated(json.loads(path.read_text()), keys, value)))
    capsys.readouterr()
    code = main(["collect", "--results", str(results)])  # a traceback fails the test here
    err = capsys.readouterr().err
    assert code == 2, f"accepted: {'.'.join(map(str, keys))} = {value!r}"
    assert err.startswith("error: result file ") and name in err and len(err.strip().splitlines()) == 1
    assert len(err) < 600, err[:200]


@pytest.mark.parametrize("bad, said", [("a", "got 'a'"), (-1, "got -1"), (2**60, "got 1152921504606846976")])
def test_a_bad_count_among_a_histograms_is_named_by_its_place(bad, said):
    """A histogram's counts are checked in one pass; the bad one is still named by its index."""
    data = ptq_result(ptq_cell(0)).body.to_dict()
    data["outcome"]["weight_stats"][0]["stats"]["histogram"]["counts"][2] = bad
    with pytest.raises(ValueError, match=re.escape("ptq.outcome.weight_stats[0].stats.histogram.counts[2] must be a "
                                                   f"whole number in 0 .. 2**53, {said}")):
        PTQFindings.from_dict(data)
