"""How fast the PTQ study's computations are: (a) training the notebook's Net (2 epochs, batch 4)
on a synthetic CIFAR-10 of 50,000 images; (b) run_ptq with the default sweep on its 10,000 test images.

    PYTHONPATH=$PWD python benchmarks/ptq_speed.py --data /tmp/ptq-bench [--device cuda]

The synthetic set is written once under --data (colour jitter 30, so accuracy is not 100 %).
Prints seconds for each part, and the notebook variants' accuracies.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from jobs.ptq import lenet
from jobs.core.atomic import replacing
from jobs.runtime.data import CIFAR10Files, ensure_synthetic
from jobs.ptq.train import TrainSettings, train
from jobs.ptq.experiment import run_ptq
from jobs.ptq.config import PTQConfig, default_sweep
from jobs.ptq.result import PTQOutcome


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder for the synthetic set")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--train-images", type=int, default=50_000)
    parser.add_argument("--test-images", type=int, default=10_000)
    parser.add_argument("--colour-jitter", type=float, default=30.0)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--eval-batch", type=int, default=1000)
    parser.add_argument("--integer-run", default="notebook", choices=("none", "notebook", "all"))
    parser.add_argument("--out", type=Path, help="write the PTQ outcome here as JSON")
    args = parser.parse_args(argv)
    device = torch.device(args.device)

    root = args.data / f"synthetic-{args.train_images}-t{args.test_images}-j{args.colour_jitter:g}"
    ensure_synthetic(root, args.train_images, 0, args.test_images, args.colour_jitter)
    start = time.perf_counter()
    train_set, test_set = CIFAR10Files(str(root), train=True), CIFAR10Files(str(root), train=False)
    images, labels = lenet.resident(train_set, device)
    _sync(device)
    print(f"load: {time.perf_counter() - start:.2f} s ({len(labels)} train, {len(test_set)} test images, {device})")

    nets = [_train(with_bias, images, labels, args.epochs) for with_bias in (False, True)]
    config = PTQConfig(sweep=default_sweep(), eval_batch=args.eval_batch, integer_run=args.integer_run)
    _sync(device)
    start = time.perf_counter()
    outcome = run_ptq(nets[0], nets[1], (images, labels), test_set, config, device)
    _sync(device)
    _report(outcome, time.perf_counter() - start)
    if args.out:
        with replacing(args.out) as tmp:
            tmp.write_text(json.dumps(outcome.to_dict()))


def _train(with_bias: bool, images: torch.Tensor, labels: torch.Tensor, epochs: int) -> lenet.Net:
    net = lenet.build(with_bias, seed=0).to(images.device)
    report = train(net, images, labels, TrainSettings(epochs=epochs, seed=0))
    print(f"(a) train {type(net).__name__}: {report.train_s:.2f} s for {report.steps} steps "
          f"({1e3 * report.train_s / report.steps:.3f} ms/step, CUDA graph: {report.cuda_graph}"
          f"{', ' + report.graph_error if report.graph_error else ''}); "
          f"epoch losses {', '.join(f'{x:.3f}' for x in report.epoch_losses)}")
    return net


def _report(outcome: PTQOutcome, total_s: float) -> None:
    notebook = [v for v in outcome.variants if v.role == "notebook"]
    sweep = [v for v in outcome.variants if v.role == "sweep"]
    integer = [v for v in outcome.variants if v.integer_agreement]
    print(f"(b) run_ptq: {total_s:.2f} s for {len(outcome.variants)} variants on {notebook[0].images} test images: "
          f"profile {outcome.profile_s:.2f} s, notebook variants {sum(v.eval_s for v in notebook):.2f} s, "
          f"sweep of {len(sweep)} {sum(v.eval_s for v in sweep):.2f} s, integer-only runs of {len(integer)} "
          f"variants {sum(v.integer_s for v in outcome.variants):.2f} s "
          f"({sum(v.integer_agreement.prediction_mismatches for v in integer)} prediction and "
          f"{sum(v.integer_agreement.logit_mismatches for v in integer)} logit mismatches in all)")
    for v in notebook:
        agreement = v.integer_agreement
        extra = f", integer-only mismatches {agreement.prediction_mismatches}/{agreement.images}" if agreement else ""
        print(f"    {v.name:32s} {100 * v.accuracy:6.2f} %  ({100 * v.delta_accuracy:+.2f}){extra}")


if __name__ == "__main__":
    main()
