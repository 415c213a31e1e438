#!/bin/bash
# Study hw5, array n2-g2-t2: 3 cell(s). Written by `python -m orchestrator plan`;
# `submit` hands SLURM this text with --array sized to the cells it queues.
#SBATCH --job-name=hw5-n2-g2-t2
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --cpus-per-task=3
#SBATCH --gpus-per-node=2
#SBATCH --time=60
#SBATCH --array=0-2
#SBATCH --output=/scratch/u/runs/hw5/logs/%A_%a_0_log.out
#SBATCH --error=/scratch/u/runs/hw5/logs/%A_%a_0_log.err
#SBATCH --open-mode=append
#SBATCH --signal=USR2@90
#SBATCH --requeue

export SUBMITIT_EXECUTOR=slurm
# When the scheduler started this task, for the result's phases (launch_s): SLURM's word where it
# gives it (23.02 and later, whole seconds), else this script's start.
export JOB_LAUNCHED_AT="${SLURM_JOB_START_TIME:-$(date +%s.%N)}"
# `submit` pickled each task's call under the job's name before sbatch ran; submitit looks for it
# under the job's id. Linked here, so the job runs even if the submit died right after sbatch.
call=/scratch/u/runs/hw5/logs/"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}_submitted.pkl"
[ -e "$call" ] || ln -sfn "${SLURM_JOB_NAME}_${SLURM_ARRAY_TASK_ID}_submitted.pkl" "$call"
# one task per GPU under DDP; each reads its rank from SLURM_PROCID.
# On SIGUSR2 (time limit near, or preemption) submitit checkpoints and requeues the job; it resumes.
srun --unbuffered --output /scratch/u/runs/hw5/logs/%A_%a_%t_log.out --error /scratch/u/runs/hw5/logs/%A_%a_%t_log.err /opt/venv/bin/python -u -m submitit.core._submit /scratch/u/runs/hw5/logs
