"""Does a cell run slower beside others? Alone against packed, interleaved, on a box of 4 GPUs
(issue 46): the local executor packs cells on disjoint GPUs, and a class of cell slowed beyond 5 %
must run alone (orchestrator/local/placement.py, RUN_ALONE).

    python benchmarks/interference.py --out OUT [--pairs 3] [--budget-s 360] [--images 10000] [--batch B ...]

Classes: 1-GPU cells at batch 32, 512 and 2048, and a 2-GPU DDP cell at batch 128 (ResNet-18,
synthetic CIFAR-10 in the on-disk format, the faithful pipeline with its loader workers). Each
pair measures the class alone (the only job on the box, every core: `submit --exclusive`) and
packed (the box full of cells of its class, started together: four 1-GPU cells, or two DDP cells
on GPUs 0-1 and 2-3, each on its GPUs' share of the cores, as the executor places them); the
figure is the measured cell's timed (2nd) epoch, loader included, on GPU 0. The order inside a
pair flips each round and the classes take turns, so a slow spell falls on both sides alike. No
new pair starts after --budget-s. Each run lands in OUT/runs.jsonl as it ends; the table (class,
pairs, alone and packed medians, ratio packed / alone, its interval, the verdict of
collect/verdict.py at 5 %) is printed and written to OUT/interference.json, with the RUN_ALONE
entries the measurement asks for.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from collect.verdict import verdict
from jobs.train.cell import Cell
from orchestrator.local.placement import cores_for



@dataclass(frozen=True)
class Class:
    engine: str
    gpus: int
    batch: int

    @property
    def name(self) -> str:
        return f"{self.gpus} GPU{'s' * (self.gpus > 1)} {self.engine} batch {self.batch}"

    def cell(self, images: int, seed: int, model: str) -> Cell:
        return Cell(engine=self.engine, gpus_per_node=self.gpus, batch_per_gpu=self.batch, dataset="synthetic",
                    train_images=images, epochs=2, timed_epoch=2, seed=seed, model=model)

    def blocks(self, gpus: tuple[int, ...]) -> list[tuple[int, ...]]:
        """The GPU sets of a full box of `gpus`, as placement.place fills it (aligned blocks)."""
        return [gpus[i:i + self.gpus] for i in range(0, len(gpus) - self.gpus + 1, self.gpus)]


CLASSES = (Class("single", 1, 32), Class("single", 1, 512), Class("single", 1, 2048), Class("ddp", 2, 128))


@dataclass(frozen=True)
class Setting:
    images: int  # synthetic CIFAR-10 training images per cell
    model: str
    gpus: tuple[int, ...]  # the box's GPUs
    data: Path
    out: Path


def start(klass: Class, setting: Setting, seed: int, gpus: tuple[int, ...], cores: tuple[int, ...],
          out: Path) -> tuple[subprocess.Popen, Path]:
    out.mkdir(parents=True)
    cell = klass.cell(setting.images, seed, setting.model)
    (out / "cell.json").write_text(json.dumps(cell.to_dict()))
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=",".join(map(str, gpus)))
    proc = subprocess.Popen([sys.executable, "-m", "jobs", "--cell", str(out / "cell.json"), "--out", str(out),
                             "--data", str(setting.data)], env=env, preexec_fn=lambda: os.sched_setaffinity(0, cores))
    return proc, out / f"{cell.cell_id}.json"


def timed_epoch_s(path: Path) -> float:
    result = json.loads(path.read_text())
    if result["status"] != "ok":
        raise RuntimeError(f"{path}: {result['status']}: {result.get('error')}")
    return float(result["epochs"][result["timed"]["epoch"] - 1]["epoch_s"])


def measure(klass: Class, side: str, pair: int, setting: Setting) -> float:
    """The timed epoch of the cell on GPU 0, alone or with the box full of its class (pair -1: a warm-up)."""
    every = tuple(sorted(os.sched_getaffinity(0)))
    blocks = klass.blocks(setting.gpus) if side == "packed" else [klass.blocks(setting.gpus)[0]]
    runs = [start(klass, setting, 1000 * (pair + 1) + i + 1, gpus,
                  cores_for(gpus, setting.gpus, every) if side == "packed" else every,
                  setting.out / f"{klass.name.replace(' ', '-')}-{side}-{pair}-{i}") for i, gpus in enumerate(blocks)]
    for proc, _ in runs:
        if proc.wait(timeout=600) != 0:
            raise RuntimeError(f"{klass.name} {side} pair {pair}: a job exited {proc.returncode}")
    return timed_epoch_s(runs[0][1])


def table(runs: list[dict]) -> list[dict]:
    rows = []
    for klass in CLASSES:
        alone = [r["epoch_s"] for r in runs if r["class"] == klass.name and r["side"] == "alone"]
        packed = [r["epoch_s"] for r in runs if r["class"] == klass.name and r["side"] == "packed"]
        if not alone or not packed:
            continue
        v = verdict(alone, packed)
        word = {1: "slower", -1: "faster", 0: v.outcome}[v.direction]
        if v.outcome == "inconclusive" and v.repeats_needed:
            word += f" (about {v.repeats_needed} pairs would settle it)"
        rows.append(dict(cls=klass.name, gpus=klass.gpus, batch=klass.batch, pairs=min(len(alone), len(packed)),
                         alone_median_s=statistics.median(alone), packed_median_s=statistics.median(packed),
                         ratio=v.ratio, low=v.low, high=v.high, verdict=word, run_alone=v.direction == 1))
    return rows


def show(rows: list[dict]) -> None:
    print(f"{'class':<28} {'pairs':>5} {'alone (s)':>10} {'packed (s)':>11} {'ratio':>6} {'interval':>13}  verdict")
    for r in rows:
        print(f"{r['cls']:<28} {r['pairs']:>5} {r['alone_median_s']:>10.3f} {r['packed_median_s']:>11.3f} "
              f"{r['ratio']:>6.3f} {r['low']:>6.3f}-{r['high']:<6.3f}  {r['verdict']}")
    alone = [f"CellClass(gpus={r['gpus']}, batch_per_gpu={r['batch']})" for r in rows if r["run_alone"]]
    print(f"RUN_ALONE = ({', '.join(alone)}{',' if len(alone) == 1 else ''})  # orchestrator/local/placement.py")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--budget-s", type=float, default=360.0, help="no new pair starts after this")
    parser.add_argument("--images", type=int, default=10_000, help="synthetic CIFAR-10 training images per cell")
    parser.add_argument("--data", type=Path, help="data dir (default: OUT/data)")
    parser.add_argument("--model", default="resnet18", help="tiny: a smoke test on a CPU")
    parser.add_argument("--batch", type=int, action="append", choices=sorted({k.batch for k in CLASSES}),
                        help="only the classes of this batch per GPU (repeat it for several); default: all")
    args = parser.parse_args(argv)
    classes = [k for k in CLASSES if not args.batch or k.batch in args.batch]
    import torch

    box = tuple(range(torch.cuda.device_count())) or (0, 1, 2, 3)  # a CPU smoke test: 4 "GPUs"
    setting = Setting(args.images, args.model, box, args.data or args.out / "data", args.out)
    args.out.mkdir(parents=True, exist_ok=True)
    # a class needs two blocks of its GPUs on the box to be packed at all
    classes = [k for k in classes if len(k.blocks(box)) >= 2]
    print(f"box of {len(box)} GPUs: packed = {', '.join(f'{len(k.blocks(box))} x {k.name}' for k in classes)}")
    runs: list[dict] = []
    began = time.monotonic()
    measure(classes[0], "alone", -1, setting)  # writes the data set, warms the box
    turns = [(pair, klass) for pair in range(args.pairs) for klass in classes]
    with (args.out / "runs.jsonl").open("a") as log:
        for pair, klass in turns:
            if time.monotonic() - began > args.budget_s:
                print(f"budget of {args.budget_s:.0f} s spent: stopped before pair {pair} of {klass.name}")
                break
            for side in ("alone", "packed") if pair % 2 == 0 else ("packed", "alone"):
                row = {"class": klass.name, "side": side, "pair": pair, "epoch_s": measure(klass, side, pair, setting)}
                runs.append(row)
                log.write(json.dumps(row) + "\n")
                log.flush()
                print(f"{klass.name} pair {pair} {side}: timed epoch {row['epoch_s']:.3f} s", flush=True)
    rows = table(runs)
    show(rows)
    (args.out / "interference.json").write_text(json.dumps({"images": args.images, "gpus": len(box), "runs": runs, "table": rows},
                                                           indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
