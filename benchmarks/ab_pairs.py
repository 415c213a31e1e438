"""The faithful pipeline against the plain homework loop, interleaved: for each configuration,
a faithful cell run by `python -m jobs` and benchmarks/reference_loop.py at the same engine,
GPUs and batch, one after the other, pair after pair (round robin over the configurations, so
a slow spell of the box falls on every configuration alike). The order inside a pair flips
each round (A B, then B A) so neither side always runs on a box just warmed by the other.

    python benchmarks/ab_pairs.py --configs ddp:4:128,ddp:4:512 --pairs 6 --budget-s 500 \
        --data /tmp/ab-data --out OUT

A configuration is engine:gpus:batch_per_gpu (engine single, dp or ddp). No new pair starts
after --budget-s seconds. Each run's second epoch lands in OUT/pairs.jsonl as it ends (a cut
run keeps what it measured): the whole epoch and the epoch less the time blocked on the
loader (host clock on both sides: train_host_s = epoch_s - data_wait_s). The ratios and their
verdicts: benchmarks/ab_summary.py OUT/pairs.jsonl.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from jobs.train.cell import Cell

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Config:
    engine: str
    gpus: int
    batch: int
    images: int = 50_000

    @classmethod
    def parse(cls, text: str, images: int) -> Config:
        engine, gpus, batch = text.split(":")
        return cls(engine, int(gpus), int(batch), images)

    @property
    def name(self) -> str:
        return f"{self.engine}:{self.gpus}:{self.batch}"

    def cell(self) -> Cell:
        return Cell(engine=self.engine, gpus_per_node=self.gpus, batch_per_gpu=self.batch,
                    dataset="synthetic", train_images=self.images)


def faithful(config: Config, data: Path, out: Path) -> dict:
    out.mkdir(parents=True)
    cell = config.cell()
    (out / "cell.json").write_text(json.dumps(cell.to_dict()))
    subprocess.run([sys.executable, "-m", "jobs", "--cell", str(out / "cell.json"), "--out", str(out),
                    "--data", str(data)], check=True, timeout=300)
    result = json.loads((out / f"{cell.cell_id}.json").read_text())
    epoch = result["epochs"][result["timed"]["epoch"] - 1]
    return {"epoch_s": epoch["epoch_s"], "data_wait_s": epoch["data_wait_s"]}


def plain(config: Config, data: Path, out: Path) -> dict:
    script = [str(HERE / "reference_loop.py"), "--batch", str(config.batch), "--data", str(data),
              "--images", str(config.images), "--epochs", "2", "--out", str(out)]
    if config.engine == "ddp":
        command = ["torchrun", "--standalone", f"--nproc_per_node={config.gpus}", *script]
    else:
        command = [sys.executable, *script, *(["--dp", str(config.gpus)] if config.engine == "dp" else [])]
    subprocess.run(command, check=True, timeout=300)
    epoch = json.loads(out.read_text())["epochs"][1]
    return {"epoch_s": epoch["epoch_s"], "data_wait_s": epoch["data_wait_s"]}


def measure(side: str, config: Config, pair: int, data: Path, out: Path) -> dict:
    run = out / f"{config.name.replace(':', '-')}-{side}-{pair}"
    started = time.time()
    figures = faithful(config, data, run) if side == "faithful" else plain(config, data, run.with_suffix(".json"))
    return {"config": config.name, "side": side, "pair": pair, "started": started, **figures,
            "train_host_s": figures["epoch_s"] - figures["data_wait_s"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", required=True, help="engine:gpus:batch, comma-separated")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--budget-s", type=float, default=500.0, help="no new pair starts after this")
    parser.add_argument("--data", type=Path, default=Path("/tmp/ab-data"))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--images", type=int, default=50_000, help="synthetic CIFAR-10 training images")
    args = parser.parse_args(argv)
    configs = [Config.parse(text, args.images) for text in args.configs.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    with (args.out / "pairs.jsonl").open("a") as log:
        for pair in range(args.pairs):
            for config in configs:
                if time.monotonic() - began > args.budget_s:
                    print(f"budget of {args.budget_s:.0f} s spent: stopped before pair {pair} of {config.name}")
                    return 0
                sides = ("faithful", "plain") if pair % 2 == 0 else ("plain", "faithful")
                for side in sides:
                    row = measure(side, config, pair, args.data, args.out)
                    log.write(json.dumps(row) + "\n")
                    log.flush()
                    print(f"{config.name} pair {pair} {side}: epoch {row['epoch_s']:.3f} s, "
                          f"train {row['train_host_s']:.3f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
