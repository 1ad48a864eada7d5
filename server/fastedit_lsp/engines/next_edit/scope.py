"""Python scopes from the syntax tree: the function around a line, the names bound in it, and
whether an edit adds a syntax error to the statement block it lands in.

Pure. The document is never parsed whole (a 10,000-line module costs ~60 ms in ``ast``): the
innermost ``def`` around a line is found from indentation, and that block alone is parsed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ...core.document import Point
from .lines import Lines, Prediction
from .tokens import indentation, tokens

#: A block longer than this is not parsed (its names are found by tokens instead).
MAX_PARSED_LINES = 600
#: How far up the engine looks for the ``def`` around a line.
MAX_SCAN = 2000
_CLOSERS = (")", "]", "}")


def _code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _is_def(stripped: str) -> bool:
    return stripped.startswith(("def ", "async def "))


def enclosing_def(lines: Lines, line: int) -> tuple[int, int] | None:
    """The innermost function around ``line`` (or whose ``def`` line it is): ``[start, end)``."""
    text = lines.line(line)
    if _is_def(text.lstrip()):
        return line, block_end(lines, line)
    level = indentation(text) if _code(text) else 1 << 30
    for index in range(line - 1, max(-1, line - MAX_SCAN), -1):
        above = lines.line(index)
        if not _code(above) or above.lstrip().startswith(_CLOSERS):
            continue
        width = indentation(above)
        if width >= level:
            continue
        stripped = above.lstrip()
        if _is_def(stripped):
            return index, block_end(lines, index)
        if stripped.startswith("class ") or width == 0:
            return None
        level = width
    return None


def block_end(lines: Lines, start: int) -> int:
    """The line after the block opened by the compound statement at ``start``."""
    level = indentation(lines.line(start))
    in_string: str | None = None
    index = start + 1
    for index in range(start + 1, min(lines.line_count, start + MAX_SCAN)):
        text = lines.line(index)
        starts_inside = in_string is not None
        for quote in ('"""', "'''"):
            if in_string in (None, quote) and text.count(quote) % 2 == 1:
                in_string = None if in_string == quote else quote
        if starts_inside or not _code(text) or text.lstrip().startswith(_CLOSERS):
            continue
        if indentation(text) <= level:
            return index
    else:
        return min(lines.line_count, index + 1)
    return index


def _block_source(lines: Lines, start: int, end: int) -> tuple[str, int]:
    width = indentation(lines.line(start))
    out = []
    for index in range(start, end):
        text = lines.line(index)
        out.append(text[width:] if text[:width].strip() == "" else text.lstrip())
    return "\n".join(out) + "\n", width


def _column(line: str, byte_offset: int) -> int:
    if line.isascii():
        return byte_offset
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", "replace"))


def name_sites(lines: Lines, start: int, end: int, name: str) -> list[Point] | None:
    """Where ``name`` is used as a variable in the block ``[start, end)``, from its syntax tree;
    None when the block is too long or does not parse."""
    if end - start > MAX_PARSED_LINES:
        return None
    source, width = _block_source(lines, start, end)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    sites: list[Point] = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Name) and node.id == name) or (
            isinstance(node, ast.arg) and node.arg == name
        ):
            line = start + node.lineno - 1
            text = lines.line(line)
            col = _column(text[width:], node.col_offset) + width
            if text[col : col + len(name)] == name:
                sites.append(Point(line, col))
    return sorted(set(sites))


def token_sites(lines: Lines, rows: range, name: str) -> Iterator[Point]:
    """Where ``name`` appears as a variable by its tokens: not an attribute, not a keyword
    argument's name, not in a string or comment."""
    for line in rows:
        text = lines.line(line)
        if name not in text:
            continue
        toks = tokens(text)
        for index, tok in enumerate(toks):
            if tok.kind != "name" or tok.text != name:
                continue
            before = toks[index - 1].text if index else ""
            after = toks[index + 1].text if index + 1 < len(toks) else ""
            if before == "." or (after == "=" and before in ("(", ",")):
                continue
            yield Point(line, tok.col)


def statement_block(lines: Lines, line: int) -> tuple[int, int]:
    """The lines to parse around ``line``: its function, else its top-level statement."""
    found = enclosing_def(lines, line)
    if found is not None:
        return found
    start = line
    while start > 0 and (indentation(lines.line(start)) > 0 or not _code(lines.line(start))):
        start -= 1
    end = line + 1
    while end < lines.line_count and (
        indentation(lines.line(end)) > 0
        or not _code(lines.line(end))
        or lines.line(end).lstrip().startswith(_CLOSERS)
    ):
        end += 1
    return start, end


def adds_syntax_error(lines: Lines, prediction: Prediction) -> bool:
    """Whether applying ``prediction`` makes its Python block stop parsing (a block that did not
    parse before cannot be judged, and is not held against the edit)."""
    first, last = prediction.start.line, prediction.end.line
    start, end = statement_block(lines, first)
    end = max(end, last + 1)
    if end - start > MAX_PARSED_LINES:
        return False
    before = [lines.line(i) for i in range(start, end)]
    head = before[first - start][: prediction.start.col]
    tail = before[last - start][prediction.end.col :]
    after = before[: first - start] + (head + prediction.text + tail).split("\n")
    after += before[last - start + 1 :]
    width = min((indentation(t) for t in before if _code(t)), default=0)
    return _parses(before, width) and not _parses(after, width)


def _parses(block: list[str], width: int) -> bool:
    source = "\n".join(t[width:] if t[:width].strip() == "" else t.lstrip() for t in block)
    try:
        ast.parse(source + "\n")
    except (SyntaxError, ValueError):
        return False
    return True
