"""The code a PTQ run hands in: each function of the notebook that the assignment asks to write (B.Q2,
B.Q4, B.Q5), with its name and signature (jobs.ptq.notebook), then every function of this package it
calls, as source text read when the job runs, so the report prints the code that produced its numbers."""
from __future__ import annotations

import inspect
import textwrap

from jobs.ptq import choices, lenet, notebook, quantize, simulate
from jobs.ptq.result import CodeListing

# The notebook's function -> the function that is it here, then the helpers it calls, in reading order.
NOTEBOOK_CODE = (
    ("quantized_weights", (notebook.quantized_weights,)),
    ("quantize_initial_input", (notebook.quantize_initial_input,)),
    ("quantize_activations", (notebook.quantize_activations, notebook.input_scale)),
    # the forward, then where its weights, multipliers and biases come from (the notebook's functions above,
    # through notebook_plan), then what it calls: readable without the package's other files (TA4 26)
    ("forward", (simulate.SimulatedNet.forward, notebook.notebook_plan, notebook.max_abs, simulate.QuantPlan,
                 simulate.LayerPlan, simulate.SimulatedNet.__init__, simulate._exact_gpu_math, simulate.quantize_input,
                 quantize.quantize, quantize.qmin, quantize.qmax, choices.check_bits, lenet.forward_layers,
                 simulate.SimulatedNet._layer, simulate._channels, simulate.SimulatedNet._check,
                 simulate.IntegerRangeError)),
    ("quantized_bias", (notebook.quantized_bias,)),
)


def listings() -> tuple[CodeListing, ...]:
    """Every function of NOTEBOOK_CODE with its source, as it is in this job's files."""
    return tuple(CodeListing(name, f"{f.__module__}.{f.__qualname__}", textwrap.dedent(inspect.getsource(f)))
                 for name, functions in NOTEBOOK_CODE for f in functions)
