"""Cluster profiles (precedence, the shipped Greene profile), containers, shell safety of the
sbatch text, and array chunks: no SLURM needed."""
from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.plan.cluster import ClusterSpec, ContainerSpec
from orchestrator.errors import StudyError
from orchestrator.plan.plan import build_plan
from orchestrator.slurm.sbatch import render_sbatch
from orchestrator.plan.study import load_study, parse_study
from orchestrator.submit import array_chunks
from tests.helpers import TINY_STUDY, write_study

GRID = [{"engine": "ddp", "gpus_per_node": 2, "batch_per_gpu": 32}]
HOSTILE = '"; rm -rf ~"'


def sbatch_of(study, results=Path("/scratch/u/runs/x")) -> str:
    plan = build_plan(study, results, Path("/scratch/u"))
    return render_sbatch(plan, plan.arrays[0], len(plan.arrays[0].cell_ids), token="ab12cd34")


def directives(text: str) -> list[str]:
    return [line.removeprefix("#SBATCH ") for line in text.splitlines() if line.startswith("#SBATCH ")]


def task_argv(text: str) -> list[str]:
    """The srun line as the batch shell splits it."""
    return shlex.split(next(line for line in text.splitlines() if line.startswith("srun ")))


def test_greene_profile_asks_gres_and_runs_in_the_singularity_overlay(monkeypatch):
    monkeypatch.setenv("USER", "ab123")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/nonexistent")
    text = sbatch_of(parse_study({"name": "hw", "profile": "greene", "grid": GRID}))
    lines = directives(text)
    assert "--gres=gpu:2" in lines and not any(line.startswith("--gpus-per-node") for line in lines)
    assert {"--time=60", "--mem=32G", "--array=0-0%8", "--signal=USR2@120", "--requeue",
            "--job-name=hw-n1-g2-t2-ab12cd34"} <= set(lines)
    argv = task_argv(text)
    start = argv.index("singularity")
    assert argv[start:start + 6] == ["singularity", "exec", "--nv", "--overlay",
                                     "/scratch/ab123/overlay-25GB-500K.ext3:ro",
                                     "/scratch/work/public/singularity/cuda12.1.1-cudnn8.9.0-devel-ubuntu22.04.2.sif"]
    assert argv[start + 6:start + 8] == ["/bin/bash", "-c"]
    inner = argv[start + 8]
    assert inner == "source /ext3/env.sh; python -u -m submitit.core._submit /scratch/u/runs/x/logs"


def test_precedence_study_over_site_file_over_shipped_profile(tmp_path, monkeypatch):
    site = tmp_path / "profiles"
    site.mkdir()
    (site / "greene.toml").write_text('[cluster]\naccount = "pr_123_general"\ntime_min = 120\n'
                                      '[container]\noverlay = "/scratch/me/my.ext3"\n')
    monkeypatch.setenv("ORCHESTRATOR_PROFILES", str(site))
    study = parse_study({"profile": "greene", "cluster": {"time_min": 30}, "grid": GRID})
    assert study.profile == "greene"
    assert study.cluster.account == "pr_123_general"  # site file over the shipped profile
    assert study.cluster.time_min == 30  # the study over both
    assert study.cluster.gpu_request == "gres"  # the shipped profile over the defaults
    assert study.container.overlay == "/scratch/me/my.ext3"
    assert study.container.env_script == "/ext3/env.sh"
    assert parse_study({"grid": GRID}, profile=None).cluster == ClusterSpec()  # no profile: the defaults


def test_plan_profile_flag_wins_over_the_study_and_a_profile_may_be_a_path(tmp_path, in_tmp, capsys):
    own = tmp_path / "mycluster.toml"
    own.write_text('[cluster]\npartition = "gpu"\ngpu_request = "gres"\n')
    study = write_study(tmp_path, TINY_STUDY.read_text().replace('name = "tiny"', 'name = "tiny"\nprofile = "greene"'))
    assert main(["plan", "--study", str(study), "--profile", str(own), "--sbatch"]) == 0
    out = capsys.readouterr().out
    assert "#SBATCH --partition=gpu" in out and "#SBATCH --gres=gpu:2" in out
    assert "singularity" not in out  # greene's container came with greene only


def test_unknown_profile_lists_the_profiles(in_tmp, capsys):
    assert main(["plan", "--study", str(TINY_STUDY), "--profile", "nyu"]) == 2
    err = capsys.readouterr().err
    assert "unknown profile 'nyu'; profiles: greene" in err and len(err.strip().splitlines()) == 1


def test_a_typo_in_a_profile_names_the_file_and_the_valid_keys(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[cluster]\npartion = 'gpu'\n")
    with pytest.raises(StudyError, match=r"unknown key\(s\) \['partion'\] in \[cluster\] of profile .*bad.toml; "
                                         r"valid keys: .*partition"):
        parse_study({"grid": GRID}, profile=str(bad))


@pytest.mark.parametrize("key", ["partition", "account", "qos", "constraint", "comment", "gpu_request"])
def test_shell_syntax_in_any_cluster_string_is_rejected_at_validation(key):
    """Fields that become #SBATCH options: rejected before anything is written."""
    with pytest.raises(StudyError, match=rf"\[cluster\] {key}"):
        parse_study({"cluster": {key: HOSTILE}, "grid": GRID})


@pytest.mark.parametrize("key", ["image", "overlay", "env_script", "python"])
def test_container_paths_with_shell_syntax_are_quoted_in_the_sbatch_text(key):
    """Paths may hold anything but newlines: quoted, so each shell on the way sees one word."""
    hostile = f"/x/{HOSTILE}"
    text = sbatch_of(parse_study({"container": {"image": "/img.sif", key: hostile}, "grid": GRID}))
    argv = task_argv(text)  # the batch shell's words
    inner = argv[argv.index("-c") + 1]  # what bash -c runs inside the container
    words = argv + list(shlex.shlex(inner, posix=True, punctuation_chars=True))
    assert "rm" not in words and "~" not in words
    assert hostile in words or f"{hostile}:ro" in words


def test_a_results_dir_with_shell_syntax_is_quoted(tmp_path):
    results = Path(f"/scratch/u/runs {HOSTILE} $(reboot)")
    text = sbatch_of(parse_study({"grid": GRID}), results)
    argv = task_argv(text)
    assert argv[argv.index("--output") + 1] == f"{results}/logs/%A_%a_%t_log.out"
    assert argv[-1] == f"{results}/logs"
    assert f"--output={shlex.quote(f'{results}/logs/%A_%a_0_log.out')}" in directives(text)


def test_a_value_that_would_split_an_sbatch_line_is_rejected():
    with pytest.raises(StudyError):
        parse_study({"cluster": {"partition": "gpu\n#SBATCH --qos=high"}, "grid": GRID})
    with pytest.raises(StudyError, match="no newlines"):
        ContainerSpec(image="/a.sif\n/b")
    with pytest.raises(StudyError, match=r"\$NOPE_NOT_SET is not set"):
        parse_study({"container": {"image": "/$NOPE_NOT_SET/a.sif"}, "grid": GRID})


def test_signal_delay_must_fit_in_the_time_limit():
    with pytest.raises(StudyError, match="signal_delay_s = 90 must be shorter than the time limit"):
        parse_study({"cluster": {"time_min": 1}, "grid": GRID})


def test_arrays_are_split_into_chunks_indexed_from_zero(tmp_path):
    study = parse_study({"grid": [{"engine": "single", "batch_per_gpu": 8, "seed": list(range(7))},
                                  {"engine": "ddp", "gpus_per_node": 2, "batch_per_gpu": 8}]})
    plan = build_plan(study, tmp_path, tmp_path)
    todo = [c.cell_id for c in plan.cells]
    chunks = array_chunks(plan, todo, 3)
    assert [(a.name, len(ids)) for a, ids in chunks] == [("n1-g1-t1", 3), ("n1-g1-t1", 3), ("n1-g1-t1", 1),
                                                         ("n1-g2-t2", 1)]
    assert [c for _, ids in chunks for c in ids] == todo  # every cell once, in plan order
    assert "#SBATCH --array=0-2" in render_sbatch(plan, chunks[1][0], len(chunks[1][1]))


def test_shipped_studies_still_plan_with_the_greene_profile(monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", "/nonexistent")
    study = load_study("hw5", profile="greene")
    assert study.cluster.time_min == 60 and study.cluster.gpu_request == "gres" and study.container.enabled
