"""The sbatch text of one job array, rendered from templates/ (pure)."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

import jinja2

from orchestrator.plan import ArrayPlan, Plan

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"
SIGNAL_DELAY_S = 90  # USR2 this long before the time limit: time to checkpoint


def template_env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)), undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["q"] = lambda value: shlex.quote(str(value))
    return env


def job_name(plan: Plan, array: ArrayPlan) -> str:
    return f"{plan.study}-{array.name}"


def submitit_command(log_dir: Path, python: str = sys.executable) -> str:
    """What each task runs: submitit's entry point, which unpickles and calls jobs.train.run."""
    return f"{shlex.quote(python)} -u -m submitit.core._submit {shlex.quote(str(log_dir))}"


def render_sbatch(plan: Plan, array: ArrayPlan, count: int, command: str) -> str:
    return template_env().get_template("sbatch.sh.j2").render(
        study=plan.study, array=array.name, job_name=job_name(plan, array), shape=array.shape,
        count=count, parallelism=plan.cluster.array_parallelism, log_dir=str(plan.log_dir),
        signal_delay_s=SIGNAL_DELAY_S, command=command,
    )
