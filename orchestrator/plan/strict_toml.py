"""Study and profile files read strictly: UTF-8 TOML, tables where tables belong, no key the
reader does not know, values of the declared type. Each refusal is a StudyError naming where."""
from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any
from collections.abc import Iterable, Mapping

from orchestrator.errors import StudyError

_TYPES = {"int": (int,), "str": (str,), "float": (int, float)}  # a dataclass field's annotation -> accepted


def read_toml(path: Path) -> tuple[str, dict[str, Any]]:
    """A TOML file's text and its tables."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StudyError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc
    except OSError as exc:
        raise StudyError(f"{path}: cannot read it ({exc.strerror})") from exc
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not valid TOML: {exc}") from exc


def table(where: str, value: Any) -> dict[str, Any]:
    """A copy of `value`, which must be a table."""
    if not isinstance(value, dict):
        raise StudyError(f"{where} must be a table, got {type(value).__name__}")
    return dict(value)


def reject_unknown(where: str, data: Mapping[str, Any], valid: Iterable[str]) -> None:
    valid = set(valid)
    unknown = sorted(set(data) - valid)
    if unknown:
        raise StudyError(f"unknown key(s) {unknown} in {where}; valid keys: {', '.join(sorted(valid))}")


def field_names(spec_class: type) -> set[str]:
    return {f.name for f in dataclasses.fields(spec_class)}


def check_types(where: str, spec: Any) -> None:
    """Each field of the dataclass `spec` holds its annotated type (true is not a number)."""
    for field in dataclasses.fields(spec):
        value = getattr(spec, field.name)
        if not isinstance(value, _TYPES[str(field.type)]) or isinstance(value, bool):
            raise StudyError(f"{where} {field.name} must be of type {field.type}, got {value!r}")
