"""The PTQ kind: post-training quantization of the notebook's LeNet (Part B).

This module, cell.py, config.py, choices.py and result.py are torch-free; run.py is the job."""
from jobs.core.kinds import Kind
from jobs.ptq.cell import SWEPT, PTQCell
from jobs.ptq.result import PTQFindings

KIND = Kind("ptq", PTQCell, PTQFindings, "jobs.ptq.run:run", swept=SWEPT)
