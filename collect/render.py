"""A table as text (Grid), and the Grid rendered as Markdown and LaTeX (on the console: collect.fit).

Nothing here computes: numbers arrive as text from each kind's grids (collect.<kind>.grids).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Optional
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from rich.console import Console
from rich.table import Table
from rich.text import Text

from collect.references import Reference, citations, cited
from jobs.core.result import Status
from results_format.states import CellState
from results_format.text import visible

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
    keys: int = 1  # the first columns, which name a row: a table folded to fit (collect.fit) repeats them
    lines: tuple[int, ...] = ()  # the line (0-based) each table row is printed on, where a line holds several
    # rows (Table 1: a setup's batches side by side); empty: row i is line i

    def line_of(self, row: int) -> int:
        """The printed line a table row (Evidence.row) is on, counted from 1 as a reader counts."""
        return (self.lines[row] if row < len(self.lines) else row) + 1

    def notes(self) -> list[str]:
        """What is said above the caption: why there are no rows, else which rows are left out."""
        return [text for text in (self.empty or self.more,) if text]


@dataclass(frozen=True)
class Listing:
    """Code an answer hands in (the assignment asks for the code of some questions): a function that ran,
    its source as the job read it, and the notebook function it does the work of."""

    stands_for: str
    function: str
    source: str


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


SIGNIFICANT = 6  # digits a figure shows at most in fixed notation; beyond them, scientific (2.435e+10)


def fixed(value: float, digits: int, sign: str = "") -> str:
    """`value` with `digits` decimals, fewer where that would show more than SIGNIFICANT
    significant digits (813818.0000 -> 813818), in scientific notation (4 significant digits)
    where its integer part alone has more (a diverged run's loss, 24350340314.7264 -> 2.435e+10)."""
    whole = len(f"{abs(value):.0f}")
    if whole > SIGNIFICANT:
        return f"{value:{sign}.3e}"
    if abs(value) >= 1:
        digits = min(digits, SIGNIFICANT - whole)
    return f"{value:{sign}.{digits}f}"


def number(value, digits: int = 2) -> str:
    """Fixed decimals (fixed: scientific beyond 6 significant digits); three significant digits
    for a value too small for them (tiny test runs); "-" for a value that is not there."""
    if _missing(value):
        return "-"
    if value and abs(value) < 0.5 * 10 ** -digits:
        return f"{value:.2e}"
    return fixed(value, digits)


def gbps(value) -> str:
    """A rate in GB/s: two decimals; three significant digits under 1 GB/s (a CPU's), so no rate reads 0.01."""
    return "-" if _missing(value) else number(value) if abs(value) >= 1 else f"{value:.3g}"


def seconds(value) -> str:
    """Two decimals; three below one second (tiny test runs)."""
    if _missing(value):
        return "-"
    return fixed(value, 2) if abs(value) >= 1 else f"{value:.3f}"


def percent(value, digits: int = 1) -> str:
    """A fraction (0..1) as a percentage."""
    return "-" if _missing(value) else f"{100 * value:.{digits}f}%"


SMALL_COUNT = 1000  # an accuracy over fewer images says how many beside it


def accuracy(value, count) -> str:
    """A fraction of `count` images as a percentage with the decimals that count resolves (one
    image is 100 / count points): 100 images "84%", 1,000 "84.0%", 10,000 "84.00%"; the count
    beside it where under SMALL_COUNT ("84% of 100"). An unknown count: two decimals."""
    if _missing(value):
        return "-"
    text = percent(value, accuracy_digits(count))
    return f"{text} of {int(count):,}" if not _missing(count) and 0 < count < SMALL_COUNT else text


def accuracy_digits(count) -> int:
    """The decimals of a percentage that a fraction of `count` images resolves (one image is 100 / count
    points): 100 -> 0, 1,000 -> 1, 10,000 -> 2; an unknown count: 2."""
    return 2 if _missing(count) or count <= 0 else max(0, math.ceil(math.log10(count)) - 2)


def console_text(text: str) -> Text:
    """A text for the console, as text: never markup ("[pipeline=fast]"), a control character shown
    as its escape (an error's ESC sequences, results_format.text.visible)."""
    return Text(visible(text))


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
    if grid.empty:  # in plain words: no caption of units nor formulas for numbers that are not there
        return "\n".join([f"{level} {md_text(grid.title)}", "", f"**{md_text(grid.empty)}**", ""]) + "\n"
    lines = [f"{level} {md_text(grid.title)}", "", f"_{md_text(grid.caption)}_", ""]
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
    (Status.OK, Status.OOM, Status.TIMEOUT, Status.FAILED, CellState.PENDING, CellState.QUEUED, CellState.SKIPPED,
     CellState.NOT_SUBMITTED))}
NO_BASELINE = "not in study"  # a table's row whose baseline cell the study does not hold
ENDED = (Status.FAILED, Status.TIMEOUT, CellState.CANCELLED)  # a cell that ended with no answer (TA7 15)
# a local submission its queue never started (collect.load): `status` calls it failed where the queue stopped
QUEUED_TEXT = "queued and never started"
STATUS_TEXT: dict[str, str] = ({status: str(status) for status in STATUS_RANK if status != Status.OK}
                               | {Status.OOM: "OOM", NO_BASELINE: NO_BASELINE,  # how tables show them
                                  CellState.QUEUED: QUEUED_TEXT})


def status_text(status: str) -> str:
    return STATUS_TEXT.get(status, str(status))


def signed(value, digits: int) -> str:
    return "-" if value is None or math.isnan(value) else fixed(value, digits, "+")


def print_answers(console: Console, answers) -> None:
    """Each answer (collect.questions.Answered): its id and title in bold, then its paragraph, as text."""
    for answer in answers:
        console.print(Text(visible(f"{answer.id}  {answer.question.title}"), style="bold"))
        console.print(console_text(answer.text))
        console.print()


def table_name(key: str) -> str:
    """A table named by its key in a sentence: "Table 1" (key table1), else "table q4"."""
    return f"Table {key[len('table'):]}" if key.startswith("table") and key[len("table"):].isdigit() else f"table {key}"


def evidence_text(answer, grids=()) -> str:
    """"table q1 rows 1, 2, 3; Table 1 row 4": where an answer's numbers come from, each row the line
    of the printed table (its grid, Grid.line_of) counted from 1 as a reader counts (Evidence.row is the
    CSV's 0-based position)."""
    by_key = {g.key: g for g in grids}
    rows: dict[str, list[int]] = {}
    for e in answer.record.evidence:
        rows.setdefault(e.table, []).append(by_key[e.table].line_of(e.row) if e.table in by_key else e.row + 1)
    return "; ".join(f"{table_name(t)} row{'s' if len(r) > 1 else ''} {', '.join(map(str, sorted(set(r))))}"
                     for t, r in rows.items())


def _with_citations(text: str, escaped: Callable[[str], str], link: Callable[[Reference], str]) -> str:
    """`text` escaped piece by piece, each citation (collect.references.citations) linked to its entry
    in the reference list: a marker as the link, a name followed by its marker."""
    out, at = [], 0
    for start, end, ref in citations(text):
        if start < at:
            continue
        marker = text[start:end] == f"[{ref.number}]"
        out += [escaped(text[at:start]), link(ref) if marker else escaped(text[start:end]) + " " + link(ref)]
        at = end
    return "".join(out + [escaped(text[at:])])


def cited_html(text: str) -> Markup:
    """An answer's text for the HTML report: escaped (markupsafe, as the template's autoescape), its
    citations linked to the reference list."""
    return Markup(_with_citations(text, lambda t: str(escape(t)),
                                  lambda r: f'<a class="cite" href="#{r.anchor}">[{r.number}]</a>'))


def cited_markdown(text: str) -> str:
    """An answer's text in Markdown (md_text), its citations linked to the reference list."""
    return _with_citations(text, md_text, lambda r: f"[\\[{r.number}\\]](#{r.anchor})")


def references_markdown(refs) -> list[str]:
    """The reference list in Markdown, each entry anchored for the answers' links."""
    if not refs:
        return []
    lines = ["## References", "", "Numbered as in the assignment.", ""]
    lines += [f'<a name="{r.anchor}"></a>\\[{r.number}\\] {md_text(r.text)}' + (f" {md_code(r.url)}" if r.url else "")
              + "\n" for r in refs]
    return lines


def md_fence(source: str, language: str = "python") -> str:
    """A code block in Markdown: the text shown literally, inside a fence longer than any run of
    backticks in it (so no text can end the block early); control characters as their escapes."""
    text = "\n".join(visible(line) for line in source.rstrip("\n").split("\n"))
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


NO_CODE = ("No code is printed: these result files were written before the job recorded the code that ran; "
           "run the cells again into a new results dir to record it.")


def code_markdown(record, level: str = "###") -> list[str]:
    """The code an answer hands in (a record's `code`: Listing), each function under a heading that
    names the notebook function it does the work of; NO_CODE where the results hold none."""
    if not hasattr(record, "code"):
        return []
    if not record.code:
        return [f"_{md_text(NO_CODE)}_", ""]
    lines = [f"{level} Code that ran", ""]
    for c in record.code:
        lines += [f"{md_code(c.function)}, for the notebook's {md_code(c.stands_for)}:", "", md_fence(c.source), ""]
    return lines


def answers_markdown(title: str, answers, grids, plot_files: Optional[Mapping[str, list[str]]] = None,
                     status: str = "") -> str:
    """answers.md: each answer under its question, with its tables and their plots (`plot_files`: the
    PNG paths beside it by table key), the code it hands in, and the reference list its citations point
    into; ready to edit into a hand-in. `status`: how many planned cells have a result, said once at the top."""
    by_key = {g.key: g for g in grids}
    plot_files = plot_files or {}
    lines = [f"# {md_text(title)}", "", "Written by `python -m orchestrator collect` from the result files; each number is "
             "from the table beneath its answer (the rows in brackets, counted from 1).", ""]
    lines += [f"**{md_text(status)}**", ""] if status else []
    for a in answers:
        lines += [f"## {a.id}: {md_text(a.question.title)}", "", cited_markdown(a.text), "",
                  f"_Evidence: {md_text(evidence_text(a, grids))}_" if a.record.evidence else "", ""]
        for key in (k for k in a.question.tables if k in by_key):
            lines.append(to_markdown(by_key[key], "###"))
            lines += [f"![{md_text(by_key[key].title)}]({path})\n" for path in plot_files.get(key, [])]
        lines += code_markdown(a.record)
    lines += references_markdown(cited(a.text for a in answers))
    return "\n".join(lines)
