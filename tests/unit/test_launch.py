"""jobs.runtime.launch: where this process sits, read from torchrun, srun, submitit's local executor or nothing."""
from __future__ import annotations

import pytest

from jobs.runtime.launch import PORT_BASE, PORT_SPAN, detect, first_host, port_for_job


@pytest.mark.parametrize("nodelist, host", [
    ("n1", "n1"),
    ("n[1-2]", "n1"),
    ("gr[001-003,007],ga001", "gr001"),
    ("gr[007,001-003]", "gr007"),  # the first listed, as SLURM lists them
    ("cs-1", "cs-1"),
    ("cs-1,cs-2", "cs-1"),
    (" n3 ", "n3"),
])
def test_first_host(nodelist, host):
    assert first_host(nodelist) == host


def test_port_for_job_worked_by_hand():
    assert port_for_job("17") == 20_017
    assert port_for_job("123453") == 20_000 + 123453 % 12_000  # 23453
    assert port_for_job("123453") == 23_453


@pytest.mark.parametrize("job_id", ["0", "1", "4242", "11999", "12000", "987654321", "12345_7"])
def test_port_for_job_stays_below_the_ephemeral_range(job_id):
    assert PORT_BASE <= port_for_job(job_id) < PORT_BASE + PORT_SPAN
    assert port_for_job(job_id) < 32_768


@pytest.mark.parametrize("job_id", [41_999, 11_999, 5_000_000])
def test_consecutive_job_ids_get_different_ports(job_id):
    assert port_for_job(str(job_id)) != port_for_job(str(job_id + 1))


def test_torchrun_environment():
    env = {"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1", "MASTER_ADDR": "n7", "MASTER_PORT": "29400",
           "SLURM_JOB_ID": "99"}
    place = detect(env)
    assert (place.launcher, place.rank, place.world_size, place.local_rank) == ("torchrun", 3, 8, 1)
    assert (place.master_addr, place.master_port, place.job_id) == ("n7", 29400, "99")


def test_torchrun_environment_defaults_the_port():
    place = detect({"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "localhost"})
    assert (place.master_port, place.local_rank) == (29500, 0)


def test_srun_environment():
    env = {"SLURM_PROCID": "3", "SLURM_STEP_ID": "0", "SLURM_JOB_ID": "4242", "SLURM_LOCALID": "1",
           "SLURM_STEP_NUM_TASKS": "4", "SLURM_NTASKS": "99", "SLURM_STEP_NODELIST": "gr[001-002]",
           "SLURM_JOB_NODELIST": "other[1-9]", "SLURM_ARRAY_TASK_ID": "2", "SLURMD_NODENAME": "gr002"}
    place = detect(env)
    assert (place.launcher, place.rank, place.world_size, place.local_rank) == ("slurm", 3, 4, 1)
    assert place.master_addr == "gr001"  # the step's first node, not the job's
    assert place.master_port == 20_000 + 4242
    assert (place.job_id, place.array_task_id, place.node_name) == ("4242", "2", "gr002")


def test_srun_environment_without_step_task_count_uses_ntasks():
    env = {"SLURM_PROCID": "0", "SLURM_STEP_ID": "1", "SLURM_JOB_ID": "5", "SLURM_NTASKS": "2",
           "SLURM_JOB_NODELIST": "n[4-5]"}
    place = detect(env)
    assert (place.world_size, place.master_addr) == (2, "n4")


def test_batch_script_without_a_step_is_not_a_rank_of_srun():
    place = detect({"SLURM_PROCID": "0", "SLURM_JOB_ID": "5"})  # no SLURM_STEP_ID: not under srun
    assert place.launcher == "none"


def test_submitit_local_environment():
    env = {"SUBMITIT_LOCAL_GLOBALID": "1", "SUBMITIT_LOCAL_LOCALID": "1", "SUBMITIT_LOCAL_NTASKS": "2",
           "SUBMITIT_LOCAL_JOB_ID": "31337"}
    place = detect(env)
    assert (place.launcher, place.rank, place.world_size, place.local_rank) == ("submitit-local", 1, 2, 1)
    assert (place.master_addr, place.master_port, place.job_id) == ("127.0.0.1", 20_000 + 31337 % 12_000, "31337")


def test_submitit_local_ranks_inside_an_srun_shell():
    env = {"SLURM_PROCID": "0", "SLURM_STEP_ID": "0", "SLURM_JOB_ID": "77", "SLURM_STEP_NUM_TASKS": "1",
           "SLURM_STEP_NODELIST": "n1",
           "SUBMITIT_LOCAL_GLOBALID": "1", "SUBMITIT_LOCAL_LOCALID": "1", "SUBMITIT_LOCAL_NTASKS": "2",
           "SUBMITIT_LOCAL_JOB_ID": "31337"}
    place = detect(env)
    assert (place.launcher, place.rank, place.world_size) == ("submitit-local", 1, 2)


def test_empty_environment_is_one_process():
    place = detect({})
    assert (place.launcher, place.rank, place.world_size, place.local_rank) == ("none", 0, 1, 0)
    assert place.job_id is None


@pytest.mark.parametrize("counts, node, expected", [
    ("2(x2)", "1", 2), ("3,1", "0", 3), ("3,1", "1", 1), ("4", "0", 4), ("2(x2),1", "2", 1),
])
def test_tasks_on_this_node_from_slurms_compressed_counts(counts, node, expected):
    env = {"SLURM_PROCID": "0", "SLURM_STEP_ID": "0", "SLURM_JOB_ID": "7", "SLURM_STEP_TASKS_PER_NODE": counts,
           "SLURM_NODEID": node}
    assert detect(env).local_world_size == expected


def test_every_local_rank_knows_how_many_share_its_machine():
    assert detect({"RANK": "1", "WORLD_SIZE": "4", "MASTER_ADDR": "h", "LOCAL_WORLD_SIZE": "2"}).local_world_size == 2
    assert detect({"SUBMITIT_LOCAL_GLOBALID": "3", "SUBMITIT_LOCAL_NTASKS": "4"}).local_world_size == 4
    assert detect({}).local_world_size == 1
