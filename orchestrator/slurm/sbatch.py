"""The sbatch text of one job array, rendered from templates/ (pure).

`plan` writes and shows this text; `submit` sends the same text, with the job name ending in
the submission's token (how an interrupted submit finds its jobs again) and --array sized to
the chunk it queues.
"""
from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Optional

import jinja2

from orchestrator.plan.cluster import ContainerSpec
from orchestrator.errors import PlanError
from orchestrator.plan.plan import ArrayPlan, Plan, ResourceShape



def template_env() -> jinja2.Environment:
    import templates  # here, not at the top: a job imports this module (backends) but renders nothing

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates.TEMPLATES_DIR)), undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["q"] = quoted
    return env


def quoted(value: object) -> str:
    """A value as one shell word on its own line of the script: quoted, and refused where it holds
    a control character (a newline would start a line of its own; plan.json's checks keep them out)."""
    text = str(value)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise PlanError(f"{text!r} cannot go into an sbatch script: it holds a control character")
    return shlex.quote(text)


def job_name(plan: Plan, array: ArrayPlan, token: str = "") -> str:
    """study-array, and -token for a submission: the token is unique to one sbatch."""
    return f"{plan.study}-{array.name}" + (f"-{token}" if token else "")


def submitit_command(log_dir: Path, python: str = sys.executable) -> str:
    """What each task runs: submitit's entry point, which unpickles and calls the cell's run."""
    return f"{shlex.quote(python)} -u -m submitit.core._submit {shlex.quote(str(log_dir))}"


def in_container(container: ContainerSpec, command: str) -> str:
    """Greene's pattern: singularity exec --nv --overlay OVERLAY:ro IMAGE /bin/bash -c "source ENV; CMD".
    Every path is quoted, and the inner command is quoted once more as bash -c's one argument."""
    inner = (f"source {shlex.quote(container.env_script)}; " if container.env_script else "") + command
    overlay = f"--overlay {shlex.quote(container.overlay + ':ro')} " if container.overlay else ""
    return (f"{container.runtime} exec --nv {overlay}{shlex.quote(container.image)} "
            f"/bin/bash -c {shlex.quote(inner)}")


def task_command(plan: Plan) -> str:
    if plan.container.enabled:
        return in_container(plan.container, submitit_command(plan.log_dir, plan.container.python))
    return submitit_command(plan.log_dir)


def render_sbatch(plan: Plan, array: ArrayPlan, count: int, command: Optional[str] = None, *,
                  token: str = "", shape: Optional[ResourceShape] = None) -> str:
    """The text for `count` cells of `array`, indexed 0..count-1. `shape` overrides the array's
    (e.g. a longer time limit for a retry); `command` the task command (default: task_command)."""
    return template_env().get_template("sbatch.sh.j2").render(
        study=plan.study, array=array.name, job_name=job_name(plan, array, token), shape=shape or array.shape,
        count=count, parallelism=plan.cluster.array_parallelism, log_dir=str(plan.log_dir),
        signal_delay_s=plan.cluster.signal_delay_s, command=command or task_command(plan),
    )
