"""What of a model's inline completion is shown at the cursor.

Pure: no pygls, no httpx, no I/O. Used by ``textDocument/inlineCompletion`` and
``textDocument/completion``: the model's text is proposed at a cursor between ``prefix`` (the
document before it) and ``suffix`` (after it), and :func:`finish` turns it into what the editor
shows. The text is the reconciler's (:mod:`fastedit_lsp.prompting.reconcile`): wrappers and
the overlap with the text before and after the cursor are trimmed there, in one place for every
action. Then:

1. :func:`completion_scope`: a single line (mid-line, or after a plain statement) or a block (on an
   otherwise blank line, or right after a block opener such as ``:`` in Python, ``{``, ``(``,
   ``[``, ``=>``).
2. :func:`cut_at_block_boundary`: a line ends at its first line break; a block keeps the lines
   that belong to it (deeper than the opener line, or at least as deep as a blank cursor line),
   ends right after the closer of its opener, at a dedent, or at two blank lines in a row.
3. :func:`balance_brackets`, first half: the text is cut at a closer that matches nothing open.
4. :func:`balance_brackets`, second half: trailing closers that the suffix supplies are dropped.
5. Nothing useful left is ``""``; at the end of a line trailing whitespace goes; line breaks
   become the document's.

No step ever adds text. :func:`has_enough` says when more streamed text could no longer change
the result (the cut point has been seen), so the caller can close the model stream early, and
:func:`stop_sequences` gives the model the same boundaries.

Strings, comments and brackets are read by :mod:`.lexer`. Called on every keystroke and every
streamed chunk, so each scan is linear and bounded (the lexer's windows).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .lexer import (
    BREAK,
    OPENERS,
    PAIR,
    SPACE,
    TAB_WIDTH,
    Cursor,
    Walk,
    apply_bracket,
    scan,
)

Scope = Literal["line", "block"]

_MAX_CLOSERS = 64  # the suffix's leading closers that are read
# What may follow the last closer the suffix supplies: dropped with it.
_AFTER_CLOSER = frozenset(";," + SPACE + "\r\n")
# A rest of line made only of these still lets a completion end the line (auto-paired closers).
_CLOSING_REST = frozenset(")]}\"'`;,.:" + SPACE)


# -- scope ------------------------------------------------------------------------------------


def completion_scope(prefix: str, suffix: str, language_id: str) -> Scope:
    """Single-line or multi-line, decided from the syntax at the cursor."""
    return _scope(Cursor.of(prefix, suffix, language_id))


def _scope(cur: Cursor) -> Scope:
    rest = cur.rest.strip(SPACE)
    if not _CLOSING_REST.issuperset(rest):
        return "line"  # inserting mid-line: never a line break
    before = cur.before.rstrip(SPACE)
    if not before:
        return "line" if rest else "block"
    if cur.in_token:
        return "line"  # a ":" or "(" in a comment or string opens nothing
    if rest:
        # Auto-paired braces, `{|}`: a body goes between them.
        return "block" if before.endswith("{") else "line"
    for opener in cur.lang.openers:
        if before.endswith(opener):
            if opener == ":" and cur.lang.colon_blocks and cur.open_at_cursor:
                return "line"  # a dict value, a slice or a lambda inside brackets
            return "block"
    return "line"


def stop_sequences(scope: Scope) -> tuple[str, ...]:
    """Stop strings to send to the model for this scope.

    A line stops at its line break; a block at two blank lines, where :func:`finish` would cut it
    too. Finer block ends (a dedent, the closing brace) are found by :func:`has_enough`.
    """
    return ("\n",) if scope == "line" else ("\n\n\n",)


# -- block boundary ---------------------------------------------------------------------------


def cut_at_block_boundary(text: str, prefix: str, scope: Scope, language_id: str) -> str:
    """line: up to the first line break. block: the lines belonging to the block being written.

    A block's first line (continuing the cursor line) always counts. When the cursor line ends
    in an opener (or a blank cursor line's first completed line does) the block holds the lines
    indented deeper than that line and ends right after the line that closes its bracket (a line
    that reopens, ``} else {``, continues it; so do Python's ``elif``/``else``/``except``/
    ``finally`` at the opener's depth). Otherwise (statements on a blank line) it holds the lines
    indented at least as deep as the cursor and ends before a dedent or a line closing a bracket
    of the prefix. Two blank lines in a row end any block, even inside a multi-line string or
    comment; trailing blank lines are dropped.
    """
    end, _ = _cut(text, Cursor.of(prefix, "", language_id), scope)
    return text[:end]


def _cut(text: str, cur: Cursor, scope: Scope) -> tuple[int, bool]:
    """Where the text is cut, and whether more text could not move the cut (it was seen)."""
    if scope == "line":
        line_break = BREAK.search(text)
        return (line_break.start(), True) if line_break else (len(text), False)
    return _block_end(text, cur)


@dataclass(frozen=True)
class _Line:
    start: int
    end: int  # where its content ends (its line break excluded)
    complete: bool  # a line break follows: more streamed text cannot change it


def _lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    start = 0
    for line_break in BREAK.finditer(text):
        lines.append(_Line(start, line_break.start(), True))
        start = line_break.end()
    lines.append(_Line(start, len(text), False))
    return lines


def _width(line: str) -> int:
    """Columns of the line's indentation."""
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += TAB_WIDTH - width % TAB_WIDTH
        else:
            break
    return width


def _depths(lines: list[_Line], brackets: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """Each line's lowest and final bracket depth, relative to the completion's start."""
    depth = 0
    index = 0
    result: list[tuple[int, int]] = []
    for line in lines:
        lowest = depth
        while index < len(brackets) and brackets[index][0] < line.end:
            depth += 1 if brackets[index][1] in OPENERS else -1
            lowest = min(lowest, depth)
            index += 1
        result.append((lowest, depth))
    return result


def _in_tokens(lines: list[_Line], skips: list[tuple[int, int]]) -> list[bool]:
    """Whether each line starts inside a multi-line string or comment (its indentation is text)."""
    result = [False]
    index = 0
    for line in lines[1:]:
        line_break = line.start - 1
        while index < len(skips) and skips[index][1] <= line_break:
            index += 1
        result.append(index < len(skips) and skips[index][0] <= line_break)
    return result


def _is_header(text: str, line: _Line, walk: Walk, end_depth: int, cur: Cursor) -> bool:
    """Whether a blank cursor line's first completed line opens a block (``def f():``)."""
    content = text[line.start : line.end].rstrip(SPACE)
    last = line.start + len(content) - 1
    if not content or any(start <= last < end for start, end in walk.skips):
        return False
    for opener in cur.lang.openers:
        if content.endswith(opener):
            if opener == ":" and cur.lang.colon_blocks:
                return end_depth == 0 and not walk.stack
            return end_depth >= 0
    return False


def _block_end(text: str, cur: Cursor) -> tuple[int, bool]:
    lines = _lines(text)
    walk = scan(text, cur)
    depths = _depths(lines, walk.brackets)
    in_token = _in_tokens(lines, walk.skips)
    first = lines[0]
    lowest, end_depth = depths[0]
    if cur.before.strip(SPACE):
        header = True  # the cursor line opened the block
        base = _width(cur.before)
    else:
        header = first.complete and _is_header(text, first, walk, end_depth, cur)
        lead = text[first.start : first.end]
        base = _width(cur.before + lead) if header else _width(cur.before)
    if lowest < 0 and (end_depth < 0 or not header):
        return first.end, first.complete  # the first line already closes the enclosing bracket
    ref = max(end_depth, 0) if header else 0
    keep = first.end  # where the last kept line with content ends
    blanks = 0
    for index in range(1, len(lines)):
        line = lines[index]
        content = text[line.start : line.end]
        stripped = content.strip(SPACE)
        # Counted inside a multi-line string or comment too: the model's stop sequence
        # (``stop_sequences``) ends its answer at two blank lines wherever they are.
        if not stripped:
            blanks += 1
            if blanks >= 2:
                return keep, line.complete
            continue
        blanks = 0
        if in_token[index]:
            keep = line.end
            continue
        lowest, end_depth = depths[index]
        indent = _width(content)
        if header:
            if lowest < ref:  # the line closing the opener's bracket is the block's last...
                keep = line.end
                if end_depth < ref:
                    return keep, line.complete
                continue  # ...unless it reopens: `} else {`
            continuation = cur.lang.continuations
            if indent > base or (continuation and indent == base and continuation.match(stripped)):
                keep = line.end
                continue
            return keep, line.complete
        if lowest < 0:
            # Closing a bracket of the prefix: the enclosing block ends here. A line that begins
            # with the closer belongs to the enclosing block; `x(); }` keeps its statement.
            if stripped[0] not in PAIR:
                keep = line.end
            return keep, line.complete
        if indent < base:
            return keep, line.complete
        keep = line.end
    return keep, False


# -- brackets ---------------------------------------------------------------------------------


def balance_brackets(text: str, prefix: str, suffix: str, *, language_id: str = "") -> str:
    """Cut at a closer that matches nothing; drop trailing closers the suffix already supplies.
    Never adds text.

    Brackets still open at the cursor (in the last :data:`PREFIX_WINDOW` characters of the
    prefix, outside strings and comments) and those the completion opens form a stack; a closer
    of another type than the top, or with nothing open, cuts the completion right before it. At
    the end, closers of prefix brackets that end the completion (with any ``;``, ``,`` and
    whitespace after them) are dropped when that lets more of the suffix's leading closers find
    their match. Without ``language_id``, only quotes are recognised, no comments.
    """
    cur = Cursor.of(prefix, suffix, language_id)
    return _drop_supplied_closers(_cut_at_stray_closer(text, cur), cur)


def _stray_closer(text: str, cur: Cursor) -> int | None:
    walk = scan(text, cur)
    stack = list(walk.stack)
    for position, bracket in walk.brackets:
        if not apply_bracket(stack, bracket):
            return position
    return None


def _cut_at_stray_closer(text: str, cur: Cursor) -> str:
    stray = _stray_closer(text, cur)
    return text if stray is None else text[:stray]


def _leading_closers(suffix: str) -> list[str]:
    closers: list[str] = []
    for char in suffix:
        if char in PAIR:
            closers.append(char)
            if len(closers) >= _MAX_CLOSERS:
                break
        elif not char.isspace():
            break
    return closers


def _matched(stack: list[str], closers: list[str]) -> int:
    """How many of the closers, in order, find their opener on the stack."""
    depth = len(stack)
    for count, closer in enumerate(closers):
        if depth == 0 or stack[depth - 1] != PAIR[closer]:
            return count
        depth -= 1
    return len(closers)


def _drop_supplied_closers(text: str, cur: Cursor) -> str:
    closers = _leading_closers(cur.suffix)
    if not closers:
        return text
    walk = scan(text, cur)
    stack: list[tuple[str, bool]] = [(opener, True) for opener in walk.stack]
    closed_prefix: dict[int, str] = {}  # a closer of a prefix bracket -> the opener it closed
    for position, bracket in walk.brackets:
        if bracket in OPENERS:
            stack.append((bracket, False))
        elif stack and stack[-1][0] == PAIR[bracket]:
            opener, from_prefix = stack.pop()
            if from_prefix:
                closed_prefix[position] = opener
    # The completion's own pairs are never split: only closers of prefix brackets may go.
    tail: list[int] = []
    for index in range(len(text) - 1, -1, -1):
        if index in closed_prefix:
            tail.append(index)
        elif text[index] not in _AFTER_CLOSER:
            break
    if not tail:
        return text
    restored = [opener for opener, _ in stack]
    best_count, best = 0, _matched(restored, closers)
    for count, position in enumerate(tail, 1):
        restored.append(closed_prefix[position])
        matched = _matched(restored, closers)
        if matched > best:
            best_count, best = count, matched
    return text if best_count == 0 else text[: tail[best_count - 1]]


# -- all together -----------------------------------------------------------------------------


def finish(text: str, prefix: str, suffix: str, language_id: str) -> str:
    """All of the above, in order: the text to show. Empty string when nothing useful remains.

    Scope, block boundary, the cut at a stray closer, the closers the suffix supplies; then
    whitespace-only text becomes ``""``, trailing whitespace goes when nothing follows on the
    cursor line, and line breaks become the document's (never splitting one).
    """
    cur = Cursor.of(prefix, suffix, language_id)
    scope = _scope(cur)
    end, _ = _cut(text, cur, scope)
    out = _cut_at_stray_closer(text[:end], cur)
    out = _drop_supplied_closers(out, cur)
    if not out.strip():
        return ""
    if not cur.rest.strip(SPACE):
        out = out.rstrip()
    return BREAK.sub(cur.newline, out)


def has_enough(text: str, prefix: str, suffix: str, language_id: str) -> bool:
    """True once more streamed text could not change finish() (the cut point has been reached),
    so the caller can close the model stream early and save tokens.

    A line is done at its line break. A block is done once the line that ends it has been seen
    whole (its line break arrived), or once a closer that matches nothing stands on a whole line.
    """
    cur = Cursor.of(prefix, suffix, language_id)
    scope = _scope(cur)
    end, decided = _cut(text, cur, scope)
    if decided:
        return True
    if scope == "line":
        return False
    stray = _stray_closer(text[:end], cur)
    # Its line must be whole: a character literal or a comment opened after it could not hide it
    # then, and the block keeps that line whatever follows.
    return stray is not None and BREAK.search(text, stray) is not None
