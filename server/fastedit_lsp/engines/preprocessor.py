"""C and C++ text as tree-sitter can read it: one preprocessor branch, macro uses set aside.

Pure (stdlib only). tree-sitter parses C/C++ without running the preprocessor, so correct code
looks broken where a conditional's branches each open a brace (``#if A`` ``if (a) {`` ``#else``
``if (b) {`` ``#endif``), where a directive sits inside an expression, or where a macro expands
to something the grammar cannot guess (a parameter list, a statement without ``;``, a string
between string literals). :func:`normalize` rewrites such text, byte for byte the same length
(only bytes other than newlines become spaces), so offsets and lines keep their meaning:

- every conditional directive line is blanked, and of each group only the branches overlapping
  the edited region are kept (so a draft is never blanked away), else the first;
- the other directive lines (``#define`` between enumerators...) are blanked; the check parses
  a draft's directives on their own;
- the function-like uses of macro-like names (upper case) lose their arguments, or vanish when
  they are a statement on their own line or name a namespace's visibility, a macro between a
  declarator and its body or ``;`` becomes ``()``, attribute macros after a declarator's ``)``
  (``__THROW __nonnull ((1))``, on the next lines too) vanish, and so do specifier macros before
  a name (``_GLIBCXX20_CONSTEXPR void f``).

The parse check (``engines.parse``) compares the document before the job and the draft's
document in this form only when the plain comparison fails, both texts normalized alike. Before
that, every C/C++ text is parsed :func:`masked`: the macro uses that are never anything else
blanked.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

#: A conditional directive and its keyword.
_DIRECTIVE = re.compile(rb"[ \t]*#[ \t]*(ifdef|ifndef|if|elifdef|elifndef|elif|else|endif)\b")
#: Any directive, found anywhere (a literal ``#`` first: fast), kept when only blanks precede
#: it: the conditional ones make groups, the others (``#define`` in an ``enum``...) are blanked.
_DIRECTIVE_ANYWHERE = re.compile(
    rb"#[ \t]*(ifdef|ifndef|if|elifdef|elifndef|elif|else|endif|define|undef|include_next"
    rb"|include|pragma|error|warning|line)\b"
)
_CONDITIONALS = (b"if", b"ifdef", b"ifndef", b"elif", b"elifdef", b"elifndef", b"else", b"endif")
_OTHER_DIRECTIVE = re.compile(
    rb"[ \t]*#[ \t]*(define|undef|include_next|include|pragma|error|warning|line)\b"
)
_OPENS = (b"if", b"ifdef", b"ifndef")
_BRANCHES = (b"elif", b"elifdef", b"elifndef", b"else")

#: A macro-like name: upper case (``K_SIZE``, ``OF``, ``DEFINE_CONSTANT_INTEGER``) or reserved.
_NAME = rb"(?:__[A-Za-z0-9_]+|_[A-Z][A-Za-z0-9_]*|[A-Z][A-Z0-9_]+)"
#: A macro-like name called (its arguments are matched by :func:`_arguments`): all upper case
#: (``__alloc_on_copy(a, b)`` is a function).
_CALL = re.compile(rb"\b_{0,2}[A-Z][A-Z0-9_]+[ \t]*\(")
#: A top-level declarator followed by a macro standing for its parameters
#: (``base64_encode BASE64_ENC_PARAMS`` then ``{``).
_PARAMS = re.compile(
    rb"^[A-Za-z_][A-Za-z0-9_]*(?:[ \t*]+[A-Za-z_][A-Za-z0-9_]*)*[ \t]+("
    + _NAME
    + rb")(?=[ \t]*(?:;|\n?[ \t]*\{))",
    re.M,
)
#: Balanced arguments, three levels deep, over lines (``__nonnull ((1, 2))``).
_ARGS = rb"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
#: Attribute macros after a declarator's ``)``, on its line or the next ones, up to its ``;``,
#: ``{``, ``,`` or ``=`` (``__THROW __nonnull ((1)) __wur;``).
_ATTRIBUTES = re.compile(rb"\)((?:\s*\b" + _NAME + rb"\b(?:\s*" + _ARGS + rb")?)+)(?=\s*[;{,=])")
#: A specifier macro: upper case with an underscore (``_GLIBCXX20_CONSTEXPR``,
#: ``NCURSES_CXX_IMPEXP``) before a name, and not called.
_SPECIFIER = re.compile(
    rb"(?<![\w#])(?<!struct )(?<!union )(?<!enum )(?<!class )(?<!typedef )"
    rb"((?:_{1,2}[A-Z][A-Z0-9_]*|[A-Z][A-Z0-9]*_[A-Z0-9_]+))\b(?=[ \t\n]+[A-Za-z_])"
)
#: Lines a macro call's arguments may span.
ARGUMENT_LINES = 8
_CLOSERS = {ord(")"): ord("("), ord("]"): ord("["), ord("}"): ord("{")}
_QUOTES = (ord('"'), ord("'"))


#: A macro-like C/C++ name: reserved (``__THROW``, ``_GLIBCXX_VISIBILITY``) or upper case with
#: an underscore (``Z3_API``, ``CPy_COLD``, ``TEST_CASE``).
_MACRO = rb"(?:__[A-Za-z0-9_]+|_[A-Z][A-Za-z0-9_]*|[A-Z][A-Za-z0-9]*_[A-Z][A-Z0-9_]*)"
#: Upper case with an underscore only (``__m256i`` and the like are types).
_UPPER_MACRO = rb"[A-Z][A-Za-z0-9]*_[A-Z][A-Z0-9_]*"
#: Uses of macros tree-sitter cannot expand, blanked (same length) before C/C++ is parsed: a
#: macro alone on its line, one between a type and a name, attributes after a declarator, and
#: the arguments of a function-like macro that opens a definition (``TEST_CASE("x") {``).
_MACRO_USES = (
    re.compile(rb"^[ \t]*(" + _MACRO + rb")[ \t]*$", re.M),
    re.compile(rb"(?<=[A-Za-z0-9_*])[ \t]+(" + _UPPER_MACRO + rb")(?=[ \t]+\**[A-Za-z_])"),
    re.compile(rb"(?<=\))[ \t]*(" + _MACRO + rb"(?:[ \t]*\([^()\n]*\))?)(?=[ \t]*[;{\n])"),
    re.compile(rb"^" + _MACRO + rb"(\([^()\n]*\))(?=[ \t]*\n?[ \t]*\{)", re.M),
)


def _blank(match: re.Match[bytes]) -> bytes:
    start, end = match.span(1)
    whole = match.group(0)
    offset = match.start(0)
    inner = b"()" if whole[start - offset : end - offset].startswith(b"(") else b""
    blank = b" " * (end - start - len(inner))
    return whole[: start - offset] + (inner[:1] + blank + inner[1:]) + whole[end - offset :]


#: The grammars whose text is masked before it is parsed.
MASKED = frozenset({"c", "cpp"})


def masked(language: str, data: bytes) -> bytes:
    """What the grammar parses: for C and C++, the text with unexpandable macro uses blanked
    (byte offsets unchanged), so that correct code using them does not look broken."""
    if language not in MASKED:
        return data
    for pattern in _MACRO_USES:
        data = pattern.sub(_blank, data)
    return data


def _arguments(data: bytes, open_paren: int) -> int:
    """The end (past the ``)``) of the arguments opening at ``open_paren`` when every bracket in
    them is matched (strings skipped, each on its line), over at most :data:`ARGUMENT_LINES`
    lines (zlib's ``OF((Byte *compr, uLong comprLen,`` then the rest on the next line); -1
    otherwise: a broken call stays as it is, for the parse to see. Over lines, a ``;`` directly
    within the parentheses ends a statement, so it ends the search too (``FOO(a, b`` then
    ``g(c);`` is a call left open, not one closed by a later line's ``)``)."""
    stack: list[int] = []
    i = open_paren
    size = len(data)
    lines = 0
    while i < size:
        c = data[i]
        if c == 10:  # newline
            lines += 1
            if lines >= ARGUMENT_LINES:
                return -1
        elif c in _QUOTES:
            i += 1
            while i < size and data[i] != c and data[i] != 10:
                i += 2 if data[i] == 92 else 1  # backslash escapes
            if i >= size or data[i] != c:
                return -1
        elif c == 59 and lines and stack and stack[-1] == 40:  # ; within ( over lines
            return -1
        elif c in (40, 91, 123):  # ( [ {
            stack.append(c)
        elif c in _CLOSERS:
            if not stack or stack.pop() != _CLOSERS[c]:
                return -1
            if not stack:
                return i + 1
        i += 1
    return -1


def _spaces(data: bytes) -> bytes:
    """``data`` blanked: every byte a space but newlines."""
    return re.sub(rb"[^\n]", b" ", data)


def _directives(data: bytes) -> Iterator[re.Match[bytes]]:
    """What ``_DIRECTIVE_ANYWHERE.finditer`` finds, from each ``#`` found by a byte search
    (the regex alone stepped through every byte: 0.2 ms on a 300 KB text with no ``#``)."""
    at = data.find(b"#")
    while at >= 0:
        match = _DIRECTIVE_ANYWHERE.match(data, at)
        if match is not None:
            yield match
            at = match.end()
        else:
            at += 1
        at = data.find(b"#", at)


def conditionals(data: bytes, keep: tuple[int, int]) -> bytes:
    """``data`` with its conditional directives blanked and, of each group, the branches blanked
    but those overlapping bytes ``keep`` (the edited region: a draft is never blanked away,
    and one written across an ``#else`` keeps both sides), or else the first."""
    # Each directive: (start, end) of its line(s); each group: its directives' indexes.
    spans: list[tuple[int, int]] = []
    others: list[tuple[int, int]] = []
    taken = 0
    stack: list[list[int]] = []
    groups: list[list[int]] = []
    for match in _directives(data):
        start = data.rfind(b"\n", 0, match.start()) + 1
        if data[start : match.start()].strip(b" \t"):
            continue  # not at the start of its line
        end = data.find(b"\n", match.end())
        end = len(data) if end < 0 else end
        while data[end - 1 : end] == b"\\" and end < len(data):  # continued on the next line
            following = data.find(b"\n", end + 1)
            end = len(data) if following < 0 else following
        if start < taken:
            continue  # a continuation line already taken
        taken = end
        keyword = match.group(1)
        if keyword not in _CONDITIONALS:
            others.append((start, end))
            continue
        spans.append((start, end))
        index = len(spans) - 1
        if keyword in _OPENS:
            stack.append([index])
        elif not stack:
            continue  # an #else or #endif whose #if is outside the text
        elif keyword in _BRANCHES:
            stack[-1].append(index)
        else:
            group = stack.pop()
            group.append(index)
            groups.append(group)
    if not spans and not others:
        return data
    spans.append((len(data) + 1, len(data) + 1))  # where unterminated groups end
    for group in stack:
        group.append(len(spans) - 1)
        groups.append(group)
    blank = spans[:-1] + others
    first, last = keep
    for group in groups:
        branches = list(itertools.pairwise(group))
        kept = set()
        for i, (top, bottom) in enumerate(branches):
            a, b = spans[top][0], spans[bottom][0]
            if (a < last and first < b) if first < last else a <= first < b:
                kept.add(i)
        for i, (top, bottom) in enumerate(branches):
            if i not in (kept or {0}):
                blank.append((spans[top][1], min(spans[bottom][0], len(data))))
    out = bytearray(data)
    for start, end in blank:
        if start < end:
            out[start:end] = _spaces(data[start:end])
    return bytes(out)


def macros(data: bytes, spans: list[tuple[int, int]] | None = None) -> bytes:
    """``data`` with the macro uses tree-sitter cannot expand rewritten (same length): a call
    alone on its line (without ``;``) blanked, ``OF((int, char *))`` reduced to its parameter
    list, other calls to the macro's name (``K_SIZE(void *)``, ``"s" ROUND_A()``) unless they
    open a block, and a macro standing for a declarator's parameters made ``()``."""
    within = spans if spans is not None else [(0, len(data))]
    out = bytearray(data)
    for a, b in within:
        for match in _ATTRIBUTES.finditer(data, a, min(b, len(data))):
            start, end = match.span(1)
            out[start:end] = _spaces(data[start:end])
        for match in _SPECIFIER.finditer(data, a, min(b, len(data))):
            line = data.rfind(b"\n", 0, match.start()) + 1
            if data[line : match.start()].lstrip()[:1] != b"#":
                start, end = match.span(1)
                out[start:end] = b" " * (end - start)
    data = bytes(out)
    matches = (m for a, b in within for m in _CALL.finditer(data, a, min(b, len(data))))
    for match in matches:
        open_paren = match.end() - 1
        close = _arguments(data, open_paren)
        line_start = data.rfind(b"\n", 0, match.start()) + 1
        if (
            close < 0
            or out[match.start()] == 32
            or data[line_start : match.start()].lstrip()[:1] == b"#"
        ):
            continue  # broken, inside a call already blanked, or a directive's
        line_end = data.find(b"\n", close)
        line_end = len(data) if line_end < 0 else line_end
        rest = data[close:line_end].strip()
        lead = data[line_start : match.start()].strip()
        if (not lead and (not rest or rest.startswith(b"//"))) or lead.startswith(b"namespace"):
            out[match.start() : close] = _spaces(data[match.start() : close])
        elif (
            data[open_paren + 1 : open_paren + 2] == b"("
            and _arguments(data, open_paren + 1) == close - 1
        ):
            out[match.start() : open_paren + 1] = b" " * (open_paren + 1 - match.start())
            out[close - 1] = 32
        elif not re.match(rb"[ \t]*\n?[ \t]*\{", data[close : close + 80]):
            out[open_paren:close] = _spaces(data[open_paren:close])
    data = bytes(out)
    for a, b in within:
        for match in _PARAMS.finditer(data, a, min(b, len(data))):
            start, end = match.span(1)
            out[start:end] = b"()" + b" " * (end - start - 2)
    return bytes(out)


def normalize(
    data: bytes, keep: tuple[int, int], spans: list[tuple[int, int]] | None = None
) -> bytes:
    """``data`` (C or C++) as tree-sitter can read it, keeping the preprocessor branches that
    overlap bytes ``keep`` (see the module's docstring); macro uses only within ``spans`` if
    given (the parts the parse reads)."""
    return macros(conditionals(data, keep), spans)


def directives(data: bytes, start: int, end: int) -> list[bytes]:
    """The directive lines within bytes ``[start, end)``, a conditional one closed by an
    ``#endif``: :func:`normalize` blanks them, so the check parses each on its own."""
    first = data.rfind(b"\n", 0, start) + 1
    out = []
    for line in data[first:end].split(b"\n"):
        match = _DIRECTIVE.match(line) or _OTHER_DIRECTIVE.match(line)
        if match is None or line.endswith(b"\\"):
            continue
        opens = match.group(1) in _OPENS
        out.append(line + b"\n#endif\n" if opens else line + b"\n")
    return out


def conditional_balance(data: bytes, start: int, end: int) -> int:
    """Conditional groups opened minus closed (``#if``/``#ifdef``/``#ifndef`` against
    ``#endif``) by the directive lines of bytes ``[start, end)``, each line read whole."""
    first = data.rfind(b"\n", 0, start) + 1
    last = data.find(b"\n", end)
    balance = 0
    for line in data[first : len(data) if last < 0 else last].split(b"\n"):
        match = _DIRECTIVE.match(line)
        if match is not None:
            keyword = match.group(1)
            balance += 1 if keyword in _OPENS else -1 if keyword == b"endif" else 0
    return balance
