"""Syntax fix, offline: small repairs of Python syntax errors, verified by the compiler.

Pure: no pygls, no httpx, no I/O; callers pass the text in.

:func:`find_error` locates the first syntax error with ``compile()``. :func:`repair` tries small
edits around it, each confined to the **error region** (the logical statement containing the
error, at most :data:`MAX_STATEMENT_LINES` lines either side of it, plus :data:`CONTEXT_LINES`
lines before and after), and keeps the first one after which the *whole* file compiles:

- close a bracket, or add / remove / swap an unmatched one;
- close a string, remove a stray quote, complete a triple quote that lost a character;
- add a missing ``:`` (compound statement headers first, then where the error points);
- re-indent the offending line (or the line before it) to an enclosing level;
- remove a duplicated token, then any single token near the error; insert a missing ``,``.

The region is also what :func:`error_region` returns. Line numbers count CR, LF and CRLF as line
breaks, as Python and LSP do (not ``str.splitlines``, which also splits at form feeds).

Bounded work: at most :data:`MAX_ATTEMPTS` candidates are checked, each by one parse of its
enclosing ``def`` or ``class`` (or top-level statements) alone and, when that passes, one full
compile of the file; insertion points are limited to the :data:`MAX_POSITIONS` nearest to the
error per kind. Measured on the standard library, successful repairs need a median of 1 check and
at most about 50; a file no candidate repairs costs at most ``MAX_ATTEMPTS`` full compiles
(about 1.5 s for 5,000 lines), so callers run this off the event loop.
"""

from __future__ import annotations

import ast
import bisect
import functools
import itertools
import keyword
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

MAX_STATEMENT_LINES = 60
"""A statement is followed at most this many lines before and after the error line."""
CONTEXT_LINES = 2
"""Lines around the statement that belong to the error region too."""
MAX_ATTEMPTS = 80
"""At most this many candidate repairs are checked."""
MAX_POSITIONS = 12
"""Insertion points tried per kind of repair, nearest to the error first."""

_OPENER_OF = {")": "(", "]": "[", "}": "{"}  # keyed by closing bracket
_CLOSER_OF = {"(": ")", "[": "]", "{": "}"}  # keyed by opening bracket
_HEADER = re.compile(
    r"(?:async\s+)?(?:if|elif|else|for|while|def|class|try|except|finally|with|match|case)\b"
)
_NAME = re.compile(r"\b[^\W\d]\w*")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_INTERESTING = re.compile(r"[\"'#()\[\]{}\\]")
_STRING_END = {
    '"': re.compile(r'(?:[^"\\]|\\.)*"'),
    "'": re.compile(r"(?:[^'\\]|\\.)*'"),
    '"""': re.compile(r'(?:[^\\]|\\.)*?"""', re.DOTALL),
    "'''": re.compile(r"(?:[^\\]|\\.)*?'''", re.DOTALL),
}
_TOKEN = re.compile(
    r"""
      (?P<comment>\#.*)
    | (?P<string>[rRbBuUfF]{0,2}(?:\"\"\"|'''|"|'))
    | (?P<number>(?:\d|\.\d)(?:[\w.]|(?<=[eE])[-+])*)
    | (?P<name>\w+)
    | (?P<op>\*\*=|//=|>>=|<<=|\.\.\.|->|:=|[-+*/%@&|^<>=!]=|\*\*|//|<<|>>|\S)
    """,
    re.VERBOSE,
)
# Errors Python's tokenizer finds: reported even when the parser failed earlier in the file.
_TOKENIZER_ERRORS = (
    "unterminated",
    "unmatched",
    "does not match",
    "continuation character",
    "invalid character",
    "invalid non-printable",
    "literal",
    "inconsistent use of tabs",
)
# Errors that the end of a truncated text causes, not the text itself.
_TRUNCATION_ERRORS = (
    "EOF",
    "was never closed",
    "expected an indented block",
    "expected 'except' or 'finally' block",
    "unterminated",
)


@dataclass(frozen=True)
class Repair:
    """A verified repair: replace lines ``start_line..end_line`` (inclusive) with ``new_text``."""

    start_line: int
    """0-based first line of the region replaced."""
    end_line: int
    """0-based last line (inclusive) of the region replaced."""
    new_text: str
    """The replacement for those whole lines, with their line endings."""
    description: str
    """What was done, e.g. "added a missing ':'"."""
    error: str
    """The original error: message and 1-based line."""


@dataclass(frozen=True)
class _Error:
    line: int  # 0-based
    col: int  # 0-based, within the line
    message: str


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    kind: str
    text: str


@dataclass(frozen=True)
class _Candidate:
    lines: dict[int, str]  # line index -> new content (without its line ending)
    description: str


def find_error(source: str) -> tuple[int, str] | None:
    """The 0-based line and message of the first syntax error, None if the source compiles.

    Python's tokenizer errors (an unterminated triple-quoted string, an inconsistent dedent) are
    reported before parser errors earlier in the file; when the text before the reported
    statement fails on its own, that earlier error is the first one.
    """
    error = _first_error(source, _split_lines(source))
    return None if error is None else (error.line, error.message)


def error_region(source: str) -> tuple[int, int] | None:
    """The 0-based first and last line :func:`repair` may change, None if the source compiles."""
    lines = _split_lines(source)
    error = _first_error(source, lines)
    if error is None:
        return None
    return _Context.build(lines, error).region


def repair(source: str) -> Repair | None:
    """A small repair inside the error region after which the whole file compiles, or None."""
    lines = _split_lines(source)
    error = _first_error(source, lines)
    if error is None:
        return None
    ctx = _Context.build(lines, error)
    seen: set[tuple[tuple[int, str], ...]] = set()
    attempts = 0
    for candidate in _candidates(ctx):
        key = tuple(sorted(candidate.lines.items()))
        if key in seen or all(ctx.contents[i] == t for i, t in candidate.lines.items()):
            continue
        seen.add(key)
        attempts += 1
        if attempts > MAX_ATTEMPTS:
            return None
        if _accepts(ctx, candidate):
            return _as_repair(ctx, candidate, error)
    return None


# -- locating the error --------------------------------------------------------------------------


def _split_lines(source: str) -> list[str]:
    """Lines with their endings, split where Python and LSP split them (CR, LF, CRLF)."""
    lines: list[str] = []
    start = 0
    for match in _LINE_BREAK.finditer(source):
        lines.append(source[start : match.end()])
        start = match.end()
    if start < len(source):
        lines.append(source[start:])
    return lines


def _compile_error(source: str) -> _Error | None:
    """The error ``compile()`` reports, None if it compiles."""
    with warnings.catch_warnings():
        # Warnings (invalid escapes, `is` with a literal) are not errors, even under -W error.
        warnings.simplefilter("ignore")
        try:
            compile(source, "<fastedit>", "exec", dont_inherit=True)
        except SyntaxError as exc:
            line = (exc.lineno or 1) - 1
            return _Error(line, max((exc.offset or 1) - 1, 0), exc.msg)
        except ValueError as exc:  # null bytes, before Python 3.12
            return _Error(source[: source.find("\0")].count("\n"), 0, str(exc))
        except (RecursionError, MemoryError):
            return _Error(0, 0, "too deeply nested to compile")
    return None


def _parses(source: str) -> bool:
    """Whether the text parses to an AST (the compiler's later checks are not run)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(source, "<fastedit>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


def _first_error(source: str, lines: list[str]) -> _Error | None:
    """The error ``compile()`` reports, or an earlier one its tokenizer error hides."""
    error = _compile_error(source)
    if error is None:
        return None
    error = _clamped(error, lines)
    contents = _contents(lines)
    for _ in range(3):
        if not any(m in error.message for m in _TOKENIZER_ERRORS):
            break
        states = _scan(contents[: error.line + 1])
        start = _statement_bounds(contents, states, error.line, bound=len(contents))[0]
        if start == 0:
            break
        earlier = _compile_error("".join(lines[:start]))
        if (
            earlier is None
            or earlier.line >= start
            or any(m in earlier.message for m in _TRUNCATION_ERRORS)
        ):
            break
        error = _clamped(earlier, lines)
    return error


def _clamped(error: _Error, lines: list[str]) -> _Error:
    if not lines:
        return _Error(0, 0, error.message)
    line = min(max(error.line, 0), len(lines) - 1)
    return _Error(line, min(error.col, len(_content(lines[line]))), error.message)


def _content(line: str) -> str:
    return line.rstrip("\r\n")


def _contents(lines: list[str]) -> list[str]:
    return [_content(line) for line in lines]


@dataclass(frozen=True)
class _LineState:
    """How a line starts: inside brackets, inside a triple-quoted string, after a backslash."""

    depth: int
    string: str | None
    backslash: bool

    @property
    def continued(self) -> bool:
        return self.depth > 0 or self.string is not None or self.backslash


def _scan(contents: list[str], state: _LineState | None = None) -> list[_LineState]:
    """The state at the start of each line, as Python's tokenizer sees it, and after the last."""
    states = [state or _LineState(0, None, False)]
    depth, string, backslash = states[0].depth, states[0].string, states[0].backslash
    for line in contents:
        backslash = False
        pos = 0
        if string is not None:
            end = _STRING_END[string].match(line)
            if end is None:
                states.append(_LineState(depth, string, backslash))
                continue
            pos, string = end.end(), None
        while (match := _INTERESTING.search(line, pos)) is not None:
            char, pos = match.group(), match.end()
            if char == "#":
                break
            if char in _CLOSER_OF:
                depth += 1
            elif char in _OPENER_OF:
                depth = max(depth - 1, 0)
            elif char == "\\":
                backslash = pos == len(line)
                pos += 1
            else:
                quote = char * 3 if line.startswith(char * 3, match.start()) else char
                end = _STRING_END[quote].match(line, match.start() + len(quote))
                if end is None:
                    string = quote if len(quote) == 3 else None
                    break
                pos = end.end()
        states.append(_LineState(depth, string, backslash))
    return states


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t\f"))]


def _statement_bounds(
    contents: list[str], states: list[_LineState], line: int, *, bound: int = MAX_STATEMENT_LINES
) -> tuple[int, int]:
    """First and last line of the logical statement containing ``line`` (``bound`` lines away)."""
    start = line
    while start > 0 and line - start < bound and states[start].continued:
        start -= 1
    width = len(_indent(contents[start]))
    end = line
    while end + 1 < len(contents) and end - line < MAX_STATEMENT_LINES:
        state = states[end + 1] if end + 1 < len(states) else None
        if state is None or not state.continued:
            break
        text = contents[end + 1]
        # An unclosed bracket runs to the end of the file: a line indented like the statement's
        # first one, and not closing a bracket, starts a new statement.
        if (
            state.string is None
            and not state.backslash
            and text.strip()
            and len(_indent(text)) <= width
            and text.lstrip()[0] not in _OPENER_OF
        ):
            break
        end += 1
    return start, end


# -- the context of one repair -------------------------------------------------------------------


@dataclass(frozen=True)
class _Context:
    """The broken file, its first error, and the region a repair may change."""

    lines: list[str]  # with endings
    contents: list[str]  # without endings
    error: _Error
    statement: tuple[int, int]
    region: tuple[int, int]
    states: list[_LineState]
    enclosing_defs: dict[int, _Unit | None]  # by the region's indentation, as they are needed
    top_starts: list[int]  # lines that start a top-level statement
    indent_unit: str

    @staticmethod
    def build(lines: list[str], error: _Error) -> _Context:
        contents = _contents(lines)
        states = _scan(contents)
        statement = _statement_bounds(contents, states, error.line)
        region = (
            max(statement[0] - CONTEXT_LINES, 0),
            min(statement[1] + CONTEXT_LINES, len(lines) - 1),
        )
        return _Context(
            lines=lines,
            contents=contents,
            error=error,
            statement=statement,
            region=region,
            states=states,
            enclosing_defs={},
            top_starts=[i for i in range(len(contents)) if _starts_top_level(contents, states, i)],
            indent_unit=_indent_unit(contents),
        )

    def tokens(self, line: int) -> list[_Token]:
        return _tokens(self.contents[line], self.states[line].string)

    @functools.cached_property
    def names(self) -> set[str]:
        """The identifiers the file uses (in code, comments or strings alike)."""
        return set(_NAME.findall("".join(self.lines)))

    def in_region(self, line: int) -> bool:
        return self.region[0] <= line <= self.region[1]


def _indent_unit(contents: list[str]) -> str:
    """The file's indentation step: a tab if it indents with tabs, else its most common step."""
    steps: dict[int, int] = {}
    previous = 0
    for text in contents[:2000]:
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        indent = _indent(text)
        if "\t" in indent:
            return "\t"
        if len(indent) > previous:
            steps[len(indent) - previous] = steps.get(len(indent) - previous, 0) + 1
        previous = len(indent)
    return " " * (max(steps, key=lambda s: steps[s]) if steps else 4)


@dataclass(frozen=True)
class _Unit:
    """Lines around the region that parse on their own when the whole file does."""

    first: int
    last: int
    indent: str  # the first line's indentation, removed before parsing them alone


_DEF = re.compile(r"[ \t]*(?:async\s+)?(?:def|class)\b")


def _enclosing_def(
    contents: list[str], states: list[_LineState], region: tuple[int, int], width: int
) -> _Unit | None:
    """The innermost ``def`` or ``class`` before the region whose body would hold lines indented
    ``width`` (None at the top level)."""

    def code(i: int) -> bool:
        return not states[i].continued and bool(_code_text(contents[i]))

    header = region[0] - 1
    while header >= 0 and width > 0:
        if code(header) and len(_indent(contents[header])) < width:
            width = len(_indent(contents[header]))
            if _DEF.match(contents[header]):
                break
        header -= 1
    if header < 0 or width == 0:
        return None
    end = region[1] + 1
    while end < len(contents) and not (code(end) and len(_indent(contents[end])) <= width):
        end += 1
    return _Unit(header, end - 1, _indent(contents[header]))


_CONTINUATION = re.compile(r"(?:else|elif|except|finally)\b")


def _starts_top_level(contents: list[str], states: list[_LineState], line: int) -> bool:
    """Whether a top-level statement starts at the line (a decorated one: at its decorator)."""
    text = contents[line]
    if (
        states[line].continued
        or text[:1] in ("", " ", "\t", "\f", "#")
        or _CONTINUATION.match(text)
    ):
        return False
    previous = line - 1
    while previous >= 0 and not states[previous].continued and not _code_text(contents[previous]):
        previous -= 1
    return previous < 0 or states[previous].continued or not contents[previous].startswith("@")


def _code_text(text: str) -> str:
    stripped = text.strip()
    return "" if stripped.startswith("#") else stripped


# -- lexing one line -----------------------------------------------------------------------------


def _tokens(text: str, string: str | None) -> list[_Token]:
    """Tokens of one line, approximately; strings (even unterminated ones) are single tokens."""
    tokens: list[_Token] = []
    pos = 0
    if string is not None:
        end = _STRING_END[string].match(text)
        if end is None:
            return [_Token(0, len(text), "string_tail", text)] if text else []
        tokens.append(_Token(0, end.end(), "string_tail", text[: end.end()]))
        pos = end.end()
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        match = _TOKEN.match(text, pos)
        if match is None:  # pragma: no cover - the last alternative matches any non-space
            break
        kind = match.lastgroup or "op"
        end_pos = match.end()
        if kind == "string":
            opener = match.group().lstrip("rRbBuUfF")
            body = _STRING_END[opener].match(text, end_pos)
            kind = "string" if body else "unterminated"
            end_pos = body.end() if body else len(text)
        tokens.append(_Token(pos, end_pos, kind, text[pos:end_pos]))
        pos = end_pos
    return tokens


def _code(ctx: _Context, line: int) -> str:
    """A line without its comment and trailing whitespace."""
    return ctx.contents[line][: _code_end(ctx.tokens(line), ctx.contents[line])]


def _code_end(tokens: list[_Token], text: str) -> int:
    """Where the code of a line ends: before a comment and trailing whitespace."""
    for token in reversed(tokens):
        if token.kind != "comment":
            return token.end
    return len(_indent(text))


# -- candidates ----------------------------------------------------------------------------------


def _candidates(ctx: _Context) -> Iterator[_Candidate]:
    """Candidate repairs, the ones the error message points at first."""
    message = ctx.error.message
    if "was never closed" in message:
        yield from _close_brackets(ctx)
    if message.startswith("unmatched") or "does not match opening" in message:
        yield from _fix_closer(ctx)
    if message.startswith("unterminated triple-quoted"):
        yield from _complete_triple_quotes(ctx)
    if message.startswith("unterminated string") or "continuation character" in message:
        yield from _fix_quote(ctx)
    if "indent" in message or "outside" in message:
        yield from _fix_indentation(ctx)
    if "expected ':'" in message:
        yield from _add_colon(ctx)
    yield from _add_header_colon(ctx)
    yield from _complete_triple_quotes(ctx)
    yield from _remove_duplicate(ctx)
    yield from _close_brackets(ctx)
    yield from _fix_quote(ctx)
    yield from _fix_indentation(ctx)
    yield from _add_colon(ctx)
    yield from _add_opener(ctx)
    for col in _name_splits(
        ctx, ctx.error.line, len(ctx.contents[ctx.error.line]), both_known=False
    ):
        yield from _insert_at(ctx, ctx.error.line, col, "(", "added a missing '('")
    yield from _remove_token(ctx)
    yield from _insert(ctx, ",", "added a missing ','")


def _edit(ctx: _Context, line: int, text: str, description: str) -> Iterator[_Candidate]:
    if ctx.in_region(line) and text != ctx.contents[line]:
        yield _Candidate({line: text}, description)


def _insert_at(
    ctx: _Context, line: int, col: int, piece: str, description: str
) -> Iterator[_Candidate]:
    text = ctx.contents[line]
    yield from _edit(ctx, line, text[:col] + piece + text[col:], description)


def _boundaries(ctx: _Context, line: int) -> list[int]:
    """Token boundaries of a line, nearest to the error column first when it is the error line."""
    tokens = ctx.tokens(line)
    points = sorted({t.start for t in tokens} | {t.end for t in tokens if t.kind != "comment"})
    if line == ctx.error.line:
        col = ctx.error.col
        points.sort(key=lambda p: (abs(p - col), p))
    return points[:MAX_POSITIONS]


def _code_lines(ctx: _Context) -> list[int]:
    """The region's non-blank lines, the error line first, then by distance from it.

    On equal distance the line before comes first, except after a ``try`` body, where the
    error is reported on the body and the broken ``except`` or ``finally`` follows it.
    """
    error = ctx.error.line
    after_first = "expected 'except' or 'finally'" in ctx.error.message
    lines = range(ctx.region[0], ctx.region[1] + 1)
    order = sorted(lines, key=lambda i: (abs(i - error), (i < error) == after_first))
    return [i for i in order if ctx.contents[i].strip()]


def _add_header_colon(ctx: _Context) -> Iterator[_Candidate]:
    """``if x`` → ``if x:`` at the end of a compound statement's header."""
    for first in _code_lines(ctx):
        if ctx.states[first].continued or not _HEADER.match(ctx.contents[first].lstrip()):
            continue
        last = first
        while (
            last < ctx.region[1]
            and last - first < MAX_STATEMENT_LINES
            and ctx.states[last + 1].continued
        ):
            last += 1
        for line in range(last, first - 1, -1):
            end = _code_end(ctx.tokens(line), ctx.contents[line])
            if not ctx.contents[line][:end].endswith(":"):
                yield from _insert_at(ctx, line, end, ":", "added a missing ':'")


def _add_colon(ctx: _Context) -> Iterator[_Candidate]:
    yield from _add_header_colon(ctx)
    yield from _insert(ctx, ":", "added a missing ':'")


def _insert(ctx: _Context, piece: str, description: str) -> Iterator[_Candidate]:
    line = ctx.error.line
    for col in _boundaries(ctx, line):
        yield from _insert_at(ctx, line, col, piece, description)


def _open_brackets(ctx: _Context) -> list[tuple[int, int, str]]:
    """Brackets the statement leaves open, innermost first: (line, column, bracket)."""
    stack: list[tuple[int, int, str]] = []
    for line in range(ctx.statement[0], ctx.statement[1] + 1):
        for token in ctx.tokens(line):
            if token.text in _CLOSER_OF:
                stack.append((line, token.start, token.text))
            elif token.text in _OPENER_OF and stack and stack[-1][2] == _OPENER_OF[token.text]:
                stack.pop()
    return stack[::-1]


def _close_brackets(ctx: _Context) -> Iterator[_Candidate]:
    """Close the innermost open bracket at the ends of the statement's lines or before a ``:``."""
    open_brackets = _open_brackets(ctx)
    if not open_brackets:
        return
    line0, col0, bracket = open_brackets[0]
    closer = _CLOSER_OF[bracket]
    description = f"closed '{bracket}'"
    for line in range(line0, ctx.statement[1] + 1):
        text = ctx.contents[line]
        end = _code_end(ctx.tokens(line), text)
        if text[:end].endswith(":"):
            yield from _insert_at(ctx, line, end - 1, closer, description)
        yield from _insert_at(ctx, line, end, closer, description)
    if len(open_brackets) > 1:
        closers = "".join(_CLOSER_OF[b] for _, _, b in open_brackets)
        last = ctx.statement[1]
        end = _code_end(ctx.tokens(last), ctx.contents[last])
        yield from _insert_at(ctx, last, end, closers, "closed the open brackets")
    tokens = ctx.tokens(line0)
    after = sorted({t.end for t in tokens if t.start >= col0 and t.kind != "comment"}, reverse=True)
    for col in after[:MAX_POSITIONS]:
        yield from _insert_at(ctx, line0, col, closer, description)


def _fix_closer(ctx: _Context) -> Iterator[_Candidate]:
    """An unmatched or mismatched closing bracket: add its opener, swap it, or remove it."""
    line, col = ctx.error.line, ctx.error.col
    text = ctx.contents[line]
    if col >= len(text) or text[col] not in _OPENER_OF:
        return
    closer = text[col]
    expected = re.search(r"opening parenthesis '(.)'", ctx.error.message)
    if expected:
        right = _CLOSER_OF[expected.group(1)]
        yield from _insert_at(ctx, line, col, right, f"closed '{expected.group(1)}'")
        swapped = text[:col] + right + text[col + 1 :]
        yield from _edit(ctx, line, swapped, f"replaced '{closer}' with '{right}'")
    without = text[:col] + text[col + 1 :]
    if text[:col].rstrip().endswith(closer):
        yield from _edit(ctx, line, without, f"removed a duplicated '{closer}'")
    opener = _OPENER_OF[closer]
    points = [
        *_name_splits(ctx, line, col, both_known=True),
        *_opening_points(ctx, line, col),
        *_name_splits(ctx, line, col, both_known=False),
    ]
    for point in points:
        yield from _insert_opener(ctx, line, point, opener)
    yield from _edit(ctx, line, without, f"removed an unmatched '{closer}'")
    opened_on = re.search(r"on line (\d+)", ctx.error.message)
    if opened_on and ctx.in_region(int(opened_on.group(1)) - 1):
        yield from _fix_opener_line(ctx, int(opened_on.group(1)) - 1)


def _name_splits(ctx: _Context, line: int, col: int, *, both_known: bool) -> list[int]:
    """Points inside a name before ``col`` whose second part (and first) is a name the file uses.

    A deleted ``(`` after a call's name merges it with the first argument: ``fx, y)``.
    """
    names = ctx.names
    points: list[int] = []
    for token in ctx.tokens(line):
        if token.kind != "name" or token.end > col:
            continue
        for k in range(1, len(token.text)):
            first, second = token.text[:k], token.text[k:]
            if second in names and not second[0].isdigit() and (first in names or not both_known):
                points.append(token.start + k)
    return points[-MAX_POSITIONS:][::-1]


def _insert_opener(ctx: _Context, line: int, col: int, opener: str) -> Iterator[_Candidate]:
    """Insert an opening bracket; a call's or subscript's sticks to the name before it."""
    text = ctx.contents[line]
    before = text[:col].rstrip(" \t")
    name = re.search(r"\w+$", before)
    if opener in "([" and name and not keyword.iskeyword(name.group()) and before != text[:col]:
        col = len(before)
        text = before + text[col:].lstrip(" \t")
        new = text[:col] + opener + text[col:]
        yield from _edit(ctx, line, new, f"added a missing '{opener}'")
        return
    yield from _insert_at(ctx, line, col, opener, f"added a missing '{opener}'")


def _fix_opener_line(ctx: _Context, line: int) -> Iterator[_Candidate]:
    """The line where a mismatched bracket opened: a doubled or unclosed opener there."""
    text = ctx.contents[line]
    tokens = ctx.tokens(line)
    stack: list[_Token] = []
    for token in tokens:
        if token.text in _CLOSER_OF:
            stack.append(token)
        elif token.text in _OPENER_OF and stack:
            stack.pop()
    for token in reversed(stack):
        removed = text[: token.start] + text[token.end :]
        yield from _edit(ctx, line, removed, f"removed a stray '{token.text}'")
    if stack:
        closer = _CLOSER_OF[stack[-1].text]
        end = _code_end(tokens, text)
        if text[:end].endswith(","):
            yield from _insert_at(ctx, line, end - 1, closer, f"closed '{stack[-1].text}'")
        yield from _insert_at(ctx, line, end, closer, f"closed '{stack[-1].text}'")


def _opening_points(ctx: _Context, line: int, col: int) -> list[int]:
    """Where an opening bracket or quote before ``col`` likely went missing, nearest first.

    Starts of operands come first: after an opening bracket, ``,``, ``=``, ``:``, a keyword or
    the line's indentation, and after a string prefix (``r``, ``b``, ``f``...).
    """
    tokens = [t for t in ctx.tokens(line) if t.end <= col and t.kind != "comment"]
    likely: list[int] = []
    others: list[int] = []
    previous: _Token | None = None
    for token in tokens:
        operand_start = previous is None or previous.text in _OPERAND_BEFORE
        (likely if operand_start else others).append(token.start)
        if token.kind == "name" and re.fullmatch(r"[rRbBuUfF]{1,2}", token.text):
            likely.append(token.end)
        previous = token
    if tokens:
        others.append(tokens[-1].end)
    points = sorted(set(likely), reverse=True) + sorted(set(others) - set(likely), reverse=True)
    return points[: 2 * MAX_POSITIONS]


_OPERAND_BEFORE = {
    *"([{,=:",
    *("+=", "-=", "*=", "/=", "%=", "|=", "&=", "^=", "->", ":=", "==", "!="),
    *("return", "yield", "in", "not", "and", "or", "if", "else", "elif", "while", "assert"),
    *("print", "lambda", "await", "raise", "from", "import", "for", "with", "as"),
}


def _fix_quote(ctx: _Context) -> Iterator[_Candidate]:
    """An unterminated string: close it where it likely ends, add its opening quote, or drop it."""
    for line in _code_lines(ctx)[:3]:
        yield from _fix_quote_on(ctx, line)


def _fix_quote_on(ctx: _Context, line: int) -> Iterator[_Candidate]:
    text = ctx.contents[line]
    tokens = ctx.tokens(line)
    index = next((i for i, t in enumerate(tokens) if t.kind == "unterminated"), None)
    if index is None:
        return
    token = tokens[index]
    quote_at = token.start + len(token.text) - len(token.text.lstrip("rRbBuUfF"))
    quote = text[quote_at]
    ends = [i for i in range(quote_at + 2, len(text)) if text[i] in _STRING_ENDS]
    ends = [i for i in ends if text[i - 1] != "\\"][:MAX_POSITIONS]
    for col in [*ends, len(text.rstrip())]:
        yield from _insert_at(ctx, line, col, quote, "closed a string")
    # The closing quote of the string before may be the one missing: 'a: 'b' → 'a': 'b'.
    before = next((t for t in reversed(tokens[:index]) if t.kind == "string"), None)
    if before is not None:
        inner = range(before.start + 2, before.end - 1)
        for col in [i for i in inner if text[i] in _STRING_ENDS][:MAX_POSITIONS]:
            yield from _insert_at(ctx, line, col, text[before.end - 1], "added a missing quote")
    for col in _opening_points(ctx, line, token.start):
        yield from _insert_at(ctx, line, col, quote, "added a missing quote")
    yield from _edit(ctx, line, text[:quote_at] + text[quote_at + 1 :], "removed a stray quote")


_STRING_ENDS = ",)]}:; #"


def _complete_triple_quotes(ctx: _Context) -> Iterator[_Candidate]:
    """A triple quote that lost a character: ``""`` → ``\"\"\"``, nearest to the error first."""
    # Nearest to the error or to the statement's start: an unterminated string starts there.
    error, start = ctx.error.line, ctx.statement[0]
    lines = sorted(
        range(ctx.region[0], ctx.region[1] + 1), key=lambda i: min(abs(i - error), abs(i - start))
    )
    for line in lines:
        for match in re.finditer(r"(?<![\"'])(\"\"|'')(?![\"'])", ctx.contents[line]):
            quote = match.group()[0]
            yield from _insert_at(ctx, line, match.start(), quote, "completed a triple quote")


def _fix_indentation(ctx: _Context) -> Iterator[_Candidate]:
    """Re-indent the error line, or a line near it, to an enclosing block's level."""
    line = ctx.error.line
    previous = _previous_code_line(ctx, line)
    if previous is not None and ctx.error.message == "unexpected indent":
        # A dedented line in the middle of a block makes the next one look over-indented.
        prev_text = ctx.contents[previous]
        if not prev_text.rstrip().endswith(":"):
            indented = _indent(ctx.contents[line]) + prev_text.lstrip()
            yield from _edit(ctx, previous, indented, f"re-indented line {previous + 1}")
    for target in _code_lines(ctx):
        text = ctx.contents[target]
        if ctx.states[target].continued or text.lstrip().startswith("#"):
            continue
        for indent in _levels(ctx, target):
            reindented = indent + text.lstrip(" \t\f")
            yield from _edit(ctx, target, reindented, f"re-indented line {target + 1}")


def _previous_code_line(ctx: _Context, line: int) -> int | None:
    for i in range(line - 1, -1, -1):
        text = ctx.contents[i].strip()
        if text and not text.startswith("#") and not ctx.states[i].continued:
            return i
    return None


def _levels(ctx: _Context, line: int) -> list[str]:
    """Indentations the line could have: under a header before it, then the enclosing ones."""
    levels: list[str] = []
    previous = _previous_code_line(ctx, line)
    if previous is None:
        return [""]
    prev_indent = _indent(ctx.contents[previous])
    # The previous statement's last line says whether it opens a block.
    codes = (_code(ctx, i) for i in range(line - 1, previous - 1, -1))
    if next(c for c in codes if c.strip()).endswith(":"):
        levels.append(prev_indent + ctx.indent_unit)
    levels.append(prev_indent)
    width = len(prev_indent)
    for i in range(previous - 1, max(previous - 400, -1), -1):
        text = ctx.contents[i]
        if not text.strip() or text.lstrip().startswith("#") or ctx.states[i].continued:
            continue
        indent = _indent(text)
        if len(indent) < width:
            levels.append(indent)
            width = len(indent)
            if not width:
                break
    if "" not in levels:
        levels.append("")
    return levels


def _remove_duplicate(ctx: _Context) -> Iterator[_Candidate]:
    """``return return x`` → ``return x``: the second of two equal adjacent tokens goes."""
    for line in _code_lines(ctx)[:3]:
        tokens = ctx.tokens(line)
        text = ctx.contents[line]
        for first, second in itertools.pairwise(tokens):
            if first.text == second.text and first.kind != "comment":
                removed = text[: first.end] + text[second.end :]
                yield from _edit(ctx, line, removed, f"removed a duplicated '{first.text}'")


def _add_opener(ctx: _Context) -> Iterator[_Candidate]:
    """A closing bracket without an opener: add the opener on its line or the lines before."""
    for line in _code_lines(ctx)[:3]:
        depth = ctx.states[line].depth
        for token in ctx.tokens(line):
            if token.text in _CLOSER_OF:
                depth += 1
            elif token.text in _OPENER_OF and depth:
                depth -= 1
            elif token.text in _OPENER_OF:
                opener = _OPENER_OF[token.text]
                for target in (line, line - 1, line - 2):
                    if target < ctx.region[0] or ctx.states[target].string is not None:
                        break
                    end = token.start if target == line else len(ctx.contents[target])
                    points = [
                        *_name_splits(ctx, target, end, both_known=True),
                        *_opening_points(ctx, target, end),
                        *_name_splits(ctx, target, end, both_known=False),
                    ]
                    for col in points:
                        yield from _insert_opener(ctx, target, col, opener)
                break


def _remove_token(ctx: _Context) -> Iterator[_Candidate]:
    """Remove one token near the error: a stray word, operator or bracket (or half of ``==``)."""
    for line in _code_lines(ctx)[:5]:
        text = ctx.contents[line]
        tokens = [t for t in ctx.tokens(line) if t.kind != "comment"]
        if line == ctx.error.line:
            col = ctx.error.col
            tokens.sort(key=lambda t: (abs(t.start - col), t.start))
        for token in tokens[:MAX_POSITIONS]:
            start, end = token.start, token.end
            if start > 0 and text[start - 1] == " " and end < len(text) and text[end] == " ":
                end += 1
            if token.kind == "op" and len(token.text) > 1:
                halved = text[: token.start] + text[token.start + 1 :]
                yield from _edit(ctx, line, halved, f"removed a stray '{token.text[0]}'")
            removed = text[:start] + text[end:]
            if removed.strip():
                yield from _edit(ctx, line, removed, f"removed a stray '{token.text}'")


# -- checking and reporting ----------------------------------------------------------------------


def _apply(ctx: _Context, candidate: _Candidate, first: int, last: int) -> str:
    parts = []
    for i in range(first, last + 1):
        if i in candidate.lines:
            parts.append(candidate.lines[i] + ctx.lines[i][len(ctx.contents[i]) :])
        else:
            parts.append(ctx.lines[i])
    return "".join(parts)


def _accepts(ctx: _Context, candidate: _Candidate) -> bool:
    """Whether the whole file compiles with the candidate, checking its enclosing block first."""
    if any(not ctx.in_region(i) for i in candidate.lines):
        return False
    unit = _unit(ctx, candidate)
    if unit is not None and not _parses(_unit_text(ctx, candidate, unit)):
        return False
    return _compile_error(_apply(ctx, candidate, 0, len(ctx.lines) - 1)) is None


def _unit(ctx: _Context, candidate: _Candidate) -> _Unit | None:
    """Lines that parse on their own if the whole file does once the candidate is applied.

    Only when the tokenizer leaves the region in the same state as before, so that the lines
    after it still mean what they meant. The innermost ``def`` or ``class`` holds the candidate if
    its lines stay indented deeper than its header; else the top-level statements around it.
    None when that would be the whole file.
    """
    first, last = ctx.region
    contents = [candidate.lines.get(i, ctx.contents[i]) for i in range(first, last + 1)]
    region_states = _scan(contents, ctx.states[first])
    if region_states[-1] != ctx.states[last + 1]:
        return None
    code = [
        text
        for text, state in zip(contents, region_states, strict=False)
        if not state.continued and _code_text(text)
    ]
    width = min((len(_indent(text)) for text in code), default=0)
    if width not in ctx.enclosing_defs:
        ctx.enclosing_defs[width] = _enclosing_def(ctx.contents, ctx.states, ctx.region, width)
    block = ctx.enclosing_defs[width]
    if block is not None and all(text.startswith(block.indent) for text in code):
        return block
    # The top-level starts of the file with the candidate: in the region, scanned again.
    states = ctx.states[:first] + region_states + ctx.states[last + 2 :]
    text = ctx.contents[:first] + contents + ctx.contents[last + 1 :]
    low, high = min(candidate.lines), max(candidate.lines)
    index = bisect.bisect_left(ctx.top_starts, low) - 1
    start = (
        low
        if _starts_top_level(text, states, low)
        else (ctx.top_starts[index] if index >= 0 else 0)
    )
    end = next((i for i in range(high + 1, last + 1) if _starts_top_level(text, states, i)), None)
    if end is None:
        after = bisect.bisect_right(ctx.top_starts, last)
        ends = (i for i in ctx.top_starts[after:] if _starts_top_level(text, states, i))
        end = next(ends, len(text))
    if start == 0 and end == len(text):
        return None
    return _Unit(start, end - 1, "")


def _unit_text(ctx: _Context, candidate: _Candidate, unit: _Unit) -> str:
    text = _apply(ctx, candidate, unit.first, unit.last)
    if not unit.indent:
        return text
    return "".join(
        line[len(unit.indent) :] if line.startswith(unit.indent) else line
        for line in _split_lines(text)
    )


def _as_repair(ctx: _Context, candidate: _Candidate, error: _Error) -> Repair:
    first, last = min(candidate.lines), max(candidate.lines)
    return Repair(
        start_line=first,
        end_line=last,
        new_text=_apply(ctx, candidate, first, last),
        description=candidate.description,
        error=f"line {error.line + 1}: {error.message}",
    )
