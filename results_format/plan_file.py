"""plan.json's cells, as a table: small at 100,000 cells.

`plan` writes plan.json (orchestrator.plan.plan, sealed: results_format.sealed_json); `submit`, `status` and
`collect` read it. Its cells are a table: the fields every cell holds alike once ("shared"),
then each cell's other fields ("own") and its id ("ids"), in plan order. A plan written before
tables has "cells" as a list of every cell's fields: still read.
"""
from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any



def cells_table(cells: Sequence[Mapping[str, Any]], ids: Sequence[str]) -> dict[str, Any]:
    """{"ids", "shared", "own"}: each field that every cell holds alike (same type, same value)
    once, and each cell's other fields."""
    shared: dict[str, Any] = {}
    for key, value in (cells[0].items() if cells else ()):
        try:
            values = list(map(operator.itemgetter(key), cells))
        except KeyError:
            continue
        if values.count(value) == len(values) and set(map(type, values)) == {type(value)}:
            shared[key] = value
    own = [{k: v for k, v in c.items() if k not in shared} for c in cells]
    return {"ids": list(ids), "shared": shared, "own": own}


def cell_dicts(cells: Any) -> list[dict[str, Any]]:
    """Every cell's fields, from plan.json's "cells": a table, or the list of a plan written
    before tables. A value of the wrong shape raises TypeError naming it."""
    if isinstance(cells, list):
        if not all(isinstance(c, dict) for c in cells):
            raise TypeError("cells must be a list of objects")
        return cells
    if not isinstance(cells, dict) or set(cells) != {"ids", "shared", "own"}:
        raise TypeError("cells must be an object of ids, shared and own")
    shared, own = cells["shared"], cells["own"]
    if not isinstance(shared, dict):
        raise TypeError("cells.shared must be an object")
    if not isinstance(own, list) or not all(isinstance(c, dict) for c in own):
        raise TypeError("cells.own must be a list of objects")
    return [{**shared, **c} for c in own]


def stored_ids(cells: Any) -> list[str]:
    """The ids a table of cells holds, one per cell (a plan written before tables has none)."""
    ids = cells.get("ids") if isinstance(cells, dict) else None
    own = cells.get("own") if isinstance(cells, dict) else None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise TypeError("cells.ids must be a list of cell ids")
    if not isinstance(own, list) or len(ids) != len(own):
        raise TypeError("cells.ids must hold one id per cell of cells.own")
    return ids
