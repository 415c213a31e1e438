"""What the cluster is and what each job asks of it ([cluster], [container]), and cluster profiles.

A profile is a TOML file holding a [cluster] and a [container] table for one site (Greene ships
in orchestrator/profiles/). A study names one with `profile = "greene"`, or `plan --profile` does
(the command line wins). Each key is taken from the first of these that sets it:

  1. the study file's own [cluster] / [container] keys
  2. a site file of the profile's name: $ORCHESTRATOR_PROFILES (dirs, ':'-separated), then
     ~/.config/orchestrator/profiles/NAME.toml; it may set only the keys it changes
  3. the shipped profile orchestrator/profiles/NAME.toml
  4. the defaults of ClusterSpec and ContainerSpec below

`submit --time-min` then overrides the time limit of the cells that one submit queues.
"""
from __future__ import annotations

import dataclasses
import getpass
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from collections.abc import Mapping

from orchestrator.errors import StudyError
from orchestrator.plan.strict_toml import check_types, field_names, read_toml, reject_unknown, table

PROFILES_DIR = Path(__file__).parents[1] / "profiles"
PROFILE_PATH_ENV = "ORCHESTRATOR_PROFILES"
GPU_REQUESTS = ("gpus-per-node", "gres")
MAX_TIME_MIN = 366 * 24 * 60  # a time limit beyond a year: SLURM makes it UNLIMITED, the budget charges it whole
CONTAINER_RUNTIMES = ("singularity", "apptainer")
_PROFILE_KEYS = {"description", "cluster", "container"}
# Values that reach #SBATCH lines: plain names only, so nothing can smuggle shell syntax in.
_SAFE_NAME = re.compile(r"[A-Za-z0-9_.,:@+=/-]*")
_SAFE_CHARS = {  # a few fields need SLURM's own syntax; still quoted in the sbatch text
    "constraint": re.compile(r"[A-Za-z0-9_.,:@+=/|&*\[\]-]*"),  # "a100|v100"
    "comment": re.compile(r"[A-Za-z0-9_.,:@+=/;-]*"),  # Greene: "preemption=yes;requeue=true"
}
_VAR = re.compile(r"\$(\w+)|\$\{(\w+)\}")


@dataclass(frozen=True)
class ClusterSpec:
    """What a node has and what each job asks SLURM for."""

    gpus_per_node: int = 4  # GPUs one node has; no cell may ask more per node
    partition: str = ""  # empty: the cluster's default partition
    account: str = ""
    qos: str = ""
    constraint: str = ""  # SLURM --constraint, e.g. "a100|h100"
    time_min: int = 30  # time limit of each job
    cpus_per_task: int = 0  # 0: loader workers + 1 per task
    mem_gb: int = 0  # memory per node (--mem); 0: the partition's default
    gpu_request: str = "gpus-per-node"  # or "gres" (--gres=gpu:N) where a cluster refuses the other
    array_parallelism: int = 0  # 0: no throttle (%N) on arrays
    images_per_s_per_gpu: float = 5000.0  # only for the GPU-hour estimate that `plan` shows
    comment: str = ""  # SLURM --comment; on Greene "preemption=yes;requeue=true" opts in to preemptible GPUs
    max_array_size: int = 0  # split arrays above this; 0: the cluster's MaxArraySize (scontrol show config)
    signal_delay_s: int = 90  # SIGUSR2 this long before the time limit: the job checkpoints and requeues
    poll_interval_s: float = 10.0  # default seconds between scheduler queries of status --watch / submit --wait
    budget_gpu_hours: float = 0.0  # the most GPU-hours a study may spend (orchestrator.budget.budget); 0: no cap
    pack: int = 1  # cells of one shape each array task runs one after another (submit --pack): one queue wait for them
    max_time_min: int = 0  # the longest time limit the partition grants; a packed task's is capped at it (0: none known)

    def __post_init__(self) -> None:
        check_types("[cluster]", self)
        for field in dataclasses.fields(self):
            if field.type == "str":
                check_slurm_name("[cluster]", field.name, getattr(self, field.name))
        if self.gpu_request not in GPU_REQUESTS:
            raise StudyError(f"[cluster] gpu_request must be one of {list(GPU_REQUESTS)}, got {self.gpu_request!r}")
        for field in dataclasses.fields(self):  # TOML has nan and inf
            if field.type == "float" and not math.isfinite(getattr(self, field.name)):
                raise StudyError(f"[cluster] {field.name} must be a finite number, got {getattr(self, field.name)}")
        for name in ("gpus_per_node", "time_min", "poll_interval_s", "images_per_s_per_gpu", "pack"):
            if getattr(self, name) <= 0:
                raise StudyError(f"[cluster] {name} must be > 0, got {getattr(self, name)}")
        if self.time_min > MAX_TIME_MIN:
            raise StudyError(f"[cluster] time_min must be at most {MAX_TIME_MIN} (a year), got {self.time_min}")
        for name in ("cpus_per_task", "mem_gb", "array_parallelism", "max_array_size", "signal_delay_s",
                     "budget_gpu_hours", "max_time_min"):
            if getattr(self, name) < 0:
                raise StudyError(f"[cluster] {name} must be >= 0, got {getattr(self, name)}")
        if self.signal_delay_s >= self.time_min * 60:
            raise StudyError(f"[cluster] signal_delay_s = {self.signal_delay_s} must be shorter than the time limit "
                             f"(time_min = {self.time_min}, {self.time_min * 60} s); lower it or raise time_min")


@dataclass(frozen=True)
class Packing:
    """How the cells of one array chunk go into its tasks (submit --pack, [cluster] pack)."""

    cells_per_task: int  # the most cells one task runs, one after another
    tasks: int  # ceil(cells / cells_per_task)
    time_min: int  # each task's limit: cells_per_task x the cell's, at most max_time_min
    capped: bool  # the limit was cut to max_time_min: a task may not reach its last cells (its retry will)


def packing(cells: int, pack: int, cell_time_min: int, max_time_min: int = 0) -> Packing:
    """`pack` cells a task (fewer where there are fewer cells): ceil(cells / pack) tasks, each with
    pack x cell_time_min minutes, capped at max_time_min (0: no cap) but never below one cell's."""
    per_task = max(1, min(pack, cells))
    wanted = per_task * cell_time_min
    limit = min(wanted, max(max_time_min, cell_time_min)) if max_time_min else wanted
    return Packing(per_task, -(-cells // per_task), limit, limit < wanted)


def packing_text(packed: Packing, cell_time_min: int) -> str:
    """What `plan` and `submit` say of a packed array."""
    if packed.cells_per_task == 1:
        return f"{packed.tasks} task(s), one cell each, {cell_time_min} min"
    limit = f"{packed.cells_per_task} x {cell_time_min} min"
    if packed.capped:
        limit += f", capped at max_time_min = {packed.time_min}: a task may not reach its last cells (retry runs them)"
    return (f"{packed.tasks} task(s) of up to {packed.cells_per_task} cells, one after another; time limit "
            f"{packed.time_min} min ({limit})")


def check_slurm_name(where: str, name: str, value: object) -> None:
    """A value of an #SBATCH option (partition, account, qos, constraint, comment): a string of
    SLURM's characters only, so nothing can smuggle shell syntax or a new line in (StudyError)."""
    if not isinstance(value, str) or not _SAFE_CHARS.get(name, _SAFE_NAME).fullmatch(value):
        raise StudyError(f"{where} {name} = {value!r} holds characters SLURM names never use; "
                         "use letters, digits and _.,:@+=/- only")


@dataclass(frozen=True)
class ContainerSpec:
    """Run each task inside a container: `singularity exec --nv --overlay OVERLAY:ro IMAGE
    /bin/bash -c "source ENV_SCRIPT; PYTHON -u -m submitit.core._submit LOGS"` (Greene's pattern).
    Paths may use $USER, $HOME, ~ (expanded when the plan is made); they are quoted in the sbatch text."""

    image: str = ""  # the .sif; empty: no container, each task runs the Python that ran `submit`
    overlay: str = ""  # an ext3 overlay holding the Python environment, mounted read-only
    env_script: str = ""  # sourced first inside the container (Greene: /ext3/env.sh activates the overlay's env)
    python: str = "python"  # the interpreter inside the container (after env_script)
    runtime: str = "singularity"  # or apptainer

    def __post_init__(self) -> None:
        check_types("[container]", self)
        if self.runtime not in CONTAINER_RUNTIMES:
            raise StudyError(f"[container] runtime must be one of {list(CONTAINER_RUNTIMES)}, got {self.runtime!r}")
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if any(c in value for c in "\n\r\0$"):
                raise StudyError(f"[container] {field.name} = {value!r}: no newlines, and no $ left after "
                                 "expanding variables; give a plain path")
        if not self.python:
            raise StudyError("[container] python must name the interpreter inside the container, e.g. \"python\"")
        if (self.overlay or self.env_script) and not self.image:
            raise StudyError("[container] overlay and env_script need image (the .sif file) too")

    @property
    def enabled(self) -> bool:
        return bool(self.image)


@dataclass(frozen=True)
class Profile:
    name: str  # "" when no profile is used
    cluster: dict[str, Any]
    container: dict[str, Any]
    sources: tuple[str, ...]  # the files read, lowest precedence first


def site_profile_dirs() -> list[Path]:
    dirs = [Path(p).expanduser() for p in os.environ.get(PROFILE_PATH_ENV, "").split(os.pathsep) if p]
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return dirs + [config / "orchestrator" / "profiles"]


def available_profiles() -> list[str]:
    names = {p.stem for p in PROFILES_DIR.glob("*.toml")}
    for folder in site_profile_dirs():
        names |= {p.stem for p in folder.glob("*.toml")} if folder.is_dir() else set()
    return sorted(names)


def profile_files(name_or_path: str) -> list[Path]:
    """The files that make up a profile, lowest precedence first."""
    path = Path(name_or_path).expanduser()
    if path.suffix == ".toml":
        if not path.is_file():
            raise StudyError(f"profile file {path} does not exist")
        return [path]
    shipped = PROFILES_DIR / f"{name_or_path}.toml"
    site = next((d / f"{name_or_path}.toml" for d in site_profile_dirs() if (d / f"{name_or_path}.toml").is_file()), None)
    files = [f for f in (shipped if shipped.is_file() else None, site) if f is not None]
    if not files:
        raise StudyError(f"unknown profile {name_or_path!r}; profiles: {', '.join(available_profiles()) or 'none'} "
                         f"(or give the path of a .toml file; site files go in {site_profile_dirs()[-1]})")
    return files


def load_profile(name_or_path: Optional[str]) -> Profile:
    if not name_or_path:
        return Profile("", {}, {}, ())
    cluster: dict[str, Any] = {}
    container: dict[str, Any] = {}
    files = profile_files(name_or_path)
    for path in files:
        try:
            data = read_toml(path)[1]
        except StudyError as exc:
            raise StudyError(f"profile {exc}") from exc
        reject_unknown(f"profile {path}", data, _PROFILE_KEYS)
        for name, into, spec_cls in (("cluster", cluster, ClusterSpec), ("container", container, ContainerSpec)):
            value = table(f"profile {path}: {name}", data.get(name, {}))
            reject_unknown(f"[{name}] of profile {path}", value, field_names(spec_cls))
            into.update(value)
    return Profile(Path(name_or_path).stem, cluster, container, tuple(str(f) for f in files))


def expand_vars(value: str, where: str, env: Optional[Mapping[str, str]] = None) -> str:
    """~, $NAME and ${NAME} from the environment of `plan`; an unset variable is an error."""
    env = dict(os.environ if env is None else env)
    env.setdefault("USER", getpass.getuser())  # unset in some batch and container shells
    if value.startswith("~"):
        value = str(Path(value).expanduser())

    def one(match: re.Match) -> str:
        name = match.group(1) or match.group(2)
        if name not in env:
            raise StudyError(f"{where} = {value!r}: ${name} is not set here; set it or write the path out")
        return env[name]

    return _VAR.sub(one, value)


def build_specs(profile: Profile, cluster: Mapping[str, Any],
                container: Mapping[str, Any]) -> tuple[ClusterSpec, ContainerSpec]:
    """The study's own keys over the profile's, checked."""
    reject_unknown("[cluster]", cluster, field_names(ClusterSpec))
    reject_unknown("[container]", container, field_names(ContainerSpec))
    merged = {**profile.container, **container}
    merged = {k: expand_vars(v, f"[container] {k}") if isinstance(v, str) else v for k, v in merged.items()}
    return ClusterSpec(**{**profile.cluster, **cluster}), ContainerSpec(**merged)
