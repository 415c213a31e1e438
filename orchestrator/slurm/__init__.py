"""SLURM: the sbatch text, squeue/sacct/scancel (SlurmClient, JobState), job arrays through
submitit (CellRun, the call every job runs) and an interrupted submit's jobs found by their token.
Imports plan only."""
