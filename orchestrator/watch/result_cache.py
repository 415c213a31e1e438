"""What status needs of each result file, read once and kept while the file stays the same.

Status, submit and the GPU-hour ledger need of a result only its ResultDigest: its status, why it
ended, its run's clock and nodes, and its epochs' images and seconds (the measured pace). A
result file is read whole and checked (jobs.core.result.read_result) the first time; its ResultDigest
is then kept in the results dir's status cache (STATUS_CACHE) under the file's identity: inode,
size, modification and change times. A result is replaced by a rename (a new inode, new times),
so a rewritten file never matches its old entry and is read again; a file changed within
RACY_S of the cache being written is not kept (its times may not have moved yet). The cache is
only a shortcut, sealed (results_format.sealed_json): damaged or edited, it is ignored; unwritable (a
read-only results dir), it is not written; deleting it costs one slow status.
"""
from __future__ import annotations

import datetime as dt
import json
import math
import os
import time
from pathlib import Path
from typing import Any, NamedTuple, Optional

from jobs.core.atomic import write_bytes_atomic
from jobs.core.layout import STATUS_CACHE
from jobs.core.regular_file import CACHE_MAX, NotRegular, TooLarge, read_regular
from jobs.core.result import NotRegularFile, Result, ResultError, Status, read_result
from results_format.sealed_json import is_sealed, sealed_text

CACHE_VERSION = 3  # 3: the device a result ran on
RACY_S = 2.0


class ResultDigest(NamedTuple):
    """What status and the ledger need of one result (a NamedTuple: 100,000 of them are cheap)."""

    status: Status
    error: Optional[str] = None  # why it failed, or the OOM's message
    started_at: Optional[str] = None  # the run's own clock (env), ISO: which attempt wrote it
    run_s: Optional[float] = None  # env's ended_at - started_at; None where it has not both
    nodes: tuple[str, ...] = ()  # SLURM's node names (env)
    images: int = 0  # every epoch's images, summed
    epoch_s: float = 0.0  # every epoch's wall seconds, summed
    in_epochs_s: Optional[float] = None  # of run_s, the job's seconds in its epochs (its phases); None before phases
    device: Optional[str] = None  # env's: "cuda" where the cell ran on GPUs, "cpu"; None where not recorded

    @classmethod
    def of(cls, result: Result) -> ResultDigest:
        env = result.env
        epochs = list(getattr(result.body, "epochs", None) or [])
        phases = result.phases  # the task's start to its result; before phases, the job's first line to its end
        run_s = phases.total_s() if phases is not None else _seconds(env)
        return cls(Status(result.status), result.error, _text(env.get("started_at")), run_s,
                   tuple(env.get("nodes") or ()), sum(e.images for e in epochs), sum(e.epoch_s for e in epochs),
                   phases.epochs_s if phases is not None else None, _text(env.get("device")))

    @property
    def is_answer(self) -> bool:
        return self.status.is_answer


def _seconds(env: dict[str, Any]) -> Optional[float]:
    try:
        start, end = (dt.datetime.fromisoformat(env[k]) for k in ("started_at", "ended_at"))
        return (end - start).total_seconds()
    except (KeyError, TypeError, ValueError):  # a time missing, unreadable, or one with a zone and one without
        return None


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def digest(result: Any) -> Any:
    """A Result's ResultDigest; a ResultDigest, a ResultError or None as it is."""
    return ResultDigest.of(result) if isinstance(result, Result) else result


Key = tuple[int, int, int, int]  # st_ino, st_size, st_mtime_ns, st_ctime_ns


class ResultCache:
    """The result files of a results dir, each read when it is new or changed (kept in memory
    across refreshes, and in the status cache across processes)."""

    def __init__(self, results_dir: Path) -> None:
        self.results_dir = Path(results_dir)
        self.kept: Optional[dict[str, tuple[Key, ResultDigest]]] = None  # loaded from the cache on first use
        self.skipped_files: list[str] = []  # why each result file that is no regular file was not read
        self.cache_refused = ""  # why the status cache was not read (no regular file): said once, then replaced

    def read(self, cell_ids: tuple[str, ...]) -> dict[str, ResultDigest | ResultError]:
        """Each of these cells' result: its ResultDigest, or the error reading it (absent cells and
        files that are no regular file are left out: `skipped_files` says which)."""
        if self.kept is None:
            self.kept = self._load()
        kept = self.kept
        planned = frozenset(cell_ids)
        present = [(name[:-5], entry) for name, entry in self._listed().items() if name[:-5] in planned]
        out: dict[str, ResultDigest | ResultError] = {}
        changed = not kept.keys() <= {cell_id for cell_id, _ in present}  # a file gone (or of an old plan)
        changed = changed or bool(self.cache_refused)
        self.skipped_files = [self.cache_refused] if self.cache_refused else []
        for cell_id, entry in present:
            try:
                stat = entry.stat()
            except OSError as exc:  # a link to nothing, or a loop of links: said, as a FIFO is
                self.skipped_files.append(f"result file {entry.path} cannot be read ({exc.strerror}); skipped it: "
                                          "move it aside")
                continue
            key = (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
            known = kept.get(cell_id)
            if known is not None and known[0] == key:
                out[cell_id] = known[1]
                continue
            kept.pop(cell_id, None)
            changed = True
            try:
                found = ResultDigest.of(read_result(Path(entry.path)))
            except NotRegularFile as exc:
                self.skipped_files.append(str(exc))
                continue
            except ResultError as exc:
                out[cell_id] = exc
                continue
            kept[cell_id] = (key, found)
            out[cell_id] = found
        if changed:
            for cell_id in kept.keys() - out.keys():
                del kept[cell_id]
            self._save()
        return out

    def _listed(self) -> dict[str, os.DirEntry]:
        try:
            with os.scandir(self.results_dir) as entries:
                return {e.name: e for e in entries if e.name.endswith(".json")}
        except OSError:
            return {}

    def _load(self) -> dict[str, tuple[Key, ResultDigest]]:
        """The cache's entries; none when it is absent, not sealed or of another version."""
        try:
            text = read_regular(self.results_dir / STATUS_CACHE, "status cache", CACHE_MAX)
            data = json.loads(text) if is_sealed(text) else {}
            if data.get("version") != CACHE_VERSION:
                return {}
            statuses = {s.value: s for s in Status}
            return {cell_id: ((ino, size, mtime, ctime),
                              ResultDigest(statuses[status], error, started, run_s, tuple(nodes), images, epoch_s,
                                      in_epochs_s, device))
                    for cell_id, (ino, size, mtime, ctime, status, error, started, run_s, nodes, images, epoch_s,
                                  in_epochs_s, device) in data["files"].items()}
        except (NotRegular, TooLarge) as exc:
            self.cache_refused = f"{exc}; not used (status writes a new one in its place)"
            return {}
        except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return {}

    def _save(self) -> None:
        """Write the cache, leaving out files changed within RACY_S (and a non-finite figure, which
        strict JSON cannot hold: that file is read again); never fails status."""
        assert self.kept is not None
        recent = time.time_ns() - int(RACY_S * 1e9)
        files = {cell_id: [*key, *found] for cell_id, (key, found) in self.kept.items()
                 if key[2] < recent and math.isfinite(found.epoch_s) and math.isfinite(found.run_s or 0.0)
                 and math.isfinite(found.in_epochs_s or 0.0)}
        try:
            write_bytes_atomic(self.results_dir / STATUS_CACHE,
                               sealed_text({"version": CACHE_VERSION, "files": files}).encode())
            self.cache_refused = ""
        except OSError:
            pass  # a read-only results dir: the next status reads the files again
