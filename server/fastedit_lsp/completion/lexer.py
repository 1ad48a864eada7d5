"""A rough per-language lexer for completion post-processing: strings, comments and brackets.

Pure: no pygls, no httpx, no I/O. :class:`Cursor` reads the document around a cursor once (its
language's :class:`Lang`, the brackets open at the cursor, the rest of its line, the suffix's
window); :func:`scan` scans a completion in its place after the prefix. Shared by
:mod:`.cut` (scope, block boundary, brackets). Brackets are counted outside strings and
comments, recognised roughly per language (``#``, ``//`` and ``/* */`` comments; quotes, triple
quotes, backticks; C-like ``'x'`` character literals, so that Rust lifetimes are not strings).
Each scan is linear and bounded: the last :data:`PREFIX_WINDOW` characters of the prefix (from a
line start), the first :data:`SUFFIX_WINDOW` of the suffix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

PREFIX_WINDOW = 4000
"""How much of the prefix is scanned for open brackets and strings."""
SUFFIX_WINDOW = 2000
"""How much of the suffix is read for repeats and for the closers it supplies."""
TAB_WIDTH = 4
"""Columns of a tab when comparing indentation: models often answer in spaces in a tabbed file."""

_REST_CHARS = 500  # the longest rest of the cursor line compared with a completion's tail
OPENERS = "([{"
PAIR: Mapping[str, str] = MappingProxyType({")": "(", "]": "[", "}": "{"})
BREAK = re.compile(r"\r\n|\r|\n")
SPACE = " \t\f\v"
# Past the end of the scanned text: a string or comment still open there covers it.
SENTINEL = "\x00"


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
class Lang:
    """How one language family writes strings, comments and block openers."""

    tokens: re.Pattern[str]
    openers: tuple[str, ...]  # a line ending in one of these opens a block
    colon_blocks: bool = False  # ":" opens a block only outside brackets (dicts, slices, lambdas)
    continuations: re.Pattern[str] | None = None  # lines at the opener's depth that continue it


_BRACKETS = ("(", "[", "{")
_PYTHON = Lang(
    _token_pattern(hash_comments=True, triple_quotes=True),
    (":", *_BRACKETS),
    colon_blocks=True,
    continuations=re.compile(r"(?:elif|else|except|finally)\b"),
)
_YAML = Lang(_token_pattern(hash_comments=True), (":", "[", "{"), colon_blocks=True)
_HASH = Lang(_token_pattern(hash_comments=True), _BRACKETS)
_JS = Lang(
    _token_pattern(slash_comments=True, block_comments=True, backticks=True), (*_BRACKETS, "=>")
)
_GO = Lang(
    _token_pattern(slash_comments=True, block_comments=True, backticks=True, char_literals=True),
    _BRACKETS,
)
_RUST = Lang(
    _token_pattern(slash_comments=True, block_comments=True, char_literals=True), (*_BRACKETS, "=>")
)
_C = Lang(_token_pattern(slash_comments=True, block_comments=True, char_literals=True), _BRACKETS)
_JAVA = Lang(
    _token_pattern(
        slash_comments=True, block_comments=True, triple_quotes=True, char_literals=True
    ),
    (*_BRACKETS, "->"),
)
_CSHARP = Lang(
    _token_pattern(
        slash_comments=True, block_comments=True, triple_quotes=True, char_literals=True
    ),
    (*_BRACKETS, "=>"),
)
_CSS = Lang(_token_pattern(block_comments=True), _BRACKETS)
GENERIC = Lang(_token_pattern(), _BRACKETS)

LANGS: Mapping[str, Lang] = MappingProxyType(
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
class Cursor:
    """What the post-processing needs to know about the document around the cursor."""

    lang: Lang
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
    def of(cls, prefix: str, suffix: str, language_id: str) -> Cursor:
        lang = LANGS.get(language_id, GENERIC)
        tail = prefix[-PREFIX_WINDOW:]
        if len(prefix) > PREFIX_WINDOW:
            # Start at a line start: less likely to start inside a string.
            first_break = BREAK.search(tail)
            if first_break:
                tail = tail[first_break.end() :]
        line_start = max(tail.rfind("\n"), tail.rfind("\r")) + 1
        window = suffix[:SUFFIX_WINDOW]
        rest_end = BREAK.search(window)
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
    tail: str, line_start: int, lang: Lang
) -> tuple[int, tuple[str, ...], tuple[str, ...], bool]:
    """Where a completion's scan may resume, the brackets open there and at the cursor, and
    whether the cursor is inside a string or comment.

    The resume point is the cursor line's start (or the start of a string or comment spanning
    it): tokens before it cannot change whatever is typed after the cursor.
    """
    stack: list[str] = []
    resume: tuple[int, tuple[str, ...]] | None = None
    in_token = False
    for match in lang.tokens.finditer(tail + SENTINEL):
        start, end = match.span()
        if resume is None and (start >= line_start or end > line_start):
            resume = (min(start, line_start), tuple(stack))
        bracket = match.group("b")
        if bracket:
            apply_bracket(stack, bracket)
        elif end > len(tail):
            in_token = True
    if resume is None:
        resume = (line_start, tuple(stack))
    return resume[0], resume[1], tuple(stack), in_token


def apply_bracket(stack: list[str], bracket: str) -> bool:
    """Push an opener or pop its closer; False for a closer that matches nothing (left alone)."""
    if bracket in OPENERS:
        stack.append(bracket)
        return True
    if stack and stack[-1] == PAIR[bracket]:
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
class Walk:
    """The brackets of a completion scanned in its place after the prefix."""

    brackets: list[tuple[int, str]]  # (position in the completion, bracket), in order
    skips: list[tuple[int, int]]  # spans of strings and comments touching the completion
    stack: tuple[str, ...]  # brackets open where the completion starts


def scan(text: str, cur: Cursor) -> Walk:
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
            apply_bracket(stack, bracket)
        elif bracket:
            brackets.append((start - offset, bracket))
        elif end > offset:
            skips.append((start - offset, end - offset))
    return Walk(brackets, skips, tuple(stack))
