"""The training kind: the homework's scaling study and the multi-GPU lab (ResNet-18 on CIFAR-10).

This module and cell.py are torch-free (plan, submit, status and collect import them); run.py is the job."""
from jobs.core.kinds import Kind
from jobs.train.cell import CPU_NOTES, Cell
from jobs.train.result import TrainBody

KIND = Kind("train", Cell, TrainBody, "jobs.train.run:run", cpu_notes=CPU_NOTES)
