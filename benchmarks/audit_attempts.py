"""Issue 36's audit, rerun: each attempt builds a small results dir from the tests' factories, damages
it as the audit did, runs the CLI in this process and checks what a user relies on (one `error:` line
and exit 2 for a bad file, never a traceback; a CI guard that fails on a broken run; nothing raw from
another user's files on the console or in Markdown). One line per attempt, then the count that hold.

    PYTHONPATH=. python benchmarks/audit_attempts.py [-k WORD]

Item 7 (partial sets answered wrongly) is another issue's; item 6's unreadable dirs need root (they
are run as the user nobody) and are skipped otherwise.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import collect.compare  # noqa: E402,F401  (imported before any fork: the other user may not read site-packages)
import collect.compare.guard  # noqa: E402,F401
import collect.compare.plot  # noqa: E402,F401
import collect.report  # noqa: E402,F401
from orchestrator.cli import main  # noqa: E402
from tests.collect.dirs import DDP, JITTER, SINGLE, hw5_results, repeats  # noqa: E402
from tests.factories import cell, ptq_cell, ptq_result, train_result, write_results  # noqa: E402

HOSTILE = ("2.5.1\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J<script>alert(1)</script>\n# heading "
           "[x](javascript:alert(1)) ![t](https://evil.example/t.png)")
RAW = ("\x1b", "\x07", "<script>", "\n# heading", "[x](javascript:", "![t](https:")


@dataclass
class Ran:
    code: int
    out: str
    err: str
    crash: str  # the exception's last line where the CLI raised one (a traceback for a user)


def cli(*argv, cwd: Path | None = None) -> Ran:
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    crash, code = "", 0
    try:
        if cwd:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException:  # noqa: BLE001 (what a user would see as a traceback)
        crash = traceback.format_exc().strip().splitlines()[-1]
        code = -1
    finally:
        os.chdir(here)
    return Ran(code, out.getvalue(), err.getvalue(), crash)


def one_error(r: Ran, *words: str) -> str:
    """"" when `r` is one error line holding `words`, exit 2; else what it was."""
    lines = r.err.strip().splitlines()
    if r.crash or r.code != 2 or len(lines) != 1 or not lines[0].startswith("error:") or not all(w in r.err for w in words):
        return f"exit {r.code}, {r.crash or r.err.strip()[:160]!r}"
    return ""


def exits(r: Ran, code: int, *words: str) -> str:
    if r.crash or r.code != code or not all(w in r.err + r.out for w in words):
        return f"exit {r.code} (want {code}), {r.crash or r.err.strip()[:160]!r}"
    return ""


def clean(r: Ran) -> str:
    return f"exit {r.code}, {r.crash or r.err.strip()[:160]!r}" if r.crash or r.code not in (0, 1) else ""


def edit(results: Path, where: str, value, nth: int = 0) -> Path:
    """The nth ok result file that has the entry at `where` ("epochs.0.accuracy"), that entry set to `value`."""
    *keys, last = where.split(".")
    found = 0
    for path in sorted(results.glob("*.json")):
        data = json.loads(path.read_text())
        node = data
        try:
            for key in keys:
                node = node[int(key)] if isinstance(node, list) else node[key]
        except (KeyError, IndexError, TypeError):
            continue
        if path.name == "plan.json" or data["status"] != "ok" or node is None or found < nth:
            found += path.name != "plan.json" and data["status"] == "ok" and node is not None
            continue
        node[int(last) if isinstance(node, list) else last] = value
        path.write_text(json.dumps(data))
        return path
    raise LookupError(f"no result with {where}")


def label(value) -> str:
    return "10**400" if value == 10**400 else repr(value)


def with_accuracy(accuracy: float, runs: int = 3, **fields):
    return [train_result(cell(repeat=r, **dict(SINGLE, **fields)), epoch_s=10.0 * JITTER[r], train_s=8.0 * JITTER[r],
                         test_accuracies=[accuracy / 2, accuracy]) for r in range(runs)]


def baseline(tmp: Path) -> Path:
    return write_results(tmp / "a", with_accuracy(0.81) + repeats(DDP, 6.0))


def guard(tmp: Path, b_results, a: Path | None = None) -> Ran:
    a = a or baseline(tmp)
    return cli("collect", "--results", write_results(tmp / "b", b_results), "--compare", a, "--fail-on", "slower:5%")


def hw5(tmp: Path) -> Path:
    return write_results(tmp / "h", hw5_results(), study="hw5")


Attempt = tuple[str, str, Callable[[Path], str]]


def registrar(attempts: list[Attempt]):
    """A decorator `@attempt(item, name)` that adds its check to `attempts` (each audit script keeps its own)."""
    def attempt(item: str, name: str):
        def register(check: Callable[[Path], str]) -> Callable[[Path], str]:
            attempts.append((item, name, check))
            return check
        return register
    return attempt


ATTEMPTS: list[Attempt] = []
attempt = registrar(ATTEMPTS)


# --- 1: --fail-on as a CI guard ------------------------------------------------------------------------

for _name, _b, _said in [
    ("every cell of B OOM", lambda: [train_result(cell(repeat=r, **c), "oom") for c in (SINGLE, DDP) for r in range(3)],
     "OOM more than in A"),
    ("one of three repeats now OOM", lambda: with_accuracy(0.81, 2) + [train_result(cell(repeat=2, **SINGLE), "oom")]
     + repeats(DDP, 6.0), "1 OOM more"),
    ("a repeat vanished", lambda: with_accuracy(0.81, 2) + repeats(DDP, 6.0), "1 of 3 runs vanished"),
    ("test accuracy collapsed to 0.0", lambda: with_accuracy(0.0) + repeats(DDP, 6.0), "collapsed"),
    ("test accuracy no longer measured", lambda: repeats(SINGLE, 10.0) + repeats(DDP, 6.0), "collapsed"),
    ("a failed cell in B", lambda: with_accuracy(0.81) + repeats(DDP, 6.0, status="failed"), "failed more"),
]:
    attempt("1", f"--fail-on: {_name}")(lambda tmp, b=_b, said=_said: exits(guard(tmp, b()), 1, said))

for _name, _b in [("an empty B", lambda: []), ("B of another kind", lambda: [ptq_result(ptq_cell(repeat=r)) for r in range(3)])]:
    attempt("1", f"--fail-on: {_name} compares nothing")(
        lambda tmp, b=_b: exits(guard(tmp, b()), 2, "nothing was compared"))


@attempt("1", "--fail-on: one run a side, 2x slower")
def _one_run(tmp: Path) -> str:
    a = write_results(tmp / "a", repeats(SINGLE, 10.0, runs=1))
    return exits(guard(tmp, repeats(SINGLE, 20.0, runs=1), a), 2, "one run a side")


@attempt("1", "--fail-on: --study of another study is refused")
def _study(tmp: Path) -> str:
    a = baseline(tmp)
    b = write_results(tmp / "b", with_accuracy(0.81) + repeats(DDP, 6.0))
    return one_error(cli("collect", "--study", "lab", "--results", b, "--compare", a, "--fail-on", "slower:5%"),
                     "not 'lab'")


@attempt("1", "--fail-on: the default runs/quick, absent")
def _default(tmp: Path) -> str:
    return one_error(cli("collect", "--compare", baseline(tmp), "--fail-on", "slower:5%", cwd=tmp), "no results dir")


@attempt("1", "--fail-on: an unchanged set passes")
def _passes(tmp: Path) -> str:
    return exits(guard(tmp, with_accuracy(0.81) + repeats(DDP, 6.0)), 0)


# --- 2: escapes -------------------------------------------------------------------------------------

def hostile_sets(tmp: Path) -> tuple[Path, Path]:
    env = {"gpu_model": "GPU\x1b[31m", "torch": HOSTILE, "hostnames": ["n1"], "driver": HOSTILE}
    a = write_results(tmp / "a", [train_result(cell(repeat=r, **SINGLE), epoch_s=10 * JITTER[r], env=env)
                                  for r in range(3)])
    return a, write_results(tmp / "b", repeats(SINGLE, 10.0))


@attempt("2", "compare's console: the other set's environment")
def _compare_console(tmp: Path) -> str:
    a, b = hostile_sets(tmp)
    r = cli("collect", "--results", b, "--compare", a)
    return clean(r) or ("raw ESC or BEL on the console" if "\x1b" in r.out + r.err or "\x07" in r.out else "")


@attempt("2", "compare.md: <script>, a heading, a javascript: link, a remote image")
def _compare_md(tmp: Path) -> str:
    a, b = hostile_sets(tmp)
    r = cli("collect", "--results", b, "--compare", a, "--report", "--out", tmp / "out")
    md = (tmp / "out" / "compare.md").read_text() if (tmp / "out" / "compare.md").exists() else ""
    return clean(r) or ("no compare.md" if not md else ", ".join(repr(x) for x in RAW if x in md))


@attempt("2", "plain collect: console, answers.md and tables.md")
def _collect_escapes(tmp: Path) -> str:
    results = hw5_results()
    results[0].env = dict(results[0].env, torch=HOSTILE)
    results[-1] = train_result(cell("ddp", 8192, 4, epochs=5, timed_epoch=5, warmup_epochs=2, lr_scaling="linear"),
                               "failed", error=HOSTILE)
    d = write_results(tmp / "h", results, study="hw5")
    r = cli("collect", "--results", d, "--report", "--tables")
    md = "".join((d / name).read_text() for name in ("answers.md", "tables.md", "report.md") if (d / name).exists())
    raw = [repr(x) for x in RAW if x in md] + ["ESC on the console"] * ("\x1b" in r.out + r.err)
    return clean(r) or ", ".join(raw)


@attempt("2", "status: a failed cell's hostile error text")
def _status_escapes(tmp: Path) -> str:
    d = write_results(tmp / "s", [train_result(cell(**SINGLE), "failed", error=HOSTILE)])
    r = cli("status", "--results", d)
    return clean(r) or ("raw ESC or BEL on the console" if "\x1b" in r.out + r.err or "\x07" in r.out + r.err else "")


# --- 3-5: results checked on read ---------------------------------------------------------------------

@attempt("3", "a result's cell edited (batch 32 -> 128)")
def _cell_edited(tmp: Path) -> str:
    d = hw5(tmp)
    path = next(p for p in sorted(d.glob("*.json")) if p.name != "plan.json" and
                json.loads(p.read_text())["cell"]["batch_per_gpu"] == 32)
    data = json.loads(path.read_text())
    data["cell"]["batch_per_gpu"] = 128
    path.write_text(json.dumps(data))
    return one_error(cli("collect", "--results", d), path.name, "cell_id")


@attempt("3", "status: a result's cell edited")
def _status_edited(tmp: Path) -> str:
    d = write_results(tmp / "s", repeats(SINGLE, 10.0, runs=1))
    path = edit(d, "cell.batch_per_gpu", 32)
    r = cli("status", "--results", d)
    return exits(r, 2, path.name, "cell_id")


@attempt("3", "one file copied under two other ids")
def _copies(tmp: Path) -> str:
    a = write_results(tmp / "a", repeats(SINGLE, 10.0, runs=1))
    b = write_results(tmp / "b", repeats(SINGLE, 20.0, runs=1))
    source = next(p for p in b.glob("*.json") if p.name != "plan.json")
    for other in ("0123456789ab", "ba9876543210"):
        (b / f"{other}.json").write_text(json.dumps(dict(json.loads(source.read_text()), cell_id=other)))
    return one_error(cli("collect", "--results", b, "--compare", a), "not the id of its cell")


BAD_VALUES = [  # (item, where, value): each makes one error line naming the field
    ("4", "epochs.0.accuracy", 1.5), ("4", "epochs.1.accuracy", -0.2), ("4", "timed.epoch_s", -3.0),
    ("4", "gpu_util.util_median_pct", 250.0), ("4", "peak_mem_gib", -1.0), ("4", "epochs.0.images_per_s", -5),
    ("5", "timed.train_s", 0), ("5", "epochs.1.epoch_s", 0), ("5", "epochs.1.epoch_s", -1.0),
    ("5", "epochs.1.epoch_s", "Infinity"), ("5", "epochs.0.epoch", None), ("5", "timed.epoch", "2"),
    ("5", "epochs.0.images", 10**400), ("5", "timed.epoch_s", 10**400), ("5", "gpu_util.util_median_pct", 10**400),
    ("5", "peak_mem_gib", 10**400), ("5", "epochs.1.loss", "a string"), ("8", "timed.epoch_s", 1e300),
    ("8", "timed.epoch_s", 1e-300), ("8", "timed.epoch_s", 5e-324), ("8", "epochs.1.images_per_s", 5e-324),
    ("8", "comm.busbw_gbps", 1e300), ("9", "peak_mem_gib", 1e24),
]
for _item, _where, _value in BAD_VALUES:
    @attempt(_item, f"{_where} = {label(_value)}")
    def _bad(tmp: Path, where=_where, value=_value) -> str:
        d = hw5(tmp)
        path = edit(d, where, value)
        field = where.split(".")[-1]
        return one_error(cli("collect", "--results", d), path.name, field) or \
            one_error(cli("collect", "--results", d, "--json"), path.name, field)


@attempt("8", "compare of 1e300 against 1e-300 (both refused on read)")
def _extremes(tmp: Path) -> str:
    a = write_results(tmp / "a", repeats(SINGLE, 10.0))
    b = write_results(tmp / "b", repeats(SINGLE, 10.0))
    edit(a, "timed.epoch_s", 1e300)
    edit(b, "timed.epoch_s", 1e-300)
    return one_error(cli("collect", "--results", b, "--compare", a, "--json"), "epoch_s")


def q7_with_zero(tmp: Path, accuracy: float) -> Path:
    results = [r for r in hw5_results() if not (r.cell["engine"] == "ddp" and r.cell["batch_per_gpu"] == 512
                                                and r.cell["gpus_per_node"] == 4 and r.cell["epochs"] == 2)]
    results.append(train_result(cell("ddp", 512, 4), test_accuracies=[0.4, 0.8]))
    results.append(train_result(cell("ddp", 512, 4, broadcast_buffers=False), test_accuracies=[accuracy, accuracy]))
    return write_results(tmp / "h", results, study="hw5")


@attempt("5", "test accuracy 0.0 in the gradients-only cell (a diverged run)")
def _q7_zero(tmp: Path) -> str:
    d = q7_with_zero(tmp, 0.0)
    return clean(cli("collect", "--results", d)) or clean(cli("collect", "--results", d, "--json"))


@attempt("5", "training accuracy 0 in every epoch of a 5-epoch run")
def _train_zero(tmp: Path) -> str:
    results = hw5_results()
    five = [r for r in results if r.cell["epochs"] == 5 and r.status == "ok"]
    for r in five:
        for e in r.body.epochs:
            e.accuracy = 0.0
    d = write_results(tmp / "h", results, study="hw5")
    return clean(cli("collect", "--results", d)) or clean(cli("collect", "--results", d, "--json"))


@attempt("9", "a NaN loss (the usual divergence) is read, and Q4.2 says diverged")
def _nan_loss(tmp: Path) -> str:
    results = hw5_results()
    for r in results:
        if r.cell["epochs"] == 5 and r.cell["lr_scaling"] == "linear" and not r.cell["warmup_epochs"] and r.status == "ok":
            r.body.epochs[-1].loss = float("nan")
    d = write_results(tmp / "h", results, study="hw5")
    r = cli("collect", "--results", d)
    return clean(r) or ("" if "Linear scaling diverged" in " ".join(r.out.split()) else "Q4.2 does not say diverged")


# --- 6: dirs you cannot read (as the user nobody) ------------------------------------------------------------

def as_nobody(argv: list) -> Ran:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.dup2(write, 1)
        os.dup2(write, 2)
        code = 99
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os.chdir("/")
            code = main([str(a) for a in argv])
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code if isinstance(code, int) else 2)
    os.close(write)
    data = b""
    while chunk := os.read(read, 65536):
        data += chunk
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    text = data.decode()
    return Ran(code, "", text, "Traceback" if "Traceback" in text or code == 99 else "")


for _mode, _verb in [(0o000, "collect"), (0o000, "status"), (0o000, "compare"), (0o311, "collect"), (0o311, "compare")]:
    @attempt("6", f"results dir of mode {_mode:04o}: {_verb}")
    def _unreadable(tmp: Path, mode=_mode, verb=_verb) -> str:
        if os.geteuid() != 0:
            return "skipped: needs root"
        tmp.chmod(0o755)
        a, b = (write_results(tmp / n, repeats(SINGLE, 10.0)) for n in ("a", "b"))
        for d in (a, b):
            for p in d.iterdir():
                p.chmod(0o644)
        b.chmod(mode)
        argv = {"collect": ["collect", "--results", b], "status": ["status", "--results", b],
                "compare": ["collect", "--results", a, "--compare", b, "--fail-on", "slower:5%"]}[verb]
        try:
            return one_error(as_nobody(argv), "chmod a+rx")
        finally:
            b.chmod(0o755)


# --- 10-13 ---------------------------------------------------------------------------------------------

def seal_said(tmp: Path, make: Callable[[Path], Path]) -> str:
    from results_format import sealed_json as sealed

    key = make(tmp)
    os.environ[sealed.KEY_ENV] = str(key)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            sealed.sealed_text({"a": 1})
            sealed.sealed_text({"b": 2})
    finally:
        del os.environ[sealed.KEY_ENV]
    return "" if err.getvalue().count("warning: no seal key") == 1 else f"said {err.getvalue().count('warning')} times"


def _key(text: str, mode: int) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        key = tmp / "seal.key"
        key.write_text(text)
        key.chmod(mode)
        return key
    return make


def _link(tmp: Path) -> Path:
    (tmp / "real").write_text("0" * 64)
    (tmp / "seal.key").symlink_to(tmp / "real")
    return tmp / "seal.key"


def _directory(tmp: Path) -> Path:
    (tmp / "seal.key").mkdir()
    return tmp / "seal.key"


for _name, _make in [("mode 0644", _key("0" * 64, 0o644)), ("a symlink", _link), ("a directory", _directory)]:
    attempt("10", f"seal key {_name} is said once")(lambda tmp, make=_make: seal_said(tmp, make))


@attempt("10", "a corrupt seal key (63 characters) is replaced")
def _corrupt_key(tmp: Path) -> str:
    from results_format import sealed_json as sealed

    key = _key("0" * 63, 0o600)(tmp)
    os.environ[sealed.KEY_ENV] = str(key)
    try:
        ok = sealed.is_sealed(sealed.sealed_text({"a": 1}).encode())
    finally:
        del os.environ[sealed.KEY_ENV]
    return "" if ok and len(key.read_text().strip()) == 64 else "not replaced"


for _flag in (["--question", "Q1"], ["--sort", "epoch_s"], ["--top", "3"], ["--tables"], ["--findings"]):
    @attempt("11", f"--compare with {_flag[0]} is refused")
    def _refused(tmp: Path, flag=_flag) -> str:
        a, b = (write_results(tmp / n, repeats(SINGLE, 10.0)) for n in ("a", "b"))
        return one_error(cli("collect", "--results", b, "--compare", a, *flag), flag[0])


@attempt("11", "a FIFO result under --compare: one warning line")
def _fifo(tmp: Path) -> str:
    a, b = (write_results(tmp / n, repeats(SINGLE, 10.0)) for n in ("a", "b"))
    os.mkfifo(a / "0123456789ab.json")
    r = cli("collect", "--results", b, "--compare", a)
    return clean(r) or ("" if r.err.startswith("warning:") and len(r.err.splitlines()) == 1 else repr(r.err[:160]))


@attempt("12", "--threshold 1000 names its limit")
def _threshold(tmp: Path) -> str:
    return exits(cli("collect", "--compare", tmp, "--threshold", "1000"), 2, "below 1000")


@attempt("12", "schema_version 2 files are not told to rerun submit")
def _schema(tmp: Path) -> str:
    d = hw5(tmp)
    for n in range(2):
        edit(d, "schema_version", 2, n)
    r = cli("collect", "--results", d)
    return one_error(r, "upgrade it") or ("told to rerun submit" if "rerun `submit`" in r.err.split("The first")[0] else "")


@attempt("12", "collect of an empty dir")
def _empty(tmp: Path) -> str:
    (tmp / "e").mkdir()
    return one_error(cli("collect", "--results", tmp / "e"), "no plan and no results") or \
        ("wrote files" if any((tmp / "e").iterdir()) else "")


@attempt("13", "--report never writes through a plots link")
def _plots_link(tmp: Path) -> str:
    d = hw5(tmp)
    (tmp / "outside").mkdir()
    (d / "plots").symlink_to(tmp / "outside")
    r = cli("collect", "--results", d, "--report")
    return one_error(r, "symbolic link") or ("wrote outside" if any((tmp / "outside").iterdir()) else "")


def main_(argv=None, attempts: list[tuple[str, str, Callable[[Path], str]]] = ATTEMPTS) -> int:
    """Run `attempts` (this audit's, or another's: audit45_attempts.py) and count those that hold."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only attempts whose item or name holds this")
    args = parser.parse_args(argv)
    os.environ["COLUMNS"] = "100"
    held = ran = 0
    for item, name, check in attempts:
        if args.k and args.k not in f"{item} {name}":
            continue
        tmp = Path(tempfile.mkdtemp(prefix="audit-"))
        try:
            why = check(tmp)
        except Exception:  # noqa: BLE001 (the attempt itself broke: counted as not holding)
            why = "attempt raised " + traceback.format_exc().strip().splitlines()[-1]
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        if why.startswith("skipped"):
            print(f"  skip  {item:>3}  {name}: {why}")
            continue
        ran += 1
        held += not why
        print(f"{'  held' if not why else 'BROKEN'}  {item:>3}  {name}" + (f": {why}" if why else ""), flush=True)
    print(f"{held} of {ran} attempts hold")
    return 0 if held == ran else 1


if __name__ == "__main__":
    sys.exit(main_())
