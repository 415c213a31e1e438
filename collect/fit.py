"""The one rule that fits a table (Grid) to the console's width, for every view that prints one
(collect's tables, --compare's, plan's arrays and cells): numbers and header words are never cut;
the row names wrap at words before the headers do; a table still too wide is folded into parts
of fewer columns, each repeating the row names."""
from __future__ import annotations

import dataclasses

from rich.console import Console
from rich.table import Table

from collect.render import Grid, console_text

NATURAL = 320  # characters: to_rich without widths lays a grid out at its natural width, up to this


def _border(columns: int) -> int:
    return 3 * columns + 1  # rich's default box: a rule and two spaces a column, and the last rule


def _longest_word(text: str) -> int:
    return max(map(len, text.split()), default=0)


def natural_widths(grid: Grid) -> list[int]:
    """Each column unwrapped: its header or its longest cell."""
    return [max([len(name), *(len(row[i]) for row in grid.rows)]) for i, name in enumerate(grid.header)]


def least_widths(grid: Grid) -> list[int]:
    """Each column's narrowest: its header's longest word (a header wraps at words), its longest
    number whole, a text column's longest word."""
    least = []
    for i, name in enumerate(grid.header):
        cells = [row[i] for row in grid.rows]
        shortest = map(_longest_word, cells) if i in grid.text_columns else map(len, cells)
        least.append(max([_longest_word(name), *shortest]))
    return least


def _share(least: list[int], natural: list[int], columns: list[int], spare: int) -> tuple[list[int], int]:
    """`columns` widened from `least` towards `natural` by `spare` characters, in proportion to
    what each lacks; the widths and what is left of `spare`."""
    widths = list(least)
    want = sum(natural[i] - least[i] for i in columns)
    if want <= spare:
        for i in columns:
            widths[i] = natural[i]
        return widths, spare - want
    for i in columns:
        widths[i] += int((natural[i] - least[i]) * max(spare, 0) / want)
    return widths, 0


def fitted_widths(grid: Grid, width: int) -> list[int]:
    """Each column's width within `width`: every column at least its narrowest (least_widths);
    of the rest, the text columns (the rows' names) take what they need unwrapped first, then the
    other columns share what is left, in proportion to how much more each takes unwrapped."""
    natural, least = natural_widths(grid), least_widths(grid)
    text = [i for i in range(len(natural)) if i in grid.text_columns]
    widths, spare = _share(least, natural, text, width - _border(len(natural)) - sum(least))
    numbers = [i for i in range(len(natural)) if i not in grid.text_columns]
    return _share(widths, natural, numbers, spare)[0]


def _chunks(values: list, parts: int) -> list[list]:
    size, extra = divmod(len(values), parts)
    bounds = [0]
    for n in range(parts):
        bounds.append(bounds[-1] + size + (n < extra))
    return [values[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def _groups(header: list[str], values: list[int]) -> list[list[int]]:
    """The value columns in runs that share their header's first word (Table 1's "b=32 time (s)",
    "b=32 speedup", ...): a part keeps a run whole where it can. Each column alone where none do."""
    runs: list[list[int]] = []
    for i in values:
        word = header[i].split()[0] if header[i].split() else ""
        if runs and word and header[runs[-1][-1]].split()[:1] == [word]:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs if any(len(run) > 1 for run in runs) else [[i] for i in values]


def _parts(least: list[int], keys: list[int], values: list[int], width: int, header: list[str]) -> list[list[int]]:
    """The value columns in the fewest contiguous parts that fit beside the key columns, as even
    in count as fits, a run of columns about one thing (_groups) kept in one part where it fits
    (a column too wide alone is a part of its own)."""
    base = sum(least[i] for i in keys) + _border(len(keys))

    def fits(part: list[int]) -> bool:
        return len(part) == 1 or base + sum(least[i] + 3 for i in part) <= width

    groups = _groups(header, values)
    if len(groups) < len(values) and all(map(fits, groups)):
        for count in range(1, len(groups) + 1):
            merged: list[list[int]] = [[i for group in chunk for i in group] for chunk in _chunks(groups, count)]
            if all(map(fits, merged)):
                return merged
    for count in range(1, len(values) + 1):
        chunks: list[list[int]] = _chunks(values, count)
        if all(map(fits, chunks)):
            return chunks
    return [[i] for i in values]


def fold(grid: Grid, width: int) -> list[Grid]:
    """The grid as tables that fit `width` (fitted_widths): the grid itself where its columns fit;
    else its columns in parts, in order, each repeating the grid's key columns (Grid.keys: they
    name the rows). The title says which part; the caption and formulas come under the last."""
    least = least_widths(grid)
    keys = list(range(min(grid.keys, len(grid.header))))
    values = list(range(len(keys), len(grid.header)))
    parts = _parts(least, keys, values, width, grid.header) if values else [[]]
    if len(parts) == 1:
        return [grid]
    out = []
    for n, part in enumerate(parts, 1):
        columns = sorted(keys + part)
        last = n == len(parts)
        out.append(dataclasses.replace(
            grid, title=f"{grid.title} ({n} of {len(parts)})", header=[grid.header[i] for i in columns],
            rows=[[row[i] for i in columns] for row in grid.rows],
            text_columns=tuple(columns.index(i) for i in grid.text_columns if i in columns),
            caption=grid.caption if last else "", formulas=grid.formulas if last else [],
            more=grid.more if n == 1 else ""))
    return out


def to_rich(grid: Grid, widths: list[int] | None = None, width: int = NATURAL) -> Table:
    """The grid as a rich table (no caption: fitted_table's caller prints it below, at the console's
    width), at its natural width, or each column at `widths`, its text and header wrapped at words."""
    table = Table(title=console_text(grid.title), min_width=min(len(grid.title) + 4, width))
    for i, name in enumerate(grid.header):
        text = i in grid.text_columns
        table.add_column(console_text(name), justify="left" if text else "right",
                         width=widths[i] if widths else None, overflow="fold")
    for row in grid.rows:
        table.add_row(*(console_text(text) for text in row))
    return table


def print_grids(console: Console, grids) -> None:
    """Each grid within the console's width (fold, fitted_widths), then its notes, caption and
    formulas, wrapped at that width."""
    width = console.width
    for grid in grids:
        for part in fold(grid, width):
            console.print(to_rich(part, fitted_widths(part, width), width))
            caption = "\n".join(part.notes() + [part.caption] + part.formulas)
            if caption.strip():
                console.print(console_text(caption.strip("\n")))
