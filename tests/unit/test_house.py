"""The house's rules that no single module can break alone: the login node's verbs import no
torch, no module imports one that imports it back, every shipped study keeps its cell ids."""
from __future__ import annotations

import ast
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.plan.study import load_study

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("orchestrator", "jobs", "collect", "results_format")

# sha256 of every cell id of the study, sorted and joined: as planned before jobs/ and collect/
# became packages per kind (a changed id loses every result written under it). quick: its 2
# repeats since issue 20 (the first run in 2 minutes), ids unchanged: the 18 of 3 repeats were
# "8bc9124f270e", these 12 are among them. lab: its 12 cells and, since issue 21, the 18 of its
# sweep on 2 nodes x 2 GPUs (the 12 ids unchanged among the 30). hw5: since issue 28, 3 more for Q7
# (gradients only, broadcast_buffers = false, at 512 per GPU on 4 GPUs: Q7's own case); its 84 ids before them unchanged (718ccc52743e, test_cell.py).
# quick: since issue 32 its set has colour jitter 20, a new set and new ids (before: 5d742d878d68); since
# issue 46, 64 images at batch 16 and 64 (the first run in 2 minutes), new ids (before: af2396176c96)
STUDY_IDS = {"quick": (12, "a73ef90a6c36"), "hw5": (87, "008ef5202d95"), "lab": (30, "ccacd730e524"),
             "ptq": (3, "afecddd2e411"), "allreduce": (9, "66c1c0d1a34c")}


@pytest.mark.parametrize("name", sorted(STUDY_IDS))
def test_every_shipped_study_keeps_its_cell_ids(name):
    ids = sorted(c.cell_id for c in load_study(name).cells)
    assert (len(ids), hashlib.sha256(",".join(ids).encode()).hexdigest()[:12]) == STUDY_IDS[name]


def test_plan_submit_and_status_import_no_torch_with_every_kind_registered():
    code = """
import sys
from orchestrator import cli
from orchestrator.commands import plan, submit, status, cancel, logs
from jobs.core.kinds import kinds
from jobs.core.result import Result
kinds()  # every kind's package: its cell and its result body
assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))[:5]
print(sorted(kinds()))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['allreduce',", "'command',", "'ptq',", "'train']"]


def module_imports(path: Path) -> set[str]:
    """The project modules a module imports, anywhere in it: at its top and inside its functions (an
    import deferred to a function is still a dependency: it hid the collect.kinds <-> collect.load cycle)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            base = node.module
            found |= {f"{base}.{a.name}" for a in node.names} | {base}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            modules[".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")] = path
    return modules


KINDS = ("train", "ptq", "allreduce", "command")
# (modules, what none of them may import): collect reads JSON and imports no orchestrator; jobs never
# imports orchestrator, nor the results dir's format (results_format: the orchestrator's and collect's,
# which imports neither of them); the generic job and collect modules import no kind; the generic collect verb
# no kind's collect package (a kind declares its own options: collect.options); the comparison no kind
# (a kind declares its runs and labeller: collect.comparable)
RULES = [
    ("collect.", ("orchestrator",)),
    ("jobs.", ("orchestrator", "results_format")),
    ("results_format.", ("orchestrator", "collect")),
    ("jobs.runtime.", tuple(f"jobs.{kind}" for kind in KINDS)),
    ("jobs.core.", tuple(f"jobs.{kind}" for kind in KINDS)),
    ("orchestrator.commands.collect", tuple(f"collect.{kind}" for kind in KINDS)),
    ("collect.compare", tuple(f"{side}.{kind}" for side in ("collect", "jobs") for kind in KINDS)),
]


# The orchestrator by role, the lowest first: a module imports only from its own role and those
# before it (and from jobs/ and results_format/). plan: study files -> Plan; slurm: sbatch, squeue,
# sacct, submitit's arrays; local: the local executor (its queue, processes, machine lock, warm
# start), shaped as SLURM's jobs; watch: each cell's state from the registry, results and jobs;
# budget: GPU-hours spent, estimated and capped; verbs: submit, settle and cancel; cli: the commands and
# their screens; kept: module paths a job queued before issue 39 still runs by (aliases).
ROLES = (
    ("errors", ("orchestrator.errors",)),
    ("plan", ("orchestrator.plan",)),
    ("slurm", ("orchestrator.slurm",)),
    ("local", ("orchestrator.local",)),
    ("watch", ("orchestrator.watch",)),
    ("budget", ("orchestrator.budget",)),
    ("verbs", ("orchestrator.submit", "orchestrator.cancel", "orchestrator.settle")),
    ("cli", ("orchestrator.cli", "orchestrator.commands", "orchestrator.__main__")),
    ("kept", ("orchestrator.submitit_adapter", "orchestrator.warm_start")),
)


def role_of(module: str) -> int:
    """The rank of the module's role in ROLES (-1: none; the orchestrator package itself has none)."""
    for rank, (_, prefixes) in enumerate(ROLES):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    return -1


def upward_imports(imports: dict[str, set[str]]) -> list[str]:
    """Each import of the orchestrator's from a role to a later one: "watch: a.b imports budget: c.d"."""
    names = [name for name, _ in ROLES]
    return sorted(f"{names[role_of(a)]}: {a} imports {names[role_of(b)]}: {b}" for a, found in imports.items()
                  for b in found if role_of(a) >= 0 and role_of(b) > role_of(a))


def orchestrator_imports() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: {m for m in module_imports(path) if m in modules} for name, path in modules.items()
            if name.startswith("orchestrator.")}


def test_every_orchestrator_module_has_a_role():
    assert [name for name in orchestrator_imports() if role_of(name) < 0] == []


def test_the_roles_import_one_way_only_down():
    assert upward_imports(orchestrator_imports()) == []


def test_an_import_running_back_up_is_named():
    """The rule catches what it is for: the SLURM client importing why a job ended (watch: as it did, for last_line)."""
    imports = orchestrator_imports()
    imports["orchestrator.slurm.slurm_client"] = imports["orchestrator.slurm.slurm_client"] | {"orchestrator.watch.why_ended"}
    assert upward_imports(imports) == [
        "slurm: orchestrator.slurm.slurm_client imports watch: orchestrator.watch.why_ended"]


@pytest.mark.parametrize("prefix,banned", RULES)
def test_who_imports_what(prefix, banned):
    offenders = sorted(f"{name} imports {m}" for name, path in project_modules().items() if name.startswith(prefix)
                       for m in module_imports(path) if any(m == b or m.startswith(b + ".") for b in banned))
    assert offenders == []


def test_no_module_imports_one_that_imports_it_back():
    modules = project_modules()
    graph = {name: {m for m in module_imports(path) if m in modules and m != name} for name, path in modules.items()}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo += graph[node]
        return False

    cycles = sorted((a, b) for a in graph for b in graph[a] if a < b and reaches(b, a))
    assert cycles == [], f"import cycles through: {cycles}"


def test_no_test_module_imports_another():
    """Shared test code lives in helper modules (tests/helpers.py, factories.py, ...), never in a
    test module or a conftest that another test module imports."""
    root = Path(__file__).resolve().parents[1]
    pattern = re.compile(r"^\s*(from|import)\s+tests\.(\w+\.)*(test_\w+|conftest)\b", re.MULTILINE)
    offenders = [f"{path.relative_to(root)}: {match.group(0).strip()}" for path in sorted(root.rglob("*.py"))
                 for match in pattern.finditer(path.read_text())]
    assert offenders == []


def test_the_command_kind_imports_no_torch_even_in_its_job():
    code = """
import sys
from jobs.command import run
from collect.command import tables
assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))[:5]
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
