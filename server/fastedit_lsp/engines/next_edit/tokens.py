"""One line of code as tokens: names, numbers, strings, comments and punctuation.

Pure and cheap: a single regular expression per line, no ``tokenize`` (which needs whole
statements and costs ~50x more). A string that does not close on its line runs to the line's end;
what the engines ask of a line (which identifier sits where, where a call's parentheses are) does
not need more.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from typing import Literal, NamedTuple, Protocol

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


def opens_string(tok: Token) -> str | None:
    """The triple quote a string token opens without closing on its line, if any."""
    if tok.kind != "string":
        return None
    body = tok.text.lstrip("rRbBuUfF")
    quote = body[:3]
    if quote not in ('"""', "'''"):
        return None
    return None if len(body) >= 6 and body.endswith(quote) else quote


def scan_row(text: str, open_quote: str | None) -> tuple[int, list[Token], str | None]:
    """Tokens of a line that may start inside a multi-line string: (where code starts, its
    tokens, the quote still open at the end)."""
    offset = 0
    if open_quote is not None:
        close = text.find(open_quote)
        if close < 0:
            return len(text), [], open_quote
        offset = close + 3
    toks = tokens(text[offset:])
    if offset:
        toks = [Token(t.kind, t.text, t.col + offset) for t in toks]
    return offset, toks, (opens_string(toks[-1]) if toks else None)


def string_state(text: str, open_quote: str | None) -> tuple[int, str | None]:
    """``(where code starts, the quote open at the end)`` of a line, as :func:`scan_row` says,
    without tokenizing the lines that are common around multi-line strings: a docstring's
    opening or closing line, with nothing that could be another string or a comment after."""
    offset, quote, rest = 0, open_quote, ""
    if open_quote is not None:
        close = text.find(open_quote)
        if close < 0:
            return len(text), open_quote
        offset, rest = close + 3, text[close + 3 :]
    else:
        stripped = text.lstrip()
        body = stripped.lstrip("rRbBuUfF")
        quote = body[:3]
        if len(stripped) - len(body) > 2 or quote not in ('"""', "'''"):
            return scan_row(text, open_quote)[::2]
        close = body.find(quote, 3)
        if close < 0:
            return 0, quote
        rest = body[close + 3 :]
    if "'" in rest or '"' in rest or "#" in rest:
        return scan_row(text, open_quote)[::2]
    return offset, None


def code_lines(
    lines: LinesLike, rows: range, needle: str | None = None, *, every: bool = False
) -> Iterator[tuple[int, int, list[Token]]]:
    """``(row, where its code starts, its tokens)`` for each row holding ``needle``, knowing which
    lines lie inside a multi-line string (code starts after the string closes; a row wholly
    inside one starts at its end). ``rows`` must start outside any string. Only lines with a
    triple quote are tokenized to follow strings, so another row costs a substring test. With
    ``every``, every row is yielded (the tokens only of those holding ``needle``)."""
    open_quote: str | None = None
    raw = getattr(lines, "raw_lines", None)
    texts = raw(rows.start, rows.stop) if raw is not None else map(lines.line, rows)
    for row, text in zip(rows, texts, strict=False):
        wanted = needle is not None and needle in text
        if not wanted and '"""' not in text and "'''" not in text:
            if open_quote is None:
                if every:
                    yield row, 0, []
                continue
            if open_quote not in text:
                if every:
                    yield row, len(text.rstrip("\r\n")), []
                continue
        if not wanted:
            offset, open_quote = string_state(text.rstrip("\r\n"), open_quote)
            if every:
                yield row, offset, []
            continue
        offset, toks, open_quote = scan_row(text.rstrip("\r\n"), open_quote)
        yield row, offset, toks


class LinesLike(Protocol):
    def line(self, index: int) -> str: ...
