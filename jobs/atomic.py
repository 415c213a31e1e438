"""Files replaced whole or not at all: a reader sees the old file or the new one, never half."""
from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Iterator


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
