"""The training job: one cell, runnable with no SLURM (`python -m jobs --cell FILE --out DIR`)."""
