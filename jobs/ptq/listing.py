"""The code a PTQ run hands in: each function of the notebook that the assignment asks to write (B.Q2,
B.Q4, B.Q5), as the source text of the functions here that do its work, read when the job runs, so
the report prints the code that produced its numbers."""
from __future__ import annotations

import inspect
import textwrap

from jobs.ptq import lenet, profile, quantize, simulate
from jobs.ptq.result import CodeListing

# The notebook's function -> the functions that do its work here, in reading order.
NOTEBOOK_CODE = (
    ("quantized_weights", (quantize.quantize_weight, quantize.row_ranges, quantize.scale_for, quantize.quantize)),
    ("quantize_initial_input", (simulate.quantize_input,)),
    ("quantize_activations", (profile.activation_ranges, simulate.plan)),
    ("forward", (simulate.SimulatedNet.integers, lenet.forward_layers, simulate.SimulatedNet._layer)),
    ("quantized_bias", (simulate.quantize_bias,)),
)


def listings() -> tuple[CodeListing, ...]:
    """Every function of NOTEBOOK_CODE with its source, as it is in this job's files."""
    return tuple(CodeListing(name, f"{f.__module__}.{f.__qualname__}", textwrap.dedent(inspect.getsource(f)))
                 for name, functions in NOTEBOOK_CODE for f in functions)
