"""Text that another user or a run can write (a result's error, a path, a cell's name), made safe
to print on a terminal: the one home of that, for the orchestrator's and collect's consoles; and
a message's last line (a traceback's error, a SLURM command's complaint)."""
from __future__ import annotations

import re
from typing import Optional

# C0 and C1 control characters but newline and tab, DEL, and the Unicode controls that reorder
# text (bidirectional overrides and isolates): a terminal acts on them instead of showing them;
# and lone surrogates (a file name that is not UTF-8, in an error), which no file or terminal can encode
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def visible(text: str) -> str:
    """`text` with each control character shown as its escape (ESC as \\x1b, U+202E as \\u202e),
    so that printing it cannot retitle the terminal, clear the screen, reorder a line, or fail to
    encode (a lone surrogate as \\udcff); newlines, tabs and every printable character are kept."""
    return text if text.isprintable() else _CONTROL.sub(_escape, text)  # the first test: C-fast, most texts


def _escape(match: re.Match) -> str:
    char = match.group()
    return repr(char)[1:-1] if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def last_line(text: Optional[str]) -> str:
    """The last line of a message that is not blank (a traceback's error, a SLURM command's complaint), stripped.
    Lines end at newlines only: a carriage return is shown (visible), not taken to hide what came before."""
    lines = [line for line in (text or "").replace("\r\n", "\n").split("\n") if line.strip()]
    return lines[-1].strip() if lines else ""
