"""Plan, submit, watch and collect data-parallel scaling studies on SLURM (or this machine)."""
