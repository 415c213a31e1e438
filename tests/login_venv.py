"""A login node's venv: this checkout's wheel, installed (not editable) into a fresh venv that holds
exactly the package's install_requires and what they require in turn, and no torch. Built once per
session by the `login_venv` fixture (tests/conftest.py), ~15 s.

The dependencies are lent, not downloaded: each distribution of that closure is linked from where the
interpreter running the tests has it, into one folder the venv reads through a .pth line. Offline,
seconds instead of minutes, and exact: a verb that imports torch (or anything outside the closure)
fails there as on a login node where only `pip install .` ran."""
from __future__ import annotations

import importlib.metadata as metadata
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
SOURCES = ("orchestrator", "jobs", "collect", "results_format", "templates")
PROJECT_FILES = ("setup.cfg", "pyproject.toml", "README.md")


@dataclass(frozen=True)
class LoginVenv:
    python: Path  # the venv's interpreter
    lent: tuple[str, ...]  # the distributions it holds besides the package (canonical names)

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a shell where the venv is activated: no PYTHONPATH (only what was
        installed), the venv's bin first on PATH."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env["PATH"] = f"{self.python.parent}:{env['PATH']}"
        env["VIRTUAL_ENV"] = str(self.python.parent.parent)
        return {**env, **extra}


def run(command: list, cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: int = 300) -> subprocess.CompletedProcess:
    """Run a command that must succeed; its output in the assertion when it does not."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done


def build_wheel(into: Path) -> Path:
    """The wheel of the tracked layout (a copy of the sources: no stray build dirs in the checkout)."""
    src = into / "src"
    for name in SOURCES:
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in PROJECT_FILES:
        shutil.copy(REPO / name, src / name)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", into / "dist", src])
    return next((into / "dist").glob("orchestrator-*.whl"))


def requires(wheel: Path) -> list[str]:
    """The wheel's Requires-Dist lines: install_requires, and the extras' marked `extra == ...`."""
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(name).decode()
    return Parser().parsestr(text).get_all("Requires-Dist") or []


def closure(requirements: list[str]) -> dict[str, metadata.Distribution]:
    """Every distribution that `pip install` of these requirements (no extras) brings, as the
    running interpreter has them installed."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(requirements)
    while todo:
        requirement = Requirement(todo.pop())
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        key = canonicalize_name(requirement.name)
        if key not in found:
            found[key] = metadata.distribution(requirement.name)
            todo.extend(found[key].requires or [])
    return found


def top_level(dist: metadata.Distribution) -> set[str]:
    """The names a distribution puts in its site-packages dir: from its RECORD, else (an egg-info a
    system package manager installed, without one) its top_level.txt."""
    if dist.files:
        return {f.parts[0] for f in dist.files if f.parts[0] not in ("..", "__pycache__")}
    names = (dist.read_text("top_level.txt") or "").split()
    return {n for name in names for n in (name, f"{name}.py") if Path(str(dist.locate_file(n))).exists()}


def lend(distributions: dict[str, metadata.Distribution], into: Path) -> None:
    """Link each distribution's top-level files and folders (its packages, its .dist-info, its
    bundled .libs) into one folder."""
    into.mkdir()
    for dist in distributions.values():
        for top in top_level(dist):
            source = Path(str(dist.locate_file(top)))
            if source.exists() and not (into / top).exists():
                (into / top).symlink_to(source)


def build(where: Path) -> LoginVenv:
    wheel = build_wheel(where)
    needed = closure([r for r in requires(wheel) if "extra ==" not in r])
    venv = where / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    purelib = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    lend(needed, where / "lent")
    (purelib / "lent-dependencies.pth").write_text(f"{where / 'lent'}\n")
    run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", purelib, wheel])
    return LoginVenv(python, tuple(sorted(needed)))
