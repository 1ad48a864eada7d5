"""What of a model's inline completion is shown at the cursor.

Pure: no pygls, no httpx, no I/O. Used by ``textDocument/inlineCompletion`` and
``textDocument/completion``: the model's text is proposed at a cursor between ``prefix`` (the
document before it) and ``suffix`` (after it), and :func:`finish` turns it into what the editor
shows:

1. :func:`completion_scope`: a single line (mid-line, or after a plain statement) or a block (on an
   otherwise blank line, or right after a block opener such as ``:`` in Python, ``{``, ``(``,
   ``[``, ``=>``).
2. :func:`cut_at_block_boundary`: a line ends at its first line break; a block keeps the lines
   that belong to it (deeper than the opener line, or at least as deep as a blank cursor line),
   ends right after the closer of its opener, at a dedent, or at two blank lines in a row.
3. :func:`balance_brackets`, first half: the text is cut at a closer that matches nothing open.
4. :func:`trim_suffix_overlap`: a tail that repeats what already follows the cursor is dropped.
5. :func:`balance_brackets`, second half: trailing closers that the suffix supplies are dropped.
6. Nothing useful left is ``""``; at the end of a line trailing whitespace goes; line breaks
   become the document's.

No step ever adds text. :func:`has_enough` says when more streamed text could no longer change
the result (the cut point has been seen), so the caller can close the model stream early, and
:func:`stop_sequences` gives the model the same boundaries.

Brackets are counted outside strings and comments, recognised roughly per language (``#``,
``//`` and ``/* */`` comments; quotes, triple quotes, backticks; C-like ``'x'`` character
literals, so that Rust lifetimes are not strings). Called on every keystroke and every streamed
chunk, so each scan is linear and bounded: the last :data:`PREFIX_WINDOW` characters of the prefix
(from a line start), the first :data:`SUFFIX_WINDOW` of the suffix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

Scope = Literal["line", "block"]

PREFIX_WINDOW = 4000
"""How much of the prefix is scanned for open brackets and strings."""
SUFFIX_WINDOW = 2000
"""How much of the suffix is read for repeats and for the closers it supplies."""
TAB_WIDTH = 4
"""Columns of a tab when comparing indentation: models often answer in spaces in a tabbed file."""

_REST_CHARS = 500  # the longest rest of the cursor line compared with a completion's tail
_MAX_CLOSERS = 64  # the suffix's leading closers that are read
_OPENERS = "([{"
_PAIR = {")": "(", "]": "[", "}": "{"}
_BREAK = re.compile(r"\r\n|\r|\n")
_SPACE = " \t\f\v"
# A rest of line made only of these still lets a completion end the line (auto-paired closers).
_CLOSING_REST = frozenset(")]}\"'`;,.:" + _SPACE)
# What may follow the last closer the suffix supplies: dropped with it.
_AFTER_CLOSER = frozenset(";," + _SPACE + "\r\n")
# Past the end of the scanned text: a string or comment still open there covers it.
_SENTINEL = "\x00"


def _token_pattern(
    *,
    hash_comments: bool = False,
    slash_comments: bool = False,
    block_comments: bool = False,
    triple_quotes: bool = False,
    backticks: bool = False,
    char_literals: bool = False,
) -> re.Pattern[str]:
    """Strings, comments and brackets; everything else is skipped by the search.

    No alternative looks past a line break to decide what a line holds: an unterminated string
    or comment runs to the end of its line (a multi-line one to the end of the text), and the
    text ending is read like a line break. So a whole line is tokenised the same however much is
    streamed after it, which :func:`has_enough` relies on.
    """
    alternatives: list[str] = []
    if triple_quotes:
        alternatives += [r'"""[\s\S]*?(?:"""|\Z)', r"'''[\s\S]*?(?:'''|\Z)"]
    if block_comments:
        alternatives.append(r"/\*[\s\S]*?(?:\*/|\Z)")
    if slash_comments:
        alternatives.append(r"//[^\r\n]*")
    if hash_comments:
        alternatives.append(r"#[^\r\n]*")
    if backticks:
        alternatives.append(r"`(?:[^`\\]|\\[\s\S])*`?")
    alternatives.append(r'(?P<s>"(?:[^"\\\r\n]|\\[^\r\n])*(?P<dq>")?)')
    if char_literals:
        alternatives.append(r"(?P<q>'(?:[^'\\\r\n]|\\[^\r\n][^'\r\n]{0,8})(?P<sq>'))")
    else:
        alternatives.append(r"(?P<q>'(?:[^'\\\r\n]|\\[^\r\n])*(?P<sq>')?)")
    alternatives.append(r"(?P<b>[()\[\]{}])")
    return re.compile("|".join(alternatives))


@dataclass(frozen=True)
class _Lang:
    """How one language family writes strings, comments and block openers."""

    tokens: re.Pattern[str]
    openers: tuple[str, ...]  # a line ending in one of these opens a block
    colon_blocks: bool = False  # ":" opens a block only outside brackets (dicts, slices, lambdas)
    continuations: re.Pattern[str] | None = None  # lines at the opener's depth that continue it


_BRACKETS = ("(", "[", "{")
_PYTHON = _Lang(
    _token_pattern(hash_comments=True, triple_quotes=True),
    (":", *_BRACKETS),
    colon_blocks=True,
    continuations=re.compile(r"(?:elif|else|except|finally)\b"),
)
_YAML = _Lang(_token_pattern(hash_comments=True), (":", "[", "{"), colon_blocks=True)
_HASH = _Lang(_token_pattern(hash_comments=True), _BRACKETS)
_JS = _Lang(
    _token_pattern(slash_comments=True, block_comments=True, backticks=True), (*_BRACKETS, "=>")
)
_GO = _Lang(
    _token_pattern(slash_comments=True, block_comments=True, backticks=True, char_literals=True),
    _BRACKETS,
)
_RUST = _Lang(
    _token_pattern(slash_comments=True, block_comments=True, char_literals=True), (*_BRACKETS, "=>")
)
_C = _Lang(_token_pattern(slash_comments=True, block_comments=True, char_literals=True), _BRACKETS)
_JAVA = _Lang(
    _token_pattern(
        slash_comments=True, block_comments=True, triple_quotes=True, char_literals=True
    ),
    (*_BRACKETS, "->"),
)
_CSHARP = _Lang(
    _token_pattern(
        slash_comments=True, block_comments=True, triple_quotes=True, char_literals=True
    ),
    (*_BRACKETS, "=>"),
)
_CSS = _Lang(_token_pattern(block_comments=True), _BRACKETS)
_GENERIC = _Lang(_token_pattern(), _BRACKETS)

_LANGS: Mapping[str, _Lang] = MappingProxyType(
    {
        "python": _PYTHON,
        "yaml": _YAML,
        "go": _GO,
        "rust": _RUST,
        **dict.fromkeys(
            (
                *("javascript", "javascriptreact", "typescript", "typescriptreact"),
                *("json", "jsonc", "vue", "svelte", "dart"),
            ),
            _JS,
        ),
        **dict.fromkeys(("c", "cpp", "cuda-cpp", "objective-c", "objective-cpp", "swift"), _C),
        **dict.fromkeys(("java", "kotlin", "groovy"), _JAVA),
        **dict.fromkeys(("csharp", "scala", "php"), _CSHARP),
        **dict.fromkeys(
            (
                *("ruby", "shellscript", "perl", "r", "toml", "makefile", "dockerfile"),
                *("elixir", "coffeescript", "julia", "powershell"),
            ),
            _HASH,
        ),
        **dict.fromkeys(("css", "scss", "less"), _CSS),
    }
)


@dataclass(frozen=True)
class _Cursor:
    """What the post-processing needs to know about the document around the cursor."""

    lang: _Lang
    before: str  # the cursor's line up to the cursor
    rest: str  # the cursor's line after the cursor
    suffix: str  # the suffix's window
    suffix_whole: bool  # the window is the whole suffix: brackets still open at its end are errors
    newline: str  # the document's line ending
    head: str  # the prefix from the resume point: re-scanned together with a completion
    head_stack: tuple[str, ...]  # brackets open at the resume point
    open_at_cursor: tuple[str, ...]  # brackets open at the cursor (from the prefix alone)
    in_token: bool  # the cursor is inside a string or a comment

    @classmethod
    def of(cls, prefix: str, suffix: str, language_id: str) -> _Cursor:
        lang = _LANGS.get(language_id, _GENERIC)
        tail = prefix[-PREFIX_WINDOW:]
        if len(prefix) > PREFIX_WINDOW:
            # Start at a line start: less likely to start inside a string.
            first_break = _BREAK.search(tail)
            if first_break:
                tail = tail[first_break.end() :]
        line_start = max(tail.rfind("\n"), tail.rfind("\r")) + 1
        window = suffix[:SUFFIX_WINDOW]
        rest_end = _BREAK.search(window)
        rest = window[: rest_end.start() if rest_end else len(window)][:_REST_CHARS]
        resume, head_stack, open_at_cursor, in_token = _scan_prefix(tail, line_start, lang)
        return cls(
            lang=lang,
            before=tail[line_start:],
            rest=rest,
            suffix=window,
            suffix_whole=len(suffix) <= SUFFIX_WINDOW,
            newline=_newline(tail, window),
            head=tail[resume:],
            head_stack=head_stack,
            open_at_cursor=open_at_cursor,
            in_token=in_token,
        )


def _scan_prefix(
    tail: str, line_start: int, lang: _Lang
) -> tuple[int, tuple[str, ...], tuple[str, ...], bool]:
    """Where a completion's scan may resume, the brackets open there and at the cursor, and
    whether the cursor is inside a string or comment.

    The resume point is the cursor line's start (or the start of a string or comment spanning
    it): tokens before it cannot change whatever is typed after the cursor.
    """
    stack: list[str] = []
    resume: tuple[int, tuple[str, ...]] | None = None
    in_token = False
    for match in lang.tokens.finditer(tail + _SENTINEL):
        start, end = match.span()
        if resume is None and (start >= line_start or end > line_start):
            resume = (min(start, line_start), tuple(stack))
        bracket = match.group("b")
        if bracket:
            _apply(stack, bracket)
        elif end > len(tail):
            in_token = True
    if resume is None:
        resume = (line_start, tuple(stack))
    return resume[0], resume[1], tuple(stack), in_token


def _apply(stack: list[str], bracket: str) -> bool:
    """Push an opener or pop its closer; False for a closer that matches nothing (left alone)."""
    if bracket in _OPENERS:
        stack.append(bracket)
        return True
    if stack and stack[-1] == _PAIR[bracket]:
        stack.pop()
        return True
    return False


def _newline(prefix: str, suffix: str) -> str:
    index = prefix.rfind("\n")
    if index != -1:
        return "\r\n" if index > 0 and prefix[index - 1] == "\r" else "\n"
    if "\r" in prefix:
        return "\r"
    index = suffix.find("\n")
    if index != -1:
        return "\r\n" if index > 0 and suffix[index - 1] == "\r" else "\n"
    return "\r" if "\r" in suffix else "\n"


@dataclass(frozen=True)
class _Walk:
    """The brackets of a completion scanned in its place after the prefix."""

    brackets: list[tuple[int, str]]  # (position in the completion, bracket), in order
    skips: list[tuple[int, int]]  # spans of strings and comments touching the completion
    stack: tuple[str, ...]  # brackets open where the completion starts


def _walk(text: str, cur: _Cursor) -> _Walk:
    offset = len(cur.head)
    stack = list(cur.head_stack)
    brackets: list[tuple[int, str]] = []
    skips: list[tuple[int, int]] = []
    # The cursor line is scanned again with the completion: a string open at the cursor, or a
    # character literal closed by the completion, classifies the brackets around it.
    for match in cur.lang.tokens.finditer(cur.head + text):
        start, end = match.span()
        bracket = match.group("b")
        if bracket and start < offset:
            _apply(stack, bracket)
        elif bracket:
            brackets.append((start - offset, bracket))
        elif end > offset:
            skips.append((start - offset, end - offset))
    return _Walk(brackets, skips, tuple(stack))


# -- scope ------------------------------------------------------------------------------------


def completion_scope(prefix: str, suffix: str, language_id: str) -> Scope:
    """Single-line or multi-line, decided from the syntax at the cursor."""
    return _scope(_Cursor.of(prefix, suffix, language_id))


def _scope(cur: _Cursor) -> Scope:
    rest = cur.rest.strip(_SPACE)
    if not _CLOSING_REST.issuperset(rest):
        return "line"  # inserting mid-line: never a line break
    before = cur.before.rstrip(_SPACE)
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
    end, _ = _cut(text, _Cursor.of(prefix, "", language_id), scope)
    return text[:end]


def _cut(text: str, cur: _Cursor, scope: Scope) -> tuple[int, bool]:
    """Where the text is cut, and whether more text could not move the cut (it was seen)."""
    if scope == "line":
        line_break = _BREAK.search(text)
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
    for line_break in _BREAK.finditer(text):
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
            depth += 1 if brackets[index][1] in _OPENERS else -1
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


def _is_header(text: str, line: _Line, walk: _Walk, end_depth: int, cur: _Cursor) -> bool:
    """Whether a blank cursor line's first completed line opens a block (``def f():``)."""
    content = text[line.start : line.end].rstrip(_SPACE)
    last = line.start + len(content) - 1
    if not content or any(start <= last < end for start, end in walk.skips):
        return False
    for opener in cur.lang.openers:
        if content.endswith(opener):
            if opener == ":" and cur.lang.colon_blocks:
                return end_depth == 0 and not walk.stack
            return end_depth >= 0
    return False


def _block_end(text: str, cur: _Cursor) -> tuple[int, bool]:
    lines = _lines(text)
    walk = _walk(text, cur)
    depths = _depths(lines, walk.brackets)
    in_token = _in_tokens(lines, walk.skips)
    first = lines[0]
    lowest, end_depth = depths[0]
    if cur.before.strip(_SPACE):
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
        stripped = content.strip(_SPACE)
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
            if stripped[0] not in _PAIR:
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
    cur = _Cursor.of(prefix, suffix, language_id)
    return _drop_supplied_closers(_cut_at_stray_closer(text, cur), cur)


def _stray_closer(text: str, cur: _Cursor) -> int | None:
    walk = _walk(text, cur)
    stack = list(walk.stack)
    for position, bracket in walk.brackets:
        if not _apply(stack, bracket):
            return position
    return None


def _cut_at_stray_closer(text: str, cur: _Cursor) -> str:
    stray = _stray_closer(text, cur)
    return text if stray is None else text[:stray]


def _leading_closers(suffix: str) -> list[str]:
    closers: list[str] = []
    for char in suffix:
        if char in _PAIR:
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
        if depth == 0 or stack[depth - 1] != _PAIR[closer]:
            return count
        depth -= 1
    return len(closers)


def _drop_supplied_closers(text: str, cur: _Cursor) -> str:
    closers = _leading_closers(cur.suffix)
    if not closers:
        return text
    walk = _walk(text, cur)
    stack: list[tuple[str, bool]] = [(opener, True) for opener in walk.stack]
    closed_prefix: dict[int, str] = {}  # a closer of a prefix bracket -> the opener it closed
    for position, bracket in walk.brackets:
        if bracket in _OPENERS:
            stack.append((bracket, False))
        elif stack and stack[-1][0] == _PAIR[bracket]:
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


# -- overlap with the suffix ------------------------------------------------------------------


def trim_suffix_overlap(
    text: str, suffix: str, scope: Scope, *, prefix: str = "", language_id: str = ""
) -> str:
    """Drop the completion's tail that repeats what already follows the cursor.

    line scope: the longest tail of the completion that the rest of the cursor line starts with.
    block scope: first the completion's last lines when they equal the suffix's first non-blank
    lines (ignoring trailing whitespace; the completion's first line, which continues the cursor
    line, ignoring indentation too), then as for a line. A completion that only repeats the
    suffix's start becomes ``""``.

    Brackets decide doubtful cases: a tail that is not self-contained (it closes a bracket
    opened before it, or opens one, or a string) is dropped only when that leaves fewer unmatched
    closers and unterminated strings in the completion and the suffix's window (``print(f(x`` +
    ``)``, suffix ``)``: the ``)`` stays). ``prefix`` and ``language_id`` sharpen that count.
    """
    return _trim(text, _Cursor.of(prefix, suffix, language_id), scope)


def _trim(text: str, cur: _Cursor, scope: Scope) -> str:
    if scope == "block":
        trimmed = _trim_lines(text, cur)
        if trimmed is not None:
            return trimmed
    trimmed = _trim_tail(text, cur)
    return text if trimmed is None else trimmed


def _errors(text: str, cur: _Cursor) -> int:
    """Unmatched closers and unterminated strings from the cursor line to the suffix's window."""
    offset = len(cur.head)
    stack = list(cur.head_stack)
    errors = 0
    for match in cur.lang.tokens.finditer(cur.head + text + cur.suffix):
        bracket = match.group("b")
        if bracket:
            if not _apply(stack, bracket) and match.start() >= offset:
                errors += 1
        elif match.end() > offset and (
            (match.group("s") is not None and match.group("dq") is None)
            or (match.group("q") is not None and match.group("sq") is None)
        ):
            errors += 1
    if cur.suffix_whole:
        errors += len(stack)  # the document's end is in view: what is still open stays open
    return errors


def _self_contained(text: str, lang: _Lang) -> bool:
    """Whether the text closes only what it opens, and leaves no string or comment open."""
    stack: list[str] = []
    for match in lang.tokens.finditer(text + _SENTINEL):
        bracket = match.group("b")
        if bracket:
            if not _apply(stack, bracket):
                return False
        elif match.end() > len(text):
            return False
    return not stack


def _trim_tail(text: str, cur: _Cursor) -> str | None:
    rest = cur.rest
    if not rest or not text:
        return None
    errors: int | None = None
    for start in range(max(0, len(text) - len(rest)), len(text)):
        repeat = text[start:]
        if not rest.startswith(repeat):
            continue
        if errors is None:
            errors = _errors(text, cur)
        trimmed = text[:start]
        after = _errors(trimmed, cur)
        if after < errors or (after == errors and _self_contained(repeat, cur.lang)):
            return trimmed
    return None


def _suffix_lines(cur: _Cursor) -> tuple[list[str], bool]:
    """The suffix's lines from the first non-blank one, and whether that first one is the rest of
    the cursor line (a partial line)."""
    lines = _lines(cur.suffix)
    if not cur.suffix_whole:
        lines = [line for line in lines if line.complete]  # the window may cut the last one
    texts = [cur.suffix[line.start : line.end] for line in lines]
    if texts and texts[0].strip(_SPACE):
        return texts, True
    first = next((i for i, t in enumerate(texts) if t.strip(_SPACE)), len(texts))
    return texts[first:], False


def _trim_lines(text: str, cur: _Cursor) -> str | None:
    lines = _lines(text)
    contents = [text[line.start : line.end] for line in lines]
    while len(contents) > 1 and not contents[-1].strip(_SPACE):
        contents.pop()
    if not contents[-1].strip(_SPACE):
        return None
    wanted, rest_first = _suffix_lines(cur)
    errors: int | None = None
    for count in range(min(len(contents), len(wanted)), 0, -1):
        first = len(contents) - count
        if not all(
            _same_line(
                contents[first + k], wanted[k], partial=(first + k == 0) or (k == 0 and rest_first)
            )
            for k in range(count)
        ):
            continue
        if first == 0:
            trimmed = ""
        elif rest_first:
            # The rest of the cursor line follows the completion: keep the line break and the
            # indentation before it, so that `{|}` gets its `}` on a line of its own.
            line = lines[first]
            content = contents[first]
            trimmed = text[: line.start + len(content) - len(content.lstrip(_SPACE))]
        else:
            kept = [k for k in range(first) if contents[k].strip(_SPACE)]
            trimmed = text[: lines[kept[-1] if kept else 0].end]
        if errors is None:
            errors = _errors(text, cur)
        # Whole lines that repeat the suffix are strong evidence: a tie in the count is enough.
        if _errors(trimmed, cur) <= errors:
            return trimmed
    return None


def _same_line(line: str, wanted: str, *, partial: bool) -> bool:
    if partial:
        return line.strip(_SPACE) == wanted.strip(_SPACE)
    return line.rstrip(_SPACE) == wanted.rstrip(_SPACE)


# -- all together -----------------------------------------------------------------------------


def finish(text: str, prefix: str, suffix: str, language_id: str) -> str:
    """All of the above, in order: the text to show. Empty string when nothing useful remains.

    Scope, block boundary, the cut at a stray closer, the suffix overlap, the closers the suffix
    supplies; then whitespace-only text becomes ``""``, trailing whitespace goes when nothing
    follows on the cursor line, and line breaks become the document's (never splitting one).
    """
    cur = _Cursor.of(prefix, suffix, language_id)
    scope = _scope(cur)
    end, _ = _cut(text, cur, scope)
    out = _cut_at_stray_closer(text[:end], cur)
    out = _trim(out, cur, scope)
    out = _drop_supplied_closers(out, cur)
    if not out.strip():
        return ""
    if not cur.rest.strip(_SPACE):
        out = out.rstrip()
    return _BREAK.sub(cur.newline, out)


def has_enough(text: str, prefix: str, suffix: str, language_id: str) -> bool:
    """True once more streamed text could not change finish() (the cut point has been reached),
    so the caller can close the model stream early and save tokens.

    A line is done at its line break. A block is done once the line that ends it has been seen
    whole (its line break arrived), or once a closer that matches nothing stands on a whole line.
    """
    cur = _Cursor.of(prefix, suffix, language_id)
    scope = _scope(cur)
    end, decided = _cut(text, cur, scope)
    if decided:
        return True
    if scope == "line":
        return False
    stray = _stray_closer(text[:end], cur)
    # Its line must be whole: a character literal or a comment opened after it could not hide it
    # then, and the block keeps that line whatever follows.
    return stray is not None and _BREAK.search(text, stray) is not None
