"""Which GPUs a job drives and how it sets cuDNN up (no GPU needed to decide)."""
import torch

from jobs.train.cell import Cell
from jobs.train.run import cudnn_benchmark, cudnn_engines_timed, physical_gpus


def test_cudnn_benchmarking_is_off_under_dataparallel_only():
    # DataParallel's per-step threads would re-time every convolution each step
    assert cudnn_benchmark(Cell(engine="dp", batch_per_gpu=128, gpus_per_node=2)) is False
    assert cudnn_benchmark(Cell(engine="ddp", batch_per_gpu=128, gpus_per_node=2)) is True
    assert cudnn_benchmark(Cell(engine="single", batch_per_gpu=128)) is True


def test_the_fast_pipeline_times_every_cudnn_engine_the_faithful_one_keeps_the_default():
    assert cudnn_engines_timed(Cell(engine="single", batch_per_gpu=512, pipeline="fast", precision="bf16")) == 0
    assert cudnn_engines_timed(Cell(engine="single", batch_per_gpu=128)) == 10


def test_gpu_monitor_watches_every_gpu_dataparallel_drives_by_physical_number(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert physical_gpus(torch.device("cuda", 0), Cell(engine="dp", batch_per_gpu=128, gpus_per_node=2)) == [2, 3]
    assert physical_gpus(torch.device("cuda", 1), Cell(engine="ddp", batch_per_gpu=128, gpus_per_node=2)) == [3]
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert physical_gpus(torch.device("cuda", 1), Cell(engine="ddp", batch_per_gpu=128, gpus_per_node=2)) == [1]


def test_gpus_a_node_must_show_one_per_rank_or_all_that_dataparallel_drives():
    from jobs.runtime.launch import detect
    from jobs.train.run import gpus_needed_here

    two_ranks = detect({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "LOCAL_WORLD_SIZE": "2"})
    assert gpus_needed_here(two_ranks, Cell(engine="ddp", batch_per_gpu=8, gpus_per_node=2)) == 2
    # two nodes of 2 GPUs run on one machine by the local executor: 4 ranks here, 4 GPUs
    four_here = detect({"SUBMITIT_LOCAL_GLOBALID": "0", "SUBMITIT_LOCAL_NTASKS": "4"})
    assert gpus_needed_here(four_here, Cell(engine="ddp", batch_per_gpu=8, nodes=2, gpus_per_node=2)) == 4
    assert gpus_needed_here(detect({}), Cell(engine="dp", batch_per_gpu=8, gpus_per_node=4)) == 4


def test_intra_op_threads_leave_the_loader_workers_their_cores():
    from jobs.runtime.launch import detect
    from jobs.train.run import intra_op_threads

    faithful = Cell(engine="ddp", batch_per_gpu=128, gpus_per_node=4)  # 2 loader workers per rank
    four_ranks = detect({"RANK": "0", "WORLD_SIZE": "4", "MASTER_ADDR": "h", "LOCAL_WORLD_SIZE": "4"})
    assert intra_op_threads(faithful, four_ranks, "8", 64) == 6, "SLURM's CPUs per task win"
    assert intra_op_threads(faithful, four_ranks, "", 16) == 2, "off SLURM: 16 CPUs / 4 ranks - 2 workers"
    fast = Cell(engine="single", batch_per_gpu=512, pipeline="fast", precision="bf16")
    assert intra_op_threads(fast, detect({}), "", 16) == 16
    assert intra_op_threads(Cell(engine="single", batch_per_gpu=32), detect({}), "", 2) == 1
