"""The local executor, off-cluster: a detached queue that runs cells one at a time on this machine
(its lock), their jobs through submitit's local executor (forked from a warm start server), and
their processes seen in SLURM's shape (JobState). Imports plan and slurm."""
