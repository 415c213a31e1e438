"""A table as text (Grid), and the Grid rendered as a rich console table, Markdown and LaTeX.

Nothing here computes: numbers arrive as text from each kind's grids (collect.<kind>.grids).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from jobs.core.result import Status
from results_format.states import CellState
from results_format.text import visible

MAX_WIDTH = 320  # characters: wider tables are squeezed by rich


@dataclass(frozen=True)
class Grid:
    """A table for people: title, caption (units, timed epoch, GPU, repeats), header, rows,
    and the formulas that produce its numbers; `empty` says why it has no rows."""

    key: str
    title: str
    caption: str
    header: list[str]
    rows: list[list[str]]
    formulas: list[str] = field(default_factory=list)
    empty: str = ""
    text_columns: tuple[int, ...] = (0,)  # left-aligned; the rest are numbers, right-aligned
    more: str = ""  # the rows left out of a large table, and where they are (collect.view)
    fit: bool = False  # on the console, fit the terminal: its text columns wrap, its numbers never do

    def notes(self) -> list[str]:
        """What is said above the caption: why there are no rows, else which rows are left out."""
        return [text for text in (self.empty or self.more,) if text]


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value, digits: int = 2) -> str:
    """Fixed decimals; three significant digits for a value too small for them (tiny test
    runs); "-" for a value that is not there."""
    if _missing(value):
        return "-"
    if value and abs(value) < 0.5 * 10 ** -digits:
        return f"{value:.2e}"
    return f"{value:.{digits}f}"


def seconds(value) -> str:
    """Two decimals; three below one second (tiny test runs)."""
    if _missing(value):
        return "-"
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.3f}"


def percent(value, digits: int = 1) -> str:
    """A fraction (0..1) as a percentage."""
    return "-" if _missing(value) else f"{100 * value:.{digits}f}%"


def console_text(text: str) -> Text:
    """A text for the console, as text: never markup ("[pipeline=fast]"), a control character shown
    as its escape (an error's ESC sequences, results_format.text.visible)."""
    return Text(visible(text))


def to_rich(grid: Grid, widths: Optional[list[int]] = None) -> Table:
    """The grid as a rich table, at its natural width, or each column at `widths` (its text wrapped)."""
    caption = "\n".join(grid.notes() + [grid.caption] + grid.formulas)
    table = Table(title=console_text(grid.title), caption=console_text(caption), caption_justify="left",
                  min_width=min(len(grid.title) + 4, MAX_WIDTH))  # a table of no row keeps its title on one line
    for i, name in enumerate(grid.header):
        text = i in grid.text_columns
        table.add_column(console_text(name), justify="left" if text else "right", width=widths[i] if widths else None,
                         no_wrap=widths is not None and not text)
    for row in grid.rows:
        table.add_row(*(console_text(text) for text in row))
    return table


def fitted_widths(grid: Grid, width: int) -> list[int]:
    """Each column's width for a grid that fits `width` (Grid.fit; rich's default box: a border and
    two spaces a column): its numbers and header whole; its text columns share what is left, each at
    least its longest word, the rest given in proportion to how much each would take unwrapped."""
    natural, least = [], []
    for i, name in enumerate(grid.header):
        cells = [row[i] for row in grid.rows]
        natural.append(max([len(name), *map(len, cells)]))
        words = [w for text in cells for w in text.split()] if i in grid.text_columns else cells
        least.append(max([len(name), *map(len, words)]))
    spare = width - (3 * len(natural) + 1) - sum(least)
    want = [n - m for n, m in zip(natural, least, strict=True)]
    if spare >= sum(want):
        return natural
    share = max(spare, 0) / sum(want)
    return [m + int(w * share) for m, w in zip(least, want, strict=True)]


def print_grids(console: Console, grids) -> None:
    """Each grid at its natural width even on a narrow terminal: a number is never cut short
    (the terminal wraps a long line; a log file keeps it whole). A grid that fits (Grid.fit) is
    printed at the terminal's width, its text columns wrapped, wider only where its numbers and
    longest words need it."""
    terminal = console.width
    for grid in grids:
        widths = fitted_widths(grid, terminal) if grid.fit else None
        table = to_rich(grid, widths)
        needed = (sum(widths) + 3 * len(widths) + 1) if widths else \
            Measurement.get(console, console.options.update(max_width=MAX_WIDTH), table).maximum
        console.width = max(terminal, min(needed, MAX_WIDTH))  # print() alone crops to the console's width
        console.print(table)
    console.width = terminal


def print_details(console: Console, answers) -> None:
    """Each answer's details (collect.details: from the record its paragraph is worded from), after
    the answers: each "question  line", as text."""
    if not any(a.details for a in answers):
        return
    console.print(Text("Details, from the records the answers are worded from (`collect --json` lists them with "
                       "the numbers and the table rows they come from):", style="bold"))
    table = Table.grid(padding=(0, 2))  # the question, then its line wrapped beside it
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    for a in answers:
        for line in a.details:
            table.add_row(console_text(a.id), console_text(line))
    console.print(table)


_MD_SPECIAL = {"\\": "\\\\", "`": "\\`", "[": "\\[", "]": "\\]", "|": "\\|", "<": "&lt;", ">": "&gt;", "&": "&amp;",
               "\n": " "}


def md_text(text: str) -> str:
    """A text in Markdown (tables.md, report.md) as the same text, on one line: no HTML (< > &
    as entities), no link, image or code span ([ ] ` escaped), no column break (|), control
    characters shown as their escapes. The one escape of every text written into Markdown."""
    return "".join(_MD_SPECIAL.get(ch, ch) for ch in visible(text))


def md_code(text: str) -> str:
    """A text as a Markdown code span (a formula): shown literally, so only its backticks (which
    would end the span) and control characters change."""
    return "`" + visible(text).replace("`", "'").replace("\n", " ") + "`"


def to_markdown(grid: Grid, level: str = "###") -> str:
    lines = [f"{level} {md_text(grid.title)}", "", f"_{md_text(grid.caption)}_", ""]
    if grid.empty:
        lines += [f"**{md_text(grid.empty)}**", ""]
    else:
        lines += [f"**{md_text(grid.more)}**", ""] if grid.more else []
        lines.append("| " + " | ".join(md_text(h) for h in grid.header) + " |")
        lines.append("|" + "|".join("---" if i in grid.text_columns else "---:" for i, _ in enumerate(grid.header)) + "|")
        lines += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in grid.rows]
        lines.append("")
    lines += [f"- {md_code(formula)}" for formula in grid.formulas]
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "−": "-", "×": r"$\times$", "Δ": r"$\Delta$", "≤": r"$\le$"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def to_latex(grid: Grid) -> str:
    """A table environment (booktabs, graphicx): the caption and formulas under the tabular."""
    lines = [r"\begin{table}[htbp]", r"\centering", r"\caption{" + latex_escape(grid.title) + "}",
             r"\label{tab:" + grid.key + "}"]
    if grid.empty:
        lines.append(r"\emph{" + latex_escape(grid.empty) + "}")
    else:
        align = "".join("l" if i in grid.text_columns else "r" for i in range(len(grid.header)))
        lines += [r"\resizebox{\textwidth}{!}{%", r"\begin{tabular}{" + align + "}",
                  r"\toprule", " & ".join(latex_escape(h) for h in grid.header) + r" \\", r"\midrule"]
        lines += [" & ".join(latex_escape(c) for c in row) + r" \\" for row in grid.rows]
        lines += [r"\bottomrule", r"\end{tabular}}"]
    notes = ([grid.more] if grid.more and not grid.empty else []) + [grid.caption] + grid.formulas
    lines.append(r"\par\smallskip\footnotesize " + r" \\ ".join(latex_escape(n) for n in notes))
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


LATEX_PREAMBLE = "% Needs \\usepackage{booktabs} and \\usepackage{graphicx}; \\input{tables.tex} in the report.\n"


# A cell's status in the order views list them: a result's (answers first, then what went wrong),
# then a cell without one, in results_format.states' words (as `status` shows them)
STATUS_RANK: dict[str, int] = {status: rank for rank, status in enumerate(
    (Status.OK, Status.OOM, Status.TIMEOUT, Status.FAILED, CellState.PENDING, CellState.SKIPPED,
     CellState.NOT_SUBMITTED))}
NO_BASELINE = "not in study"  # a table's row whose baseline cell the study does not hold
STATUS_TEXT: dict[str, str] = ({status: str(status) for status in STATUS_RANK if status != Status.OK}
                               | {Status.OOM: "OOM", NO_BASELINE: NO_BASELINE})  # how tables show them


def status_text(status: str) -> str:
    return STATUS_TEXT.get(status, str(status))


def signed(value, digits: int) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:+.{digits}f}"


def print_answers(console: Console, answers) -> None:
    """Each answer (collect.questions.Answered): its id and title in bold, then its paragraph, as text."""
    for answer in answers:
        console.print(Text(visible(f"{answer.id}  {answer.question.title}"), style="bold"))
        console.print(console_text(answer.text))
        console.print()


def evidence_text(answer) -> str:
    """"table q1 rows 0, 1, 2; table q4 row 3": where an answer's numbers come from."""
    rows: dict[str, list[int]] = {}
    for e in answer.record.evidence:
        rows.setdefault(e.table, []).append(e.row)
    return "; ".join(f"table {t} row{'s' if len(r) > 1 else ''} {', '.join(map(str, sorted(set(r))))}"
                     for t, r in rows.items())


def answers_markdown(title: str, answers, grids) -> str:
    """answers.md: each answer under its question, with its tables, ready to edit into a hand-in."""
    by_key = {g.key: g for g in grids}
    lines = [f"# {md_text(title)}", "", "Written by `python -m orchestrator collect` from the result files; each number is "
             "from the table beneath its answer (the rows in brackets).", ""]
    for a in answers:
        lines += [f"## {a.id}: {md_text(a.question.title)}", "", md_text(a.text), "", f"_Evidence: {md_text(evidence_text(a))}_"
                  if a.record.evidence else "", ""]
        lines += [to_markdown(by_key[key], "###") for key in a.question.tables if key in by_key]
    return "\n".join(lines)
