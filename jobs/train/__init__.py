"""The training kind: the homework's scaling study and the multi-GPU lab (ResNet-18 on CIFAR-10).

This module and cell.py are torch-free (plan, submit, status and collect import them); run.py is the job."""
from collections.abc import Mapping, Sequence
from typing import Any

from jobs.core.kinds import Kind
from jobs.train.cell import CPU_NOTES, Cell
from jobs.train.result import TrainBody


def script(cells: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The modules besides run.py that hold what the cells ran (TA4 5): the model (TA6 16), each pipeline's trainer
    (faithful wraps the model in DataParallel or DDP, builds SGD and times each epoch; pipeline holds its
    DistributedSampler and set_epoch; fast is the fast pipeline's whole step), the LR schedule, and the
    measurements the answers use (TA5 16): the all-reduce and the gradient bytes (comm), the BN spread, sample
    order and bytes DDP sends (evidence), and where each rank sits (launch)."""
    pipelines = {c.get("pipeline", Cell.pipeline) for c in cells} or {Cell.pipeline}
    trainers = (("faithful", "pipeline") if "faithful" in pipelines else ()) + (("fast",) if "fast" in pipelines else ())
    train = ("model", *trainers, "schedule", "evidence")
    return (*(f"jobs.train.{m}" for m in train), "jobs.runtime.comm", "jobs.runtime.launch")


KIND = Kind("train", Cell, TrainBody, "jobs.train.run:run", cpu_notes=CPU_NOTES, script=script)
