"""A tiny training loop for the `command` kind: no torch, no numpy, seconds on a CPU.

It fits y = 3x with SGD on one weight, each of WORLD_SIZE processes taking 1/WORLD_SIZE of the
epoch's steps (each step also sleeps --step-s, as a GPU's step would take time), and appends one
JSON line per epoch to the file $ORCHESTRATOR_METRICS names (rank 0's are the cell's metrics).
--mode fail / silent / garbage: exit 1, write nothing, or write a line that is not JSON.
"""
import argparse
import json
import math
import os
import random
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--batch", type=int, default=8)  # per process
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--images", type=int, default=256)
parser.add_argument("--step-s", type=float, default=0.002)
parser.add_argument("--seed", type=int, default=0)  # e.g. "{repeat}": each repeat its own draws
parser.add_argument("--mode", choices=["ok", "fail", "silent", "garbage"], default="ok")
args = parser.parse_args()

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
metrics = os.environ["ORCHESTRATOR_METRICS"]
if args.mode == "fail":
    print("tiny: failing on purpose (--mode fail)", file=sys.stderr)
    sys.exit(1)
if args.mode == "garbage":
    with open(metrics, "a") as f:
        f.write('{"epoch": 1, "epoch_s": 0.5}\nthis is not json\n')
    sys.exit(0)

rng = random.Random(args.seed * 1000 + rank)
weight, steps = 0.0, math.ceil(args.images / (args.batch * world))
for epoch in range(1, args.epochs + 1):
    start, loss_sum = time.perf_counter(), 0.0
    for _ in range(steps):
        xs = [rng.uniform(-1, 1) for _ in range(args.batch)]
        grad = sum(2 * (weight * x - 3 * x) * x for x in xs) / args.batch
        loss_sum += sum((weight * x - 3 * x) ** 2 for x in xs) / args.batch
        weight -= args.lr * grad
        time.sleep(args.step_s)
    line = {"epoch": epoch, "epoch_s": time.perf_counter() - start, "loss": loss_sum / steps, "weight": weight}
    if args.mode == "ok":
        with open(metrics, "a") as f:
            f.write(json.dumps(line) + "\n")
