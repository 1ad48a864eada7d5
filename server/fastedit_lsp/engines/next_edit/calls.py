"""Carry an added argument: the user added one argument to a call; the next call of the same
function with the same arguments as that call had gets it too, in the same place.

A keyword argument goes at the end of any call of the function that does not pass it yet; a
positional one only into calls with as many positional arguments as the edited call had.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...core.document import Point
from .lines import LineDiff, Lines, Prediction, char_span, window_order
from .scope import in_code
from .tokens import tokens

#: How many lines a call's arguments may span.
MAX_CALL_LINES = 30
_KEYWORD = re.compile(r"^(\w+)\s*=(?!=)")


@dataclass(frozen=True)
class Arg:
    start: Point
    end: Point
    text: str


@dataclass(frozen=True)
class Call:
    open: Point  # just after "("
    close: Point  # at ")"
    args: list[Arg]
    trailing_comma: bool


def parse_call(lines: Lines, line: int, col: int) -> Call | None:
    """The call whose "(" is at ``(line, col)``."""
    depth = 0
    args: list[Arg] = []
    start: Point | None = None
    last_end: Point | None = None
    parts: list[str] = []
    trailing = False
    for row in range(line, min(lines.line_count, line + MAX_CALL_LINES)):
        text = lines.line(row)
        for tok in tokens(text):
            if row == line and tok.col < col:
                continue
            if tok.kind == "comment":
                continue
            if tok.text in ("(", "[", "{"):
                depth += 1
                if depth == 1:
                    continue
            elif tok.text in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    if start is not None and last_end is not None:
                        args.append(Arg(start, last_end, "".join(parts)))
                        trailing = False
                    return Call(Point(line, col + 1), Point(row, tok.col), args, trailing)
            elif tok.text == "," and depth == 1:
                if start is not None and last_end is not None:
                    args.append(Arg(start, last_end, "".join(parts)))
                start, last_end, parts, trailing = None, None, [], True
                continue
            if depth <= 0:
                return None
            if start is None:
                start = Point(row, tok.col)
                trailing = False
            elif last_end is not None and last_end.line == row and tok.col > last_end.col:
                parts.append(" ")
            parts.append(tok.text)
            last_end = Point(row, tok.end)
    return None


@dataclass(frozen=True)
class AddedArgument:
    callee: str
    method: bool
    text: str
    #: The argument's index among the call's arguments; None for a keyword argument (last).
    index: int | None
    #: How many arguments the call had before.
    count: int


def added_argument(lines: Lines, diff: LineDiff) -> AddedArgument | None:
    """The argument the line's change added to a call, if that is all it did."""
    if diff.old_mid or not diff.new_mid:
        return None  # not tokens inserted between tokens
    i, j, k = char_span(diff.old, diff.new)
    if j != i:
        return None
    inserted = diff.new[i:k]
    text = inserted.strip().strip(",").strip()
    if not text or "," in _top_level(text) or not _balanced(text):
        return None
    toks = tokens(diff.old)
    depth = 0
    open_index = None
    for index in range(len(toks) - 1, -1, -1):
        tok = toks[index]
        if tok.col >= i:
            continue
        if tok.text in (")", "]", "}"):
            depth += 1
        elif tok.text in ("(", "[", "{"):
            if depth == 0:
                open_index = index
                break
            depth -= 1
    if open_index is None or toks[open_index].text != "(" or open_index == 0:
        return None
    callee = toks[open_index - 1]
    if not callee.is_identifier:
        return None
    if open_index >= 2 and toks[open_index - 2].text in ("def", "class"):
        return None
    method = open_index >= 2 and toks[open_index - 2].text == "."
    call = parse_call(_One(diff.old), 0, toks[open_index].col)
    if call is None or call.close.line != 0:
        return None
    keyword = _KEYWORD.match(text)
    if keyword:
        return AddedArgument(callee.text, method, text, None, len(call.args))
    index = sum(1 for a in call.args if a.end.col <= i)
    return AddedArgument(callee.text, method, text, index, len(call.args))


def carry_argument(
    lines: Lines, diff: LineDiff, added: AddedArgument, cursor: Point, python: bool
) -> Prediction | None:
    name = re.escape(added.callee)
    pattern = re.compile(rf"\.{name}\s*\(" if added.method else rf"(?<![\w.]){name}\s*\(")
    keyword = _KEYWORD.match(added.text)
    for row in window_order(lines, diff.line, cursor.line):
        text = lines.line(row)
        if added.callee not in text:
            continue
        for match in pattern.finditer(text):
            paren = match.end() - 1
            toks = tokens(text)
            at = next((t for t in toks if t.col == paren), None)
            if at is None or at.text != "(":
                continue  # inside a string or a comment
            name_col = match.start() + (1 if added.method else 0)
            index = next((n for n, t in enumerate(toks) if t.col == name_col), 0)
            if index and toks[index - 1].text in ("def", "class"):
                continue
            call = parse_call(lines, row, paren)
            if call is None:
                continue
            edit = _insertion(call, added, keyword)
            if edit is not None and (not python or in_code(lines, edit.start)):
                return edit
    return None


def _insertion(
    call: Call, added: AddedArgument, keyword: re.Match[str] | None
) -> Prediction | None:
    texts = [a.text for a in call.args]
    if added.text in texts or any(t.startswith("*") for t in texts):
        return None
    if keyword is not None:
        if any((m := _KEYWORD.match(t)) and m.group(1) == keyword.group(1) for t in texts):
            return None
        index = len(call.args)
    else:
        if len(call.args) != added.count or added.index is None:
            return None
        index = added.index
    if index == 0:
        text = added.text + (", " if call.args else "")
        return Prediction(call.open, call.open, text, "argument")
    at = call.args[index - 1].end
    return Prediction(at, at, ", " + added.text, "argument")


def _top_level(text: str) -> str:
    """``text`` with everything inside brackets and strings removed."""
    depth = 0
    out = []
    for tok in tokens(text):
        if tok.text in ("(", "[", "{"):
            depth += 1
        elif tok.text in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and tok.kind != "string":
            out.append(tok.text)
    return " ".join(out)


def _balanced(text: str) -> bool:
    depth = 0
    for tok in tokens(text):
        if tok.kind == "string" and tok.text[-1:] not in ("'", '"'):
            return False
        if tok.text in ("(", "[", "{"):
            depth += 1
        elif tok.text in (")", "]", "}"):
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


class _One:
    """One line as :class:`Lines`."""

    def __init__(self, text: str) -> None:
        self.text = text

    @property
    def line_count(self) -> int:
        return 1

    def line(self, index: int) -> str:
        return self.text
