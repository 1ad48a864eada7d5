"""The snippets of an inline completion's context: whole lines of the other open documents,
ranked by how much they say about the code near the cursor.

Pure: no pygls, no httpx, no I/O. Snippets come from the other open documents only: never from
the current document (same path), never from one whose path matches the ``exclude`` patterns
(:func:`context.is_excluded`); git-ignored documents are left out by the caller. A snippet is
whole lines: the definition (``def``, ``class``, ``function``, ``func``, ``fn``, ``const`` ...)
of an identifier used near the cursor scores highest, then windows of lines that share
identifiers with the text near the cursor (Jaccard overlap); a document the current one imports
scores higher, one in another language lower. Each other document is read only up to
:data:`MAX_INDEXED_CHARS`, indexed once per :class:`OpenDocument` instance. Each snippet is
charged its text, its path and :data:`SNIPPET_OVERHEAD_TOKENS` (:func:`snippet_tokens`).
"""

from __future__ import annotations

import heapq
import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import NamedTuple

from ..core.document import Document
from ..prompting.context import is_excluded
from .tokens import MILLI, milli_cost, milli_per_char, whole_tokens

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


def snippet_tokens(snippet: Snippet, model: str | None = None) -> int:
    """What a snippet costs in the budget: its text, its path and its label."""
    return snippet_cost(snippet, milli_per_char(model))


def _label_tokens(path: str, per_char: int) -> int:
    return whole_tokens(milli_cost(path, per_char)) + SNIPPET_OVERHEAD_TOKENS


def snippet_cost(snippet: Snippet, per_char: int) -> int:
    """:func:`snippet_tokens` at a model family's ``per_char`` (:func:`~.tokens.milli_per_char`)."""
    return whole_tokens(milli_cost(snippet.text, per_char)) + _label_tokens(snippet.path, per_char)


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
        room = (allowance - used - _label_tokens(candidate.path, per_char)) * MILLI
        lines: list[str] = []
        milli = 0
        for number in range(candidate.first, candidate.end):
            line = candidate.lines[number]
            if len(line) > MAX_SNIPPET_LINE_CHARS:
                break
            piece = "\n" + line if lines else line
            cost = milli_cost(piece, per_char)
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
        used += snippet_cost(snippet, per_char)
    return chosen


# -- the current document ----------------------------------------------------------------------


def _near_lines(document: Document, line_index: int) -> range:
    return range(
        max(0, line_index - NEAR_LINES_BEFORE),
        min(document.line_count, line_index + 1 + NEAR_LINES_AFTER),
    )


def near_identifiers(document: Document, line_index: int, head: str, tail: str) -> set[str]:
    """The identifiers near the cursor: what snippets are ranked against."""
    parts = [head[-MAX_SCANNED_LINE_CHARS:], tail[:MAX_SCANNED_LINE_CHARS]]
    parts.extend(
        document.line(i)[:MAX_SCANNED_LINE_CHARS]
        for i in _near_lines(document, line_index)
        if i != line_index
    )
    return _identifiers("\n".join(parts))


def imported_modules(document: Document, line_index: int) -> set[str]:
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


def rank(
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
