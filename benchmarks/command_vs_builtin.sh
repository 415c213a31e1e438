#!/usr/bin/env bash
# The ResNet-18 script (examples/resnet18, kind command) against the built-in kind on 1 GPU, each
# through plan + submit (local executor, one cell at a time), 3 repeats at batch 128; then the
# verdict table (benchmarks/command_vs_builtin.py). From the repository root, on a 1-GPU box:
#   bash benchmarks/command_vs_builtin.sh OUT
# About 6 runs x 2 epochs of 50,000 images: 4-6 minutes on an H100.
set -uo pipefail
OUT=${1:-runs/command-vs-builtin}
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi -L
python3 -m orchestrator plan --study benchmarks/command-vs-builtin-train.toml --results "$OUT/builtin"
timeout 400 python3 -m orchestrator submit --study benchmarks/command-vs-builtin-train.toml --results "$OUT/builtin" \
  --executor local --wait --interval 2
DATA=$(ls -d "$PWD"/data/synthetic-cifar10-50000-s0* | head -1)  # the set the built-in side wrote
sed "s|^data = \"DATA\"|data = \"$DATA\"|" benchmarks/command-vs-builtin-command.toml > benchmarks/.cvb-command.toml
python3 -m orchestrator plan --study benchmarks/.cvb-command.toml --results "$OUT/script"
timeout 400 python3 -m orchestrator submit --study benchmarks/.cvb-command.toml --results "$OUT/script" \
  --executor local --wait --interval 2
rm -f benchmarks/.cvb-command.toml
python3 benchmarks/command_vs_builtin.py "$OUT/builtin" "$OUT/script"
