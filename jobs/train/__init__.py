"""The training kind: the homework's scaling study and the multi-GPU lab (ResNet-18 on CIFAR-10).

This module and cell.py are torch-free (plan, submit, status and collect import them); run.py is the job."""
from collections.abc import Mapping, Sequence
from typing import Any

from jobs.core.kinds import Kind
from jobs.train.cell import CPU_NOTES, Cell
from jobs.train.result import TrainBody


def script(cells: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The files that hold the loop the cells ran (TA4 5): the dispatcher (run.py), each pipeline's trainer
    (faithful.py wraps the model in DataParallel or DDP, builds SGD and times each epoch; pipeline.py holds its
    DistributedSampler and set_epoch; fast.py is the fast pipeline's whole step) and the LR schedule."""
    pipelines = {c.get("pipeline", Cell.pipeline) for c in cells} or {Cell.pipeline}
    trainers = (("faithful.py", "pipeline.py") if "faithful" in pipelines else ()) + (
        ("fast.py",) if "fast" in pipelines else ())
    return ("run.py", *trainers, "schedule.py")


KIND = Kind("train", Cell, TrainBody, "jobs.train.run:run", cpu_notes=CPU_NOTES, script=script)
