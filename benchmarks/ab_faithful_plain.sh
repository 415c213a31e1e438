#!/usr/bin/env bash
# A/B on one GPU without the orchestrator: a faithful cell run by `python -m jobs` and the plain
# homework loop at the same batch, alternating, N times each (the run-to-run noise of the box
# shows in both). From the repository root:  bash benchmarks/ab_faithful_plain.sh OUT [BATCH] [N]
set -u
OUT=$1; BATCH=${2:-32}; N=${3:-3}; DATA=/tmp/ab-data
mkdir -p "$OUT"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import json; from jobs.cell import Cell; print(json.dumps(Cell(engine='single', batch_per_gpu=$BATCH, dataset='synthetic').to_dict()))" > "$OUT/cell.json"
for i in $(seq "$N"); do
  python3 -m jobs --cell "$OUT/cell.json" --out "$OUT/faithful-$i" --data "$DATA" 2>&1 | grep "epoch 2/"
  python3 benchmarks/reference_loop.py --batch "$BATCH" --data "$DATA" --out "$OUT/plain-$i.json" 2>&1 | grep "epoch 2"
done
