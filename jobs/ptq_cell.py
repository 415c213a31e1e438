"""Moved to jobs.ptq.cell. Jobs queued before the move hold pickled calls that name
jobs.ptq_cell.PTQCell: this alias lets them load. Nothing in the project imports it."""
from jobs.ptq.cell import PTQCell

__all__ = ["PTQCell"]
