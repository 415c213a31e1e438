"""JSON text sealed by its writer: a reader may trust it is as written, without checking it again.

The text is a JSON object, one top-level key per line, each value compact; its first line is
the seal, the sha256 of the text after that line. A file whose seal holds is byte for byte what
its writer wrote (orchestrator.plan writes plan.json so, after checking every cell; the status
cache is written so too); one edited by hand, damaged or written before seals is not sealed,
and its reader checks it whole or ignores it.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

SEAL = "seal"


def sealed_text(data: Mapping[str, Any]) -> str:
    """The file's text: the seal's line, then a line per key (sorted), each value compact."""
    rest = ",\n".join(f"{json.dumps(key)}: {_compact(data[key])}" for key in sorted(data)) + "\n}\n"
    return f'{{"{SEAL}": "{_digest(rest.encode())}",\n{rest}'


def is_sealed(text: bytes) -> bool:
    """The text after the first line is what its writer wrote under that line's seal."""
    first, _, rest = text.partition(b"\n")
    return first == f'{{"{SEAL}": "{_digest(rest)}",'.encode()


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
