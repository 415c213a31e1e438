"""Watching: each cell's state from the registry, the result files (kept in the status cache) and
one look at the jobs (Monitor), why a job ended, and what status shows at any size. Imports plan,
slurm and local."""
