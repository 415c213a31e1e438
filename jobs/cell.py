"""Moved to jobs.train.cell. Jobs queued before the move hold pickled calls that name
jobs.cell.Cell: this alias lets them load. Nothing in the project imports it."""
from jobs.train.cell import Cell

__all__ = ["Cell"]
