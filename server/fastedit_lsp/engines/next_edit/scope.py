"""Python scopes from the block structure: the function around a line, where a variable is used
in it, whether a point is code or string, and whether an edit adds a syntax error.

Pure. Nothing here parses a whole document (``ast`` costs ~13 µs a line: 60 ms for 5,000 lines, more
than a suggestion may take): the innermost ``def`` around a line is found from indentation (Python's
blocks), its lines are read as tokens knowing which lie inside a multi-line string, and only the
innermost statement block around an edit is parsed with ``ast`` to check it.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field

from ...core.document import Point
from .lines import Lines, Prediction, content, texts
from .tokens import code_lines, indentation, opens_string, scan_row, string_state

#: A block longer than this is not parsed for the syntax check.
MAX_PARSED_LINES = 400
#: How far up the engine looks for the ``def`` around a line.
MAX_SCAN = 2000
_CLOSERS = (")", "]", "}")
#: Clauses that continue the compound statement above them at the same indentation.
_CLAUSES = ("elif ", "elif(", "else:", "else :", "except", "finally", "case ")


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


def block_end(lines: Lines, start: int, *, clauses: bool = False) -> int:
    """The line after the block opened by the compound statement at ``start`` (with its
    ``elif``/``else``/``except``/``finally`` clauses when ``clauses``)."""
    level = indentation(lines.line(start))
    stop = min(lines.line_count, start + MAX_SCAN)
    raws = texts(lines, start + 1, stop)
    for row, offset, _ in code_lines(lines, range(start + 1, stop), every=True):
        text = raws[row - start - 1]
        if offset or not _code(text) or text.lstrip().startswith(_CLOSERS):
            continue  # inside a string, blank, a comment, or a closing bracket
        width = indentation(text)
        if width <= level:
            if clauses and width == level and text.lstrip().startswith(_CLAUSES):
                continue
            return row
    return stop


@dataclass
class RenameSites:
    """What :func:`rename_sites` found: the first uses of the old name from the point on and
    before it (in order, at most ``limit`` each), and whether the new name is used off the lines
    the rename already reached."""

    after: list[Point] = field(default_factory=list)
    before: list[Point] = field(default_factory=list)
    new_in_use: bool = False


def rename_sites(
    lines: Lines,
    rows: range,
    names: tuple[str, str],
    here: Point,
    renamed: set[int],
    limit: int,
) -> RenameSites:
    """Where ``old`` and ``new`` are used as variables in ``rows`` (a name token that is not an
    attribute, not a keyword argument's name, not in a string or a comment), in one pass that
    costs the rows' substring tests: only rows where a name stands as a whole word are
    tokenized (and those around multi-line strings, to follow them), those holding ``old`` only
    until ``limit`` uses on each side of ``here`` are known, and the pass stops as soon as
    ``new`` is found in use off the ``renamed`` lines (no rename then)."""
    old, new = names
    old_word = _word(old)
    new_word = _word(new)
    found = RenameSites()
    open_quote: str | None = None
    for row, text in enumerate(texts(lines, rows.start, rows.stop), rows.start):
        room = (row >= here.line and len(found.after) < limit) or (
            row <= here.line and len(found.before) < limit
        )
        want_old = room and old in text and old_word.search(text) is not None
        want_new = row not in renamed and new in text and new_word.search(text) is not None
        if not (want_old or want_new):
            if '"""' in text or "'''" in text:
                open_quote = string_state(content(text), open_quote)[1]
            continue  # else a row wholly inside a string (open_quote) stays so
        _, toks, open_quote = scan_row(content(text), open_quote)
        if not toks:
            continue
        signature = toks[0].text in ("def", "async")
        for index, tok in enumerate(toks):
            if tok.kind != "name" or tok.text not in names:
                continue
            before = toks[index - 1].text if index else ""
            after = toks[index + 1].text if index + 1 < len(toks) else ""
            if before == "." or (not signature and after == "=" and before in ("(", ",")):
                continue
            if tok.text == new:
                if want_new:
                    found.new_in_use = True
                    return found
                continue
            point = Point(row, tok.col)
            side = found.after if point >= here else found.before
            if want_old and len(side) < limit:
                side.append(point)
    return found


@functools.lru_cache(maxsize=64)
def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


def _top_statement(lines: Lines, line: int) -> int:
    start = line
    while start > 0 and (indentation(lines.line(start)) > 0 or not _code(lines.line(start))):
        start -= 1
    return start


def in_code(lines: Lines, point: Point) -> bool:
    """Whether ``point`` is code, not inside a multi-line string (a docstring's example) or a
    comment (a one-line string is code: a rewrite may start at its quote)."""
    found = enclosing_def(lines, point.line)
    start = found[0] if found is not None else _top_statement(lines, point.line)
    text = lines.line(point.line)
    for row, offset, toks in code_lines(lines, range(start, point.line + 1), text, every=True):
        if row == point.line:
            if point.col < offset:
                return False  # inside a string that closes on this line
            for tok in toks:
                if tok.col <= point.col < tok.end:
                    return tok.kind != "comment" and not (
                        tok.col < point.col and opens_string(tok) is not None
                    )
            return offset < len(text) or not text.strip()
    return True


def innermost_block(lines: Lines, line: int) -> tuple[int, int]:
    """The smallest compound statement around ``line`` (with its clauses), else its top-level
    statement: the lines the syntax check parses."""
    level = indentation(lines.line(line)) if _code(lines.line(line)) else 1 << 30
    header = None
    for index in range(line - 1, max(-1, line - MAX_SCAN), -1):
        above = lines.line(index)
        if not _code(above) or above.lstrip().startswith(_CLOSERS):
            continue
        if indentation(above) < level:
            header = index
            break
    if header is None:
        start = _top_statement(lines, line)
        end = line + 1
        while end < lines.line_count and (
            indentation(lines.line(end)) > 0
            or not _code(lines.line(end))
            or lines.line(end).lstrip().startswith(_CLOSERS)
        ):
            end += 1
        return start, end
    width = indentation(lines.line(header))
    while lines.line(header).lstrip().startswith(_CLAUSES):
        for index in range(header - 1, max(-1, header - MAX_SCAN), -1):
            above = lines.line(index)
            if _code(above) and indentation(above) <= width:
                header = index
                break
        else:
            break
        if indentation(lines.line(header)) < width:
            break
    return header, block_end(lines, header, clauses=True)


def adds_syntax_error(lines: Lines, prediction: Prediction) -> bool:
    """Whether applying ``prediction`` makes its block stop parsing (a block that did not parse
    before cannot be judged, and is not held against the edit)."""
    first, last = prediction.start.line, prediction.end.line
    start, end = innermost_block(lines, first)
    end = max(end, last + 1)
    if end - start > MAX_PARSED_LINES:
        return False
    before = [lines.line(i) for i in range(start, end)]
    head = before[first - start][: prediction.start.col]
    tail = before[last - start][prediction.end.col :]
    after = before[: first - start] + (head + prediction.text + tail).split("\n")
    after += before[last - start + 1 :]
    width = indentation(before[0])
    return _parses(before, width) and not _parses(after, width)


def _parses(block: list[str], width: int) -> bool:
    source = "\n".join(t[width:] if t[:width].strip() == "" else t.lstrip() for t in block)
    try:
        ast.parse(source + "\n")
    except (SyntaxError, ValueError):
        return False
    return True
