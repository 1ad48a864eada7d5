"""One line of code as tokens: names, numbers, strings, comments and punctuation.

Pure and cheap: a single regular expression per line, no ``tokenize`` (which needs whole
statements and costs ~50x more). A string that does not close on its line runs to the line's end;
what the engines ask of a line (which identifier sits where, where a call's parentheses are) does
not need more.
"""

from __future__ import annotations

import keyword
import re
from typing import Literal, NamedTuple

Kind = Literal["name", "number", "string", "comment", "op"]

_TOKEN = re.compile(
    r"""
    (?P<string>(?:[rRbBuUfF]{1,2})?(?:'''.*?'''|\"\"\".*?\"\"\"|'''|\"\"\"|'(?:[^'\\\n]|\\.)*'?|"(?:[^"\\\n]|\\.)*"?))
  | (?P<comment>\#.*)
  | (?P<name>[^\W\d]\w*)
  | (?P<number>\d[\w.]*|\.\d[\w.]*)
  | (?P<op>\*\*=?|//=?|->|:=|<<=?|>>=?|[-+*/%@&|^=<>!]=|[^\s\w])
    """,
    re.VERBOSE,
)
#: Names that are syntax, not identifiers a user renames (Python's, plus the common constants).
KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


class Token(NamedTuple):
    """A token of one line: its kind, its text and its start column (code points)."""

    kind: Kind
    text: str
    col: int

    @property
    def end(self) -> int:
        return self.col + len(self.text)

    @property
    def is_identifier(self) -> bool:
        return self.kind == "name" and self.text not in KEYWORDS


def tokens(line: str) -> list[Token]:
    """The tokens of one line (whitespace dropped)."""
    out: list[Token] = []
    for match in _TOKEN.finditer(line):
        kind = match.lastgroup
        text = match.group()
        if kind == "string" and text.endswith(("'''", '"""')) and len(text) <= 5:
            # A triple quote opening a multi-line string: the rest of the line is its text.
            text = line[match.start() :]
            out.append(Token("string", text, match.start()))
            break
        out.append(Token(kind, text, match.start()))  # type: ignore[arg-type]
    return out


def is_identifier(text: str) -> bool:
    return text.isidentifier() and text not in KEYWORDS


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))
