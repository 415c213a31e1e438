"""JSON text sealed by its writer: a reader may trust it is as written, without checking it again.

The text is a JSON object, one top-level key per line, each value compact; its first line is
the seal, an HMAC-SHA256 of the text after that line keyed by the user's own secret (seal_key).
A file whose seal holds is byte for byte what this user's `plan` or `status` wrote
(orchestrator.plan.plan writes plan.json so, after checking every cell; the status cache is written
so too); one edited by hand, damaged, written before keyed seals, or sealed by anyone else (a
labmate who can write the results dir cannot compute the seal) is not sealed, and its reader
checks it whole or ignores it. Where the key cannot be had (an unwritable home, a key file
another user could read), nothing is sealed: every plan is checked whole, the cache not kept.
"""
from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import secrets
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

SEAL = "seal"
KEY_ENV = "ORCHESTRATOR_SEAL_KEY"  # the key file's path, instead of ~/.config/orchestrator/seal.key
_KEY_HEX = 64  # 32 random bytes, in hex


def sealed_text(data: Mapping[str, Any]) -> str:
    """The file's text: the seal's line, then a line per key (sorted), each value compact. With no
    key, the seal is empty: no reader trusts it."""
    rest = ",\n".join(f"{json.dumps(key)}: {_compact(data[key])}" for key in sorted(data)) + "\n}\n"
    return f'{{"{SEAL}": "{_digest(rest.encode())}",\n{rest}'


def is_sealed(text: bytes) -> bool:
    """The text after the first line is what this user wrote under that line's seal."""
    first, _, rest = text.partition(b"\n")
    seal = _digest(rest)
    return bool(seal) and hmac.compare_digest(first, f'{{"{SEAL}": "{seal}",'.encode())


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _digest(data: bytes) -> str:
    key = seal_key()
    return hmac.new(key, data, hashlib.sha256).hexdigest() if key else ""


def key_path() -> Path:
    """Where the user's seal key lives: $ORCHESTRATOR_SEAL_KEY, else the config dir's seal.key."""
    if os.environ.get(KEY_ENV):
        return Path(os.environ[KEY_ENV]).expanduser()
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "orchestrator" / "seal.key"


def seal_key() -> Optional[bytes]:
    """The user's secret (made on first use, mode 0600); None where it cannot be made or read,
    or where the file is not this user's own private regular file (then it is no secret)."""
    return _key_at(str(key_path()))


@functools.cache
def _key_at(path: str) -> Optional[bytes]:
    """The key at `path`, made where there is none and made again where this user's own private file
    holds no key (empty, cut short); where none can be had, why is said once, on stderr."""
    key, why = _read_key(path)
    if key is None and why in (MISSING, CORRUPT):
        _make_key(Path(path), replace=why == CORRUPT)
        key, why = _read_key(path)
        why = f"none could be made at {path}: its dir is not writable" if why == MISSING else why
    if key is None:
        print(f"warning: no seal key ({why}): plans and the status cache are checked whole on every read "
              f"(slower); fix: remove {path} and rerun (a new key is made), or set {KEY_ENV} to a file of yours",
              file=sys.stderr)
    return key


MISSING, CORRUPT = "missing", "corrupt"  # the two a new key mends


def _read_key(path: str) -> tuple[Optional[bytes], str]:
    """The key, or None and why not: MISSING, CORRUPT (this user's private file, without a key), or a
    sentence naming the file and what is wrong with it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None, MISSING if not os.path.lexists(path) else f"{path} is a link to nowhere"
    except OSError as exc:
        link = os.path.islink(path)
        return None, f"{path} is a symbolic link (a key is never read through one)" if link else \
            f"{path} cannot be read or made ({exc.strerror})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, f"{path} is not a regular file"
        if info.st_uid != os.geteuid():
            return None, f"{path} belongs to uid {info.st_uid}, not you"
        if info.st_mode & 0o077:
            return None, f"{path} is mode {info.st_mode & 0o777:04o}: others may read it (chmod 600 {path})"
        data = os.read(fd, _KEY_HEX + 1).strip()
    except OSError as exc:
        return None, f"{path}: {exc.strerror}"
    finally:
        os.close(fd)
    return (data, "") if len(data) == _KEY_HEX else (None, CORRUPT)


def _make_key(path: Path, replace: bool = False) -> None:
    """A new key, written whole under a temporary name and linked into place (two processes
    making one at once: the first link wins, both read that one); with `replace`, renamed over a
    corrupt one (the last rename wins: seals made with the other are then checked whole)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(_KEY_HEX // 2) + "\n")
        if replace:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)
    except OSError:
        pass  # made by another process meanwhile, or not writable: the read says which
    finally:
        tmp.unlink(missing_ok=True)
