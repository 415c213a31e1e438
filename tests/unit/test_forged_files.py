"""Files a labmate (or a careless hand) can write in a results dir: plan.json and .status-cache.
Every value that reaches an sbatch script or a path is checked on every read; a seal is keyed by
the user's own secret (results_format.sealed_json), so a forged one is no seal."""
from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from results_format import sealed_json
from jobs.core.layout import PLAN_FILE, STATUS_CACHE, result_path
from results_format.sealed_json import is_sealed, sealed_text
from orchestrator.errors import PlanError
from orchestrator.watch.result_cache import ResultCache
from orchestrator.plan.plan import ResourceShape, build_plan, install_plan, read_plan
from orchestrator.slurm.sbatch import render_sbatch
from orchestrator.plan.study import load_study
from tests.factories import cell, train_result, write_results
from tests.helpers import cli


def plain_seal(text: str) -> str:
    """The text resealed as a labmate can: a sha256 anyone may compute (the seal before keys)."""
    rest = text.partition("\n")[2]
    return f'{{"seal": "{hashlib.sha256(rest.encode()).hexdigest()}",\n' + rest


def keyed_seal(text: str) -> str:
    """The text resealed with this user's own key: what only this user's `plan` could write."""
    data = json.loads(text)
    data.pop("seal")
    return sealed_text(data)


def planned(tmp_path: Path, study: str = "quick") -> Path:
    install_plan(build_plan(load_study(study), tmp_path, tmp_path), "", {})
    return tmp_path / PLAN_FILE


def edit(path: Path, old: str, new: str, seal=plain_seal) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(seal(text.replace(old, new)))


def refused(tmp_path: Path, capsys, *words: str) -> str:
    code, out, err = cli(capsys, "status", "--results", tmp_path)
    assert code == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and str(tmp_path / PLAN_FILE) in err
    for word in words:
        assert word in err, err
    return err


# --- plan.json: what reaches the sbatch script or a path --------------------------------------------------

@pytest.mark.parametrize("seal", [plain_seal, keyed_seal])
def test_a_command_in_mem_gb_is_refused_on_read(tmp_path, capsys, seal):
    path = planned(tmp_path)
    edit(path, '"mem_gb":0,"nodes":1', '"mem_gb":"1\\ntouch X; id > X #","nodes":1', seal)
    refused(tmp_path, capsys, "mem_gb")


@pytest.mark.parametrize("field, value", [("time_min", '"20; id"'), ("nodes", "0"), ("cpus_per_task", "true"),
                                          ("partition", '"gpu\\n#SBATCH --uid=0"'), ("gpu_request", '"both"')])
def test_every_shape_field_is_typed_and_checked_on_read(tmp_path, capsys, field, value):
    path = planned(tmp_path)
    text = path.read_text()
    old = next(f'"{field}":{v}' for v in ("20", "1", "3", '""', '"gpus-per-node"') if f'"{field}":{v}' in text)
    edit(path, old, f'"{field}":{value}', keyed_seal)
    refused(tmp_path, capsys, field)


def test_gpus_per_node_beyond_what_a_node_has_is_refused(tmp_path, capsys):
    path = planned(tmp_path)  # quick: nodes of 2 GPUs
    edit(path, '"gpus_per_node":2,"mem_gb"', '"gpus_per_node":64,"mem_gb"', keyed_seal)
    refused(tmp_path, capsys, "gpus_per_node")


def test_a_hand_edited_shape_must_ask_for_what_its_cells_need(tmp_path, capsys):
    path = planned(tmp_path)
    path.write_text(plain_seal(path.read_text().replace('"time_min":20', '"time_min":9999', 1)))  # the first
    # array's only, under a seal anyone can compute (not this user's): the plan is checked whole
    refused(tmp_path, capsys, "shape.time_min = 9999", "needs 20")


def test_a_resealed_cell_id_that_leaves_the_results_dir_is_refused(tmp_path, capsys):
    path = planned(tmp_path)
    first = read_plan(tmp_path).cell_ids[0]
    for seal in (plain_seal, keyed_seal):
        path.write_text(seal(path.read_text().replace(first, "../../ESCAPE")))
        refused(tmp_path, capsys, "ESCAPE")
        path.write_text(path.read_text().replace("../../ESCAPE", first))


@pytest.mark.parametrize("old, new, words", [('"name":"n1-g1-t1"', '"name":"../x"', "array name"),
                                             ('"study": "quick"', '"study": "../x"', "study")])
def test_a_name_that_reaches_a_path_or_a_job_name_is_checked(tmp_path, capsys, old, new, words):
    path = planned(tmp_path)
    edit(path, old, new, keyed_seal)
    refused(tmp_path, capsys, words, "../x")


def test_a_result_path_is_only_ever_a_cell_id_in_the_results_dir(tmp_path):
    with pytest.raises(ValueError, match="ESCAPE"):
        result_path(tmp_path, "../../ESCAPE")


def test_a_wrong_type_in_a_resealed_plan_is_one_error_line_not_a_traceback(tmp_path, capsys):
    path = planned(tmp_path)
    edit(path, '"epochs":2', '"epochs":"2"')
    refused(tmp_path, capsys, "epochs")


def test_the_template_quotes_every_value_and_no_value_starts_a_line(tmp_path):
    plan = build_plan(load_study("quick"), tmp_path, tmp_path)
    array = plan.arrays[0]
    forged = ResourceShape(1, 1, 1, 3, 20)
    object.__setattr__(forged, "mem_gb", "1\ntouch X")  # past the checks, as no reader lets it
    with pytest.raises(PlanError, match="control character"):
        render_sbatch(plan, array, 1, shape=forged)
    object.__setattr__(forged, "mem_gb", "1; touch X")
    text = render_sbatch(plan, array, 1, shape=forged)
    assert "#SBATCH --mem='1; touch X'G" in text


# --- the seal: keyed by the user's secret ------------------------------------------------------------------

def test_the_seal_key_is_the_users_own_private_file(tmp_path, monkeypatch):
    key = tmp_path / "config" / "seal.key"
    monkeypatch.setenv(sealed_json.KEY_ENV, str(key))
    text = sealed_text({"a": 1}).encode()
    assert is_sealed(text) and stat.S_IMODE(key.stat().st_mode) == 0o600
    assert not is_sealed(plain_seal(text.decode()).encode())  # anyone's sha256 is no seal
    other = tmp_path / "other.key"
    other.write_text(key.read_text())
    other.chmod(0o644)  # readable by others: no secret
    monkeypatch.setenv(sealed_json.KEY_ENV, str(other))
    assert not is_sealed(text) and not is_sealed(sealed_text({"a": 1}).encode())
    link = tmp_path / "link.key"
    link.symlink_to(key)
    monkeypatch.setenv(sealed_json.KEY_ENV, str(link))
    assert not is_sealed(text)


def test_without_a_key_nothing_is_sealed_and_plans_are_checked_whole(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(sealed_json.KEY_ENV, str(tmp_path / "a-file" / "seal.key"))  # cannot be made, even by root
    assert not is_sealed(sealed_text({"a": 1}).encode())
    results = tmp_path / "results"
    planned(results)
    assert read_plan(results).cell_ids  # read, checked whole


# --- .status-cache -------------------------------------------------------------------------------------------

def test_a_forged_status_cache_cannot_turn_a_done_cell_into_a_failed_one(tmp_path):
    c = cell()
    write_results(tmp_path, [train_result(c)])
    outcomes = ResultCache(tmp_path)
    outcomes.read((c.cell_id,))
    cache = tmp_path / STATUS_CACHE
    os.utime(result_path(tmp_path, c.cell_id), (1, 1))  # older than the racy window: kept in the cache
    ResultCache(tmp_path).read((c.cell_id,))
    assert '"ok"' in cache.read_text()
    cache.write_text(plain_seal(cache.read_text().replace('"ok"', '"failed"')))
    assert ResultCache(tmp_path).read((c.cell_id,))[c.cell_id].status == "ok"


@pytest.mark.parametrize("bad, said", [
    ("mode 0644", "others may read it"), ("foreign", "belongs to uid 65534"), ("symlink", "symbolic link"),
    ("directory", "not a regular file"), ("unwritable dir", "cannot be read or made"),
])
def test_a_key_that_cannot_be_used_is_said_once_on_stderr(tmp_path, monkeypatch, capsys, bad, said):
    key = tmp_path / "config" / "seal.key"
    key.parent.mkdir()
    if bad == "directory":
        key.mkdir()
    elif bad == "symlink":
        (tmp_path / "real.key").write_text("0" * 64)
        key.symlink_to(tmp_path / "real.key")
    elif bad == "unwritable dir":
        key = tmp_path / "a-file" / "seal.key"  # under a file: cannot be made, even by root
        (tmp_path / "a-file").write_text("")
    else:
        key.write_text("0" * 64)
        key.chmod(0o644 if bad == "mode 0644" else 0o600)
        if bad == "foreign":
            if os.geteuid() != 0:
                pytest.skip("needs root, to give the key to another user")
            os.chown(key, 65534, 65534)
    monkeypatch.setenv(sealed_json.KEY_ENV, str(key))
    capsys.readouterr()
    for _ in range(2):
        assert not is_sealed(sealed_text({"a": 1}).encode())
    err = capsys.readouterr().err
    assert err.count("warning: no seal key") == 1 and said in err, err


@pytest.mark.parametrize("corrupt", ["", "0" * 63, "not hex at all"])
def test_a_corrupt_key_of_your_own_is_replaced(tmp_path, monkeypatch, capsys, corrupt):
    key = tmp_path / "seal.key"
    key.write_text(corrupt)
    key.chmod(0o600)
    monkeypatch.setenv(sealed_json.KEY_ENV, str(key))
    assert is_sealed(sealed_text({"a": 1}).encode())
    assert len(key.read_text().strip()) == 64 and stat.S_IMODE(key.stat().st_mode) == 0o600
    assert "warning" not in capsys.readouterr().err
