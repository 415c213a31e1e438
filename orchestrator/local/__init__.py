"""The local executor, off-cluster: a detached queue that places cells on this machine's GPUs
(side by side on disjoint GPUs, one at a time without GPUs or with --exclusive: placement.py) under
per-GPU locks, their jobs through submitit's local executor (forked from a warm start server), and
their processes seen in SLURM's shape (JobState). Imports plan and slurm."""
