"""Files replaced whole or not at all: a reader sees the old file or the new one, never half."""
from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
from pathlib import Path
from typing import Any
from collections.abc import Iterator

NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}  # strict JSON has none: these strings


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary file beside `path` to write; if the block ends without an error, it is
    fsynced and renamed over `path` (and the directory fsynced), else it is removed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _new_file(path.parent, f".{path.name}.")
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _new_file(folder: Path, prefix: str) -> Path:
    """A new empty file, its name `prefix` + a random part + ".tmp". Created with mode 0666 less
    the umask, like any other file (mkstemp's 0600 would hide results from a lab's shared group)."""
    while True:
        path = folder / f"{prefix}{secrets.token_hex(6)}.tmp"
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return path
        except FileExistsError:
            continue


def write_bytes_atomic(path: Path, data: bytes) -> Path:
    with replacing(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_json_atomic(path: Path, data: Any) -> Path:
    """JSON that strict parsers read: a NaN or an infinity (a diverged run's loss) is written as
    the string "NaN", "Infinity" or "-Infinity" (jobs.core.result reads them back as numbers)."""
    text = json.dumps(strict_json(data), indent=1, sort_keys=True, allow_nan=False)
    return write_bytes_atomic(path, text.encode())


def strict_json(value: Any) -> Any:
    """`value` with each NaN or infinity replaced by its string."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value
