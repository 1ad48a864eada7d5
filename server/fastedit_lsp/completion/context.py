"""What an inline completion sends a model: prefix, suffix and snippets, within a token budget.

Pure: no pygls, no httpx, no I/O. It runs on every keystroke, so its work is bounded by the budget
and by caps, never by the size of a document: the current document is read only near the cursor
(the lines the budget takes, the lines whose identifiers rank the snippets, its first lines for
its imports), the cursor line only up to :data:`MAX_HEAD_CHARS` / :data:`MAX_TAIL_CHARS`
characters either side, and each other open document only up to :data:`MAX_INDEXED_CHARS`,
indexed once per :class:`OpenDocument` instance.

The budget is in estimated tokens (:func:`estimate_tokens`). The prefix gets 60% of it, the suffix
20% and the snippets the rest; a share a part cannot use (a short document, no other documents)
goes to the others. The prefix and suffix are whole lines, nearest the cursor first, plus the
cursor line's head and tail; their line endings are normalised to ``\\n``. Each snippet is charged
its text, its path and :data:`SNIPPET_OVERHEAD_TOKENS` for the label the prompt gives it.

Snippets come from the other open documents only: never from the current document (same path),
never from one whose path matches the ``exclude`` patterns (:func:`context.is_excluded`). Whether a
file is git-ignored (``settings.GIT_IGNORED``, ``<git-ignored>``) cannot be decided here: the caller
asks git and leaves such documents out of ``others`` before calling. A snippet is whole lines: the
definition (``def``, ``class``, ``function``, ``func``, ``fn``, ``const`` ...) of an identifier used
near the cursor scores highest, then windows of lines that share identifiers with the text near
the cursor (Jaccard overlap); a document the current one imports scores higher, one in another
language lower.
"""

from __future__ import annotations

import heapq
import math
import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import NamedTuple

from ..core.document import Document, Point
from ..prompting.context import is_excluded

#: Shares of the budget; the snippets get the rest.
PREFIX_SHARE = 0.6
SUFFIX_SHARE = 0.2
#: The cursor line's head and tail are always kept, but a minified or generated line can be
#: megabytes long: only this many characters nearest the cursor are.
MAX_HEAD_CHARS = 2_000
MAX_TAIL_CHARS = 1_000
#: A longer whole line ends the prefix or the suffix (it is data, not context worth its cost).
MAX_CONTEXT_LINE_CHARS = 4_000
#: Lines before and after the cursor whose identifiers rank the snippets.
NEAR_LINES_BEFORE = 30
NEAR_LINES_AFTER = 10
#: Imports are looked for in the document's first lines (and near the cursor).
IMPORT_SCAN_LINES = 200
#: Characters of each line read for identifiers and imports.
MAX_SCANNED_LINE_CHARS = 500
#: Characters of each other document read (once per OpenDocument instance).
MAX_INDEXED_CHARS = 256_000
#: At most this many other documents are read, imported ones and same-language ones first.
MAX_OTHER_DOCUMENTS = 32
#: Lines of a scored window; windows overlap by half.
WINDOW_LINES = 16
#: A definition snippet is cut after this many lines (before the budget cuts it further).
MAX_DEFINITION_LINES = 60
#: A longer line ends a snippet: a snippet is whole lines, and such a line is rarely worth it.
MAX_SNIPPET_LINE_CHARS = 400
MAX_SNIPPETS = 6
#: A window qualifies with at least this many identifiers shared with the cursor's neighbourhood
#: and at least this Jaccard overlap; below that, shared names are coincidence (``value``).
MIN_SHARED = 3
MIN_JACCARD = 0.05
#: Score parts: a definition of a name used near the cursor outranks any window (Jaccard <= 1).
DEFINITION_SCORE = 1.0
IMPORT_BONUS = 0.5
OTHER_LANGUAGE_FACTOR = 0.5
#: Each snippet is charged its path plus this much for the label and fence the prompt puts
#: around it, so the caller's framing of a snippet does not push a prompt over the budget.
SNIPPET_OVERHEAD_TOKENS = 4

#: Characters per token of code for a model family, by a substring of the model id (first match
#: wins, so narrower names come first). Newlines and non-ASCII characters are counted apart (see
#: estimate_tokens), and the figures are on the low side so that the estimate errs high: larger
#: vocabularies pack more code into a token; Llama 2's 32k SentencePiece vocabulary the least.
CHARS_PER_TOKEN: tuple[tuple[tuple[str, ...], float], ...] = (
    (("codellama", "llama-2", "llama2"), 3.0),
    (("gpt", "o200k", "cl100k"), 3.8),
    (("llama",), 3.5),
    (("qwen",), 3.5),
    (("deepseek",), 3.4),
    (("codestral", "devstral", "mistral", "mixtral", "ministral"), 3.2),
    (("gemma",), 3.4),
)
DEFAULT_CHARS_PER_TOKEN = 3.5

# Token costs are kept in thousandths of a token, so that costs add up exactly and the rounding
# happens once per part (a float sum could round a total over the budget).
_MILLI = 1000
# Tokenizers merge runs of spaces and tabs: past its first four characters, a run costs an eighth
# of a token per character. The cost of a run is concave, so splitting text never lowers the sum.
_RUN_FREE = 4
_RUN_MILLI = 125
_LONG_RUN = re.compile(r"[ \t]{5,}")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")

# ASCII-first: twice as fast as a Unicode letter class, and code identifiers start with one.
_IDENTIFIER = re.compile(r"[A-Za-z_]\w{2,}")
_LINE_BREAKS = re.compile(r"\r\n|\r")
#: Words that say nothing about what code is about: keywords and the commonest builtins of the
#: languages we see most (identifiers of one or two characters are ignored anyway).
_KEYWORD_WORDS = """
    and assert async await break class continue def del elif else except finally for from global
    import lambda nonlocal not pass raise return try while with yield None True False self cls
    len str int float bool list dict set tuple range print isinstance super object type bytes
    case catch const debugger default delete enum export extends false function instanceof let new
    null switch this throw true typeof var void undefined static get of interface implements
    private protected public readonly abstract declare namespace module keyof infer never unknown
    any string number boolean symbol bigint console require exports
    chan defer fallthrough func goto map package select struct nil error byte rune make append cap
    crate extern impl loop match mod move mut pub ref Self trait unsafe use where dyn Some Ok Err
    Box Vec String Option Result final long short char double synchronized volatile transient
    native throws sizeof union typedef unsigned signed auto register inline include define ifdef
    ifndef endif template typename using virtual override nullptr std end nil elsif unless until
    begin rescue ensure then val fun when suspend
"""
_KEYWORDS = frozenset(_KEYWORD_WORDS.split())
#: A line that defines a name: block keywords then the name (a Go method's receiver skipped), or a
#: top-level assignment. Searched for in "\n" + text: a literal first character lets the regex
#: engine jump from line to line.
_DEFINITION = re.compile(
    r"\n(?:(?P<indent>[ \t]*)"
    r"(?:(?:export|default|pub(?:\([^)\n]*\))?|async|static|public|private|protected|internal"
    r"|abstract|final|override|declare|inline|unsafe|extern|open|sealed|data|suspend"
    r"|const(?=[ \t]+fn\b))[ \t]+)*"
    r"(?P<keyword>def|class|function\*?|func|fn|const|let|var|val|type|struct|enum|interface"
    r"|trait|module|object|record|protocol|impl|macro_rules!)[ \t]+"
    r"(?:\([^)\n]*\)[ \t]*)?"
    r"(?P<name>[^\W\d]\w*)"
    r"|(?P<assigned>[^\W\d]\w*)[ \t]*(?::[^=\n]*)?=(?!=))"
)
# Locals declared with these are not worth a snippet; only top-level ones count as definitions.
_VARIABLE_KEYWORDS = frozenset({"const", "let", "var", "val"})
_IMPORT_LINE = re.compile(
    r"^\s*(?:import|from|use|mod|using|require|require_relative|include|#\s*include"
    r"|@import|@use)\b|\brequire\s*\(|\bimport\s*\("
)
_GO_IMPORT_BLOCK = re.compile(r"^\s*import\s*\(\s*$")
_MODULE_WORD = re.compile(r"[\w-]{2,}")
# File stems that name their directory's module rather than themselves.
_PACKAGE_STEMS = frozenset({"__init__", "index", "mod"})
_COMMENT_OR_DECORATOR = ("@", "#", "//", "/*", "*", "--", ";;")
# Language ids of one family share identifiers and import each other.
_LANGUAGE_FAMILY = {
    "javascript": "js",
    "javascriptreact": "js",
    "typescript": "js",
    "typescriptreact": "js",
    "c": "c",
    "cpp": "c",
    "cuda-cpp": "c",
    "objective-c": "c",
    "objective-cpp": "c",
}


@dataclass(frozen=True)
class OpenDocument:
    """Another document open in the editor, a candidate source of snippets.

    Keep one instance per document version and pass the same instances again: the index built on
    first use (its lines, definitions and identifier windows) is kept on the instance, so a
    document that has not changed costs a few dictionary look-ups per keystroke.
    """

    #: File path, for exclude matching and for labelling snippets.
    path: str
    text: str
    language_id: str

    @cached_property
    def _index(self) -> _Index:
        return _Index.of(self.text)


@dataclass(frozen=True)
class Snippet:
    """Whole lines of another document, and how relevant they are to the cursor."""

    path: str
    text: str
    score: float


@dataclass(frozen=True)
class CompletionContext:
    """The text around a cursor that goes into an inline-completion prompt."""

    #: Text before the cursor: whole lines, then the cursor line's head.
    prefix: str
    #: Text after the cursor: the cursor line's tail, then whole lines.
    suffix: str
    #: Most relevant first.
    snippets: tuple[Snippet, ...]
    #: Whether the prefix or the suffix was cut by the budget or a cap.
    truncated: bool
    language_id: str
    path: str
    #: prefix + suffix + each snippet with its label (snippet_tokens); never above the budget.
    estimated_tokens: int
    #: The exclude pattern the current document matches: then nothing of it is in the context.
    excluded_by: str | None = None


# -- token estimates ---------------------------------------------------------------------------


def estimate_tokens(text: str, model: str | None = None) -> int:
    """A conservative (over-)estimate of the token count of code for this model family.

    ASCII characters cost ``1 / chars-per-token`` of the family (:data:`CHARS_PER_TOKEN`), except
    past the fourth character of a run of spaces or tabs (an eighth); a line break costs a whole
    token, a non-ASCII character one (two outside the Basic Multilingual Plane), as byte-level
    tokenizers split them. Rounded up. The estimate of a text never exceeds the sum of the
    estimates of its pieces.
    """
    return _tokens(_milli(text, _milli_per_char(model)))


def snippet_tokens(snippet: Snippet, model: str | None = None) -> int:
    """What a snippet costs in the budget: its text, its path and its label."""
    return _snippet_tokens(snippet, _milli_per_char(model))


def _milli_per_char(model: str | None) -> int:
    name = (model or "").lower()
    for keys, chars in CHARS_PER_TOKEN:
        if any(key in name for key in keys):
            return math.ceil(_MILLI / chars)
    return math.ceil(_MILLI / DEFAULT_CHARS_PER_TOKEN)


def _milli(text: str, per_char: int) -> int:
    """Estimated cost of ``text`` in thousandths of a token."""
    if not text:
        return 0
    breaks = text.count("\n") + text.count("\r")
    if text.isascii():
        wide = astral = 0
    else:
        wide = len(text) - len(text.encode("ascii", "ignore"))
        astral = len(_ASTRAL.findall(text))
    milli = (len(text) - breaks - wide) * per_char + (breaks + wide + astral) * _MILLI
    if "     " in text or "\t" in text:
        for run in _LONG_RUN.finditer(text):
            milli -= (run.end() - run.start() - _RUN_FREE) * (per_char - _RUN_MILLI)
    return milli


def _tokens(milli: int) -> int:
    return -(-milli // _MILLI)


def _label_tokens(path: str, per_char: int) -> int:
    return _tokens(_milli(path, per_char)) + SNIPPET_OVERHEAD_TOKENS


def _snippet_tokens(snippet: Snippet, per_char: int) -> int:
    return _tokens(_milli(snippet.text, per_char)) + _label_tokens(snippet.path, per_char)


# -- building ----------------------------------------------------------------------------------


def build(
    document: Document,
    cursor: Point,
    *,
    path: str,
    others: Sequence[OpenDocument],
    budget_tokens: int,
    exclude: Sequence[str],
    model: str | None = None,
) -> CompletionContext:
    """The context of an inline completion at ``cursor``, within ``budget_tokens``.

    ``others`` are the other open documents, git-ignored ones already removed by the caller;
    ``exclude`` the ``context.exclude`` globs. A current document that ``exclude`` matches yields an
    empty context (``excluded_by`` says why): nothing of it may reach a model.
    """
    patterns = tuple(exclude)
    per_char = _milli_per_char(model)
    budget = max(budget_tokens, 0)
    if (excluded_by := is_excluded(path, patterns)) is not None:
        has_text = document.end != Point(0, 0)
        return CompletionContext("", "", (), has_text, document.language_id, path, 0, excluded_by)
    # Clamped as LSP clamps positions: before the start is the start, past the end the end.
    if cursor.line < 0:
        cursor = Point(0, 0)
    elif cursor.line >= document.line_count:
        cursor = document.end
    line_index = cursor.line
    line = document.line(line_index)
    col = min(max(cursor.col, 0), len(line))
    head = line[max(0, col - MAX_HEAD_CHARS) : col]
    tail = line[col : col + MAX_TAIL_CHARS]
    prefix = _Side(
        head,
        capped=col > MAX_HEAD_CHARS,
        before=True,
        lines=(document.line(i) + "\n" for i in range(line_index - 1, -1, -1)),
        per_char=per_char,
    )
    suffix = _Side(
        tail,
        capped=len(line) - col > MAX_TAIL_CHARS,
        before=False,
        lines=("\n" + document.line(i) for i in range(line_index + 1, document.line_count)),
        per_char=per_char,
    )
    prefix_share = math.floor(budget * PREFIX_SHARE)
    suffix_share = math.floor(budget * SUFFIX_SHARE)
    prefix.grow(prefix_share)
    suffix.grow(suffix_share)
    # A side that has taken all it can (a short document) leaves its share to the snippets.
    allowance = budget - prefix_share - suffix_share
    if prefix.settled:
        allowance += prefix_share - prefix.tokens
    if suffix.settled:
        allowance += suffix_share - suffix.tokens
    snippets: list[Snippet] = []
    if allowance > 0 and others:
        query = _near_identifiers(document, line_index, head, tail)
        snippets = _snippets(
            others,
            path=path,
            language_id=document.language_id,
            query=query,
            modules=_imported_modules(document, line_index) if query else set(),
            patterns=patterns,
            allowance=allowance,
            per_char=per_char,
        )
    spent = sum(_snippet_tokens(snippet, per_char) for snippet in snippets)
    # What the snippets left goes back to the prefix and the suffix, three to one as their shares.
    spare = budget - prefix.tokens - suffix.tokens - spent
    prefix.grow(prefix.tokens + spare * 3 // 4)
    suffix.grow(budget - prefix.tokens - spent)
    prefix.grow(budget - suffix.tokens - spent)
    return CompletionContext(
        prefix=prefix.text,
        suffix=suffix.text,
        snippets=tuple(snippets),
        truncated=not (prefix.complete and suffix.complete),
        language_id=document.language_id,
        path=path,
        estimated_tokens=prefix.tokens + suffix.tokens + spent,
    )


# -- prefix and suffix -------------------------------------------------------------------------


class _Side:
    """The prefix or the suffix, grown outward from the cursor up to a token limit.

    First the cursor line's part (``partial``: the head, cut from its start, or the tail, cut from
    its end), then whole lines, nearest first. Growing again with a larger limit continues where
    the last call stopped; a cut partial takes no lines, so the side stays contiguous.
    """

    def __init__(
        self, partial: str, *, capped: bool, before: bool, lines: Iterator[str], per_char: int
    ) -> None:
        self._partial = partial
        self._capped = capped
        self._before = before
        self._lines = lines
        self._per_char = per_char
        self._pending: str | None = None
        self._stopped = False
        self.kept = ""
        self.pieces: list[str] = []
        self.milli = 0
        self.partial_done = False
        self.exhausted = False

    @property
    def tokens(self) -> int:
        return _tokens(self.milli)

    @property
    def complete(self) -> bool:
        """Whether everything up to the document's edge is in."""
        return self.partial_done and self.exhausted

    @property
    def settled(self) -> bool:
        """Whether no larger limit would add anything."""
        whole_partial = len(self.kept) == len(self._partial)
        return whole_partial and (self._capped or self.exhausted or self._stopped)

    @property
    def text(self) -> str:
        if self._before:
            return "".join(reversed(self.pieces)) + self.kept
        return self.kept + "".join(self.pieces)

    def grow(self, limit_tokens: int) -> None:
        limit = limit_tokens * _MILLI
        if not self.partial_done and not self._grow_partial(limit):
            return
        while not self._stopped:
            piece = self._pending if self._pending is not None else next(self._lines, None)
            if piece is None:
                self.exhausted = True
                return
            self._pending = piece
            if len(piece) > MAX_CONTEXT_LINE_CHARS + 1:
                self._stopped = True
                return
            # Every character costs at least _RUN_MILLI: a line that cannot fit is not measured.
            if len(piece) * _RUN_MILLI > limit - self.milli:
                return
            cost = _milli(piece, self._per_char)
            if self.milli + cost > limit:
                return
            self.pieces.append(piece)
            self.milli += cost
            self._pending = None

    def _grow_partial(self, limit: int) -> bool:
        """Keep as much of the cursor line's part as fits; whether all of it is in."""
        full = self._partial
        # Cost only falls as characters far from the cursor are dropped: binary search the most
        # that fits.
        low, high = len(self.kept), len(full)
        while low < high:
            middle = (low + high + 1) // 2
            if _milli(self._take(middle), self._per_char) <= limit:
                low = middle
            else:
                high = middle - 1
        self.kept = self._take(low)
        self.milli = _milli(self.kept, self._per_char)
        self.partial_done = low == len(full) and not self._capped
        return self.partial_done

    def _take(self, count: int) -> str:
        if self._before:
            return self._partial[len(self._partial) - count :]
        return self._partial[:count]


# -- other documents ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Index:
    """What scoring needs of another document, computed once per OpenDocument instance."""

    #: Lines (normalised line endings, no terminators).
    lines: list[str]
    #: Window ``w`` covers lines ``[w * WINDOW_LINES / 2, w * WINDOW_LINES / 2 + WINDOW_LINES)``;
    #: its size is its number of distinct identifiers.
    window_sizes: list[int]
    #: identifier -> the windows that contain it.
    postings: dict[str, list[int]]
    #: name -> the lines that define it.
    definitions: dict[str, list[int]]
    #: definition line -> its range and identifiers, filled as definitions are asked for.
    blocks: dict[int, tuple[int, int, frozenset[str]]] = field(default_factory=dict)

    def block(self, line: int) -> tuple[int, int, frozenset[str]]:
        """Lines ``[first, end)`` and identifiers of the definition on ``line``."""
        if (known := self.blocks.get(line)) is not None:
            return known
        first, end = _definition_range(self.lines, line)
        block = (first, end, frozenset(_identifiers("\n".join(self.lines[first:end]))))
        self.blocks[line] = block
        return block

    @staticmethod
    def of(text: str) -> _Index:
        capped = len(text) > MAX_INDEXED_CHARS
        text = text[:MAX_INDEXED_CHARS]
        if "\r" in text:
            text = _LINE_BREAKS.sub("\n", text)
        lines = text.split("\n")
        if capped and len(lines) > 1:
            lines.pop()  # cut by the cap: not a whole line
        step = WINDOW_LINES // 2
        # Each half-window is tokenized once; a window is two neighbouring halves.
        halves = [_window_identifiers(lines[i : i + step]) for i in range(0, len(lines), step)]
        window_sizes: list[int] = []
        postings: defaultdict[str, list[int]] = defaultdict(list)
        for w, half in enumerate(halves):
            window = half | halves[w + 1] if w + 1 < len(halves) else half
            window_sizes.append(len(window))
            for identifier in window:
                postings[identifier].append(w)
        definitions: dict[str, list[int]] = {}
        searched = "\n" + text
        line, position = 0, 0
        for match in _DEFINITION.finditer(searched):
            # The match starts at the break before its line.
            line += searched.count("\n", position, match.start())
            position = match.start()
            name = match["name"] or match["assigned"]
            if len(name) < 3 or name in _KEYWORDS:
                continue
            if match["keyword"] in _VARIABLE_KEYWORDS and match["indent"]:
                continue
            if line < len(lines):
                definitions.setdefault(name, []).append(line)
        return _Index(lines, window_sizes, dict(postings), definitions)


def _window_identifiers(lines: list[str]) -> set[str]:
    if max(map(len, lines)) > MAX_SNIPPET_LINE_CHARS:
        # Such a line ends any snippet that reaches it, so its words do not describe one.
        lines = [line for line in lines if len(line) <= MAX_SNIPPET_LINE_CHARS]
    return _identifiers("\n".join(lines))


def _identifiers(text: str) -> set[str]:
    """The identifiers of at least three characters in ``text`` that are not keywords."""
    found = set(_IDENTIFIER.findall(text))
    found -= _KEYWORDS
    return found


def _indent_width(line: str) -> int:
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    return len(indent) + 3 * indent.count("\t")  # a tab as four columns


def _definition_range(lines: list[str], start: int) -> tuple[int, int]:
    """Lines ``[first, end)`` of the definition on line ``start``: its comments or decorators,
    and the lines indented under it (with a closing bracket line at its own indentation)."""
    indent = _indent_width(lines[start])
    end = start + 1
    limit = min(len(lines), start + MAX_DEFINITION_LINES)
    while end < limit:
        stripped = lines[end].strip()
        if not stripped or _indent_width(lines[end]) > indent:
            end += 1
            continue
        if stripped[0] in ")]}":
            end += 1
            # A Python signature split over lines closes with "):" and its body follows.
            if stripped.endswith((":", "{")):
                continue
        break
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    first = start
    while first > 0 and start - first < 4:
        above = lines[first - 1]
        if not above.strip().startswith(_COMMENT_OR_DECORATOR) or _indent_width(above) != indent:
            break
        first -= 1
    return first, end


# Overloads, or a name redefined under a condition; more is a name too common to tell.
_DEFINITIONS_PER_NAME = 2
_EXAMINED_CANDIDATES = 8 * MAX_SNIPPETS
# Below this, no snippet worth its label fits.
_SMALLEST_SNIPPET_TOKENS = SNIPPET_OVERHEAD_TOKENS + 8


class _Candidate(NamedTuple):
    score: float
    path: str
    first: int
    end: int
    lines: list[str]


def _candidates(
    other: OpenDocument, query: set[str], *, imported: bool, same_language: bool
) -> list[_Candidate]:
    """The scored line ranges of one other document."""
    index = other._index
    bonus = IMPORT_BONUS if imported else 0.0
    factor = 1.0 if same_language else OTHER_LANGUAGE_FACTOR
    found: list[_Candidate] = []
    for name in query.intersection(index.definitions):
        for line in index.definitions[name][:_DEFINITIONS_PER_NAME]:
            first, end, block = index.block(line)
            score = DEFINITION_SCORE + _jaccard(len(block & query), len(block), len(query)) + bonus
            found.append(_Candidate(score * factor, other.path, first, end, index.lines))
    shared = Counter(chain.from_iterable(index.postings.get(name, ()) for name in query))
    step = WINDOW_LINES // 2
    for window, count in shared.items():
        if count < MIN_SHARED:
            continue
        overlap = _jaccard(count, index.window_sizes[window], len(query))
        if overlap < MIN_JACCARD:
            continue
        first = window * step
        end = min(first + WINDOW_LINES, len(index.lines))
        found.append(_Candidate((overlap + bonus) * factor, other.path, first, end, index.lines))
    return found


def _jaccard(shared: int, size: int, query_size: int) -> float:
    union = size + query_size - shared
    return shared / union if union else 0.0


def _select(candidates: list[_Candidate], allowance: int, per_char: int) -> list[Snippet]:
    """The best candidates that fit ``allowance`` tokens, each cut to whole lines that fit."""
    chosen: list[Snippet] = []
    taken: dict[str, list[tuple[int, int]]] = {}
    used = 0
    # Past the best few, candidates only overlap the chosen ones or no longer fit.
    best = heapq.nsmallest(
        _EXAMINED_CANDIDATES, candidates, key=lambda c: (-c.score, c.path, c.first)
    )
    for candidate in best:
        if len(chosen) == MAX_SNIPPETS or allowance - used < _SMALLEST_SNIPPET_TOKENS:
            break
        ranges = taken.setdefault(candidate.path, [])
        if any(candidate.first < end and first < candidate.end for first, end in ranges):
            continue
        room = (allowance - used - _label_tokens(candidate.path, per_char)) * _MILLI
        lines: list[str] = []
        milli = 0
        for number in range(candidate.first, candidate.end):
            line = candidate.lines[number]
            if len(line) > MAX_SNIPPET_LINE_CHARS:
                break
            piece = "\n" + line if lines else line
            cost = _milli(piece, per_char)
            if milli + cost > room:
                break
            lines.append(line)
            milli += cost
        while lines and not lines[-1].strip():
            lines.pop()
        if not lines:
            continue
        snippet = Snippet(candidate.path, "\n".join(lines), round(candidate.score, 6))
        chosen.append(snippet)
        ranges.append((candidate.first, candidate.first + len(lines)))
        used += _snippet_tokens(snippet, per_char)
    return chosen


# -- the current document ----------------------------------------------------------------------


def _near_lines(document: Document, line_index: int) -> range:
    return range(
        max(0, line_index - NEAR_LINES_BEFORE),
        min(document.line_count, line_index + 1 + NEAR_LINES_AFTER),
    )


def _near_identifiers(document: Document, line_index: int, head: str, tail: str) -> set[str]:
    """The identifiers near the cursor: what snippets are ranked against."""
    parts = [head[-MAX_SCANNED_LINE_CHARS:], tail[:MAX_SCANNED_LINE_CHARS]]
    parts.extend(
        document.line(i)[:MAX_SCANNED_LINE_CHARS]
        for i in _near_lines(document, line_index)
        if i != line_index
    )
    return _identifiers("\n".join(parts))


def _imported_modules(document: Document, line_index: int) -> set[str]:
    """Lower-cased words of the document's import lines: module names and path parts."""
    numbers = sorted(
        set(range(min(IMPORT_SCAN_LINES, document.line_count)))
        | set(_near_lines(document, line_index))
    )
    modules: set[str] = set()
    in_go_block = False
    for number in numbers:
        line = document.line(number)[:MAX_SCANNED_LINE_CHARS]
        if in_go_block:
            in_go_block = not line.lstrip().startswith(")")
        elif _GO_IMPORT_BLOCK.match(line):
            in_go_block = True
            continue
        elif not _IMPORT_LINE.search(line):
            continue
        modules.update(word.lower() for word in _MODULE_WORD.findall(line))
    return modules


def _module_names(path: str) -> set[str]:
    """The names another file imports this one by: its stem (its directory's for ``index.ts``)."""
    file = posixpath.basename(_normal(path))
    stem = file.split(".")[0].lower()
    names = {stem} if stem else set()
    if stem in _PACKAGE_STEMS:
        names.add(posixpath.basename(posixpath.dirname(_normal(path))).lower())
    return names - {""}


def _normal(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


def _family(language_id: str) -> str:
    return _LANGUAGE_FAMILY.get(language_id.lower(), language_id.lower())


def _snippets(
    others: Sequence[OpenDocument],
    *,
    path: str,
    language_id: str,
    query: set[str],
    modules: set[str],
    patterns: tuple[str, ...],
    allowance: int,
    per_char: int,
) -> list[Snippet]:
    if not query:
        return []
    own = _normal(path)
    family = _family(language_id)
    eligible: list[tuple[bool, bool, str, OpenDocument]] = []
    for other in others:
        if not other.text or _normal(other.path) == own:
            continue
        if is_excluded(other.path, patterns) is not None:
            continue
        imported = bool(_module_names(other.path) & modules)
        other_family = _family(other.language_id)
        # An unknown language is no evidence either way.
        same = not family or not other_family or other_family == family
        eligible.append((not imported, not same, other.path, other))
    eligible.sort(key=lambda entry: entry[:3])
    candidates: list[_Candidate] = []
    for not_imported, not_same, _, other in eligible[:MAX_OTHER_DOCUMENTS]:
        candidates.extend(
            _candidates(other, query, imported=not not_imported, same_language=not not_same)
        )
    return _select(candidates, allowance, per_char)
