"""Trees: a text parsed by tree-sitter, kept and brought up to date after edits.

Pure, offline; with ``engines.names`` (its queries) the only modules of the server that import
``tree_sitter``: grammars are the official ``tree-sitter-<language>`` wheels (compiled in,
nothing is downloaded), loaded on first use — never while the server starts
(tests/e2e/test_structural_guard.py).

The plumbing of the parse check (``engines.parse`` holds its rules): :func:`parse` (a text →
:class:`Parsed`: its tree, its syntax problems, its brackets), :func:`reparse` (incrementally,
after an edit), :class:`Reparse` (the same in steps of bounded time, so that a server answers
between them), and the scoped parses the check uses to parse only the members around a region
(:func:`_scope`, :func:`_parse_scoped`).
"""

from __future__ import annotations

import functools
import importlib
import time
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from . import preprocessor
from .languages import GRAMMARS

if TYPE_CHECKING:
    from tree_sitter import Language, Node, Range, Tree, TreeCursor


@functools.cache
def _language(name: str) -> Language:
    """The grammar, loaded once (grammars are immutable: this cache is the only state)."""
    from tree_sitter import Language

    if name not in GRAMMARS:
        raise ValueError(f"no grammar for {name!r} (known: {', '.join(sorted(GRAMMARS))})")
    module, function = GRAMMARS[name]
    return Language(getattr(importlib.import_module(module), function)())


def grammar(name: str) -> Language:
    """The grammar ``name`` (loaded once; the queries of ``engines.names`` need it)."""
    return _language(name)


def load(name: str) -> None:
    """Load a grammar ahead of its first check (the server's warm-up, off the event loop)."""
    _language(name)


def _parse(name: str, data: bytes, old: Tree | None = None) -> Tree:
    from tree_sitter import Parser

    parser = Parser(_language(name))
    return parser.parse(data, old) if old is not None else parser.parse(data)


@dataclass(frozen=True)
class SyntaxProblem:
    """One syntax error: an ERROR node (unexpected text) or a MISSING one (a token tree-sitter
    had to invent, e.g. a closing brace)."""

    kind: Literal["error", "missing"]
    #: UTF-8 byte offsets in the text (``start == end`` for a MISSING node).
    start: int
    end: int
    #: 0-based line of ``start``.
    line: int
    #: The unexpected text's first word, or the missing token.
    token: str

    @property
    def message(self) -> str:
        """What the user is told: "line 12: missing '}'"."""
        what = "missing" if self.kind == "missing" else "unexpected"
        token = f"'{self.token}'" if self.token else "end of text"
        return f"line {self.line + 1}: {what} {token}"


class Parsed:
    """A text and its tree (the "before" of a check, reusable for every draft on it)."""

    def __init__(
        self,
        language: str,
        text: str,
        tree: Tree | None = None,
        source: bytes | None = None,
        data: bytes | None = None,
    ) -> None:
        self.language = language
        self.text = text
        self.data = data if data is not None else text.encode("utf-8", "surrogatepass")
        #: The bytes the grammar parsed (see ``preprocessor.masked``).
        self.source = source if source is not None else preprocessor.masked(language, self.data)
        self.tree = tree if tree is not None else _parse(language, self.source)
        #: The last C/C++ normalized form (its kept bytes and parse; see :meth:`normalized`).
        self._normalized: tuple[tuple[tuple[int, int], _Scope | None], Parsed] | None = None
        #: The last parse within a scope (see :meth:`scoped`).
        self._scoped: tuple[_Scope, Parsed, bool] | None = None
        self._balance: Counter[str] | None = None

    def normalized(self, keep: tuple[int, int], scope: _Scope | None = None) -> Parsed:
        """This text parsed as ``engines.preprocessor.normalize`` rewrites it, keeping the
        preprocessor branches that overlap bytes ``keep``, within ``scope`` if given (the last
        one kept for the next draft of the same region)."""
        if self._normalized is not None and self._normalized[0] == (keep, scope):
            return self._normalized[1]
        if scope is None:
            source, tree = preprocessor.normalize(self.source, keep), None
        else:
            ranges = scope.included()
            spans = [(r.start_byte, r.end_byte) for r in ranges]
            source = preprocessor.normalize(self.source, keep, spans)
            tree = _parse_scoped(self.language, source, ranges)
        parsed = Parsed(self.language, self.text, tree, source, self.data)
        self._normalized = ((keep, scope), parsed)
        return parsed

    def scoped(self, scope: _Scope, *, loose: bool = False) -> Parsed | None:
        """This text parsed within ``scope`` only (the last one kept for the next draft); None
        when that parse does not show the same errors as the whole text's (the members left
        out held none, but without them tree-sitter recovered differently), unless ``loose``."""
        if self._scoped is None or self._scoped[0] != scope:
            tree = _parse_scoped(self.language, self.source, scope.included())
            parsed = Parsed(self.language, self.text, tree, self.source, self.data)
            same = not self.has_errors or [(p.kind, p.start, p.end) for p in self.problems()] == [
                (p.kind, p.start, p.end) for p in parsed.problems()
            ]
            self._scoped = (scope, parsed, same)
        _, parsed, same = self._scoped
        return parsed if same or loose else None

    def balance(self) -> Counter[str]:
        """Brackets opened minus closed in the whole text, per kind (computed once)."""
        if self._balance is None:
            self._balance = _balance(self)
        return self._balance

    @property
    def has_errors(self) -> bool:
        return bool(self.tree.root_node.has_error)

    def problems(self, start_byte: int = 0, end_byte: int | None = None) -> list[SyntaxProblem]:
        """The outermost ERROR nodes and the MISSING nodes overlapping ``[start_byte,
        end_byte]``, in order."""
        if not self.has_errors:
            return []
        end = len(self.data) if end_byte is None else end_byte
        found: list[Node] = []
        _collect(self.tree.walk(), start_byte, end, found)
        return [self._problem(node) for node in found]

    def nodes(self, types: frozenset[str] = frozenset()) -> list[tuple[str, int, int, bool]]:
        """(type, start byte, end byte, first child of its parent) of the nodes of ``types``,
        or of every leaf (token) when ``types`` is empty; in order (the syntax repair's corpus
        breaks real functions with them)."""
        out: list[tuple[str, int, int, bool]] = []
        cursor = self.tree.walk()
        first = True
        while True:
            node = cursor.node
            if node is not None and (
                node.type in types if types else node.child_count == 0 and not node.is_missing
            ):
                out.append((node.type, node.start_byte, node.end_byte, first))
            if cursor.goto_first_child():
                first = True
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return out
            first = False

    def byte_of(self, offset: int) -> int:
        """The UTF-8 byte offset of a code-point offset."""
        if len(self.data) == len(self.text):  # ASCII: the same (no encoding of the prefix)
            return offset
        return len(self.text[:offset].encode("utf-8", "surrogatepass"))

    def line_of(self, byte: int) -> int:
        """The 0-based line of a byte offset (lines end at ``\\n``, as tree-sitter counts rows;
        a ``\\r\\n`` ends with one)."""
        return self.data.count(b"\n", 0, byte)

    def _problem(self, node: Node) -> SyntaxProblem:
        line = self.line_of(node.start_byte)
        if node.is_missing or (node.child_count == 0 and not node.is_error):
            return SyntaxProblem("missing", node.start_byte, node.start_byte, line, node.type)
        snippet = self.data[node.start_byte : min(node.end_byte, node.start_byte + 200)]
        words = snippet.decode("utf-8", "replace").split(None, 1)
        first = words[0] if words else ""
        if len(first) > 24:
            first = first[:24] + "…"
        return SyntaxProblem("error", node.start_byte, node.end_byte, line, first)


def _collect(cursor: TreeCursor, start: int, end: int, out: list[Node]) -> None:
    """Outermost ERROR and MISSING nodes under the cursor's node that overlap ``[start, end]``,
    visiting only children that overlap it and hold an error.

    A cursor, not ``Node.next_sibling``: the latter skips a zero-width MISSING node at the end
    of its parent (py-tree-sitter 0.25), which is exactly the missing ``}`` of a draft.
    """
    node = cursor.node
    if node is None:
        return
    # A leaf flagged with an error is a MISSING token too (C#: a zero-width ``identifier`` that
    # ``is_missing`` does not report): without it, a tree with errors would show none.
    if node.is_error or node.is_missing or (node.has_error and node.child_count == 0):
        out.append(node)
        return
    if not node.has_error:
        return
    if start > node.start_byte:
        # None when ``start`` falls between two children (py-tree-sitter 0.25): then from the
        # first child, the loop below skips those that end before it.
        moved = cursor.goto_first_child_for_byte(start) is not None or cursor.goto_first_child()
    else:
        moved = cursor.goto_first_child()
    if not moved:
        return
    while True:
        child = cursor.node
        if child is None or child.start_byte > end:
            break
        if child.end_byte >= start:
            _collect(cursor, start, end, out)
        if not cursor.goto_next_sibling():
            break
    cursor.goto_parent()


def parse(language: str, text: str) -> Parsed:
    """Parse ``text`` (the document before a job); ValueError for an unknown grammar."""
    return Parsed(language, text)


def parse_errors(language: str, text: str) -> list[SyntaxProblem]:
    """Every syntax error of ``text``, in order (empty: it parses)."""
    return parse(language, text).problems()


@dataclass(frozen=True)
class _Edit:
    """A draft written into a parsed text: the text after, and where the bytes changed."""

    text: str
    data: bytes
    #: What the grammar parses (C/C++ macro blanking redone on the edited lines, whole).
    source: bytes
    start: int
    old_end: int
    new_end: int
    #: The edited lines, whole, before and after (the C/C++ masks look at a line in context).
    first: int
    old_last: int
    last: int


def _edited(before: Parsed, start: int, end: int, text: str) -> _Edit:
    # One copy of the document per form (joined from views: no copies of its halves first).
    data = before.data
    start_byte = before.byte_of(start)
    old_end_byte = start_byte + len(before.text[start:end].encode("utf-8", "surrogatepass"))
    inserted = text.encode("utf-8", "surrogatepass")
    new_end_byte = start_byte + len(inserted)
    view = memoryview(data)
    after_data = b"".join((view[:start_byte], inserted, view[old_end_byte:]))
    first = data.rfind(b"\n", 0, start_byte) + 1
    last = after_data.find(b"\n", new_end_byte)
    last = len(after_data) if last < 0 else last
    old_last = old_end_byte + (last - new_end_byte)
    if before.language not in preprocessor.MASKED:  # the grammar reads the bytes themselves
        after_source = after_data
    else:
        source = memoryview(before.source)
        masked = preprocessor.masked(before.language, after_data[first:last])
        after_source = b"".join((source[:first], masked, source[old_last:]))
    after_text = "".join((before.text[:start], text, before.text[end:]))
    return _Edit(
        after_text,
        after_data,
        after_source,
        start_byte,
        old_end_byte,
        new_end_byte,
        first,
        old_last,
        last,
    )


def reparse(before: Parsed, start: int, end: int, text: str) -> Parsed:
    """``before`` with code points ``[start, end)`` replaced by ``text``, reparsed incrementally
    from its tree (which stays as it was)."""
    return _reparse(before, _edited(before, start, end, text))


def _reparse(before: Parsed, edit: _Edit) -> Parsed:
    new_tree = _parse(before.language, edit.source, _edited_tree(before, edit))
    return Parsed(before.language, edit.text, new_tree, edit.source, edit.data)


def _edited_tree(before: Parsed, edit: _Edit) -> Tree:
    """A copy of ``before``'s tree told of the edit (the edited lines, whole)."""
    tree = before.tree.copy()
    tree.edit(
        start_byte=edit.first,
        old_end_byte=edit.old_last,
        new_end_byte=edit.last,
        start_point=_point(before.data, edit.first),
        old_end_point=_point(before.data, edit.old_last),
        new_end_point=_point(edit.data, edit.last),
    )
    return tree


#: Bytes handed to tree-sitter per read while parsing in steps.
_CHUNK = 1 << 16


class Reparse:
    """A parse in steps of bounded time: ``before`` with code points ``[start, end)`` replaced
    by ``text``, incrementally from ``before``'s tree (which stays as it was), or ``text``
    parsed from scratch without a ``before``.

    tree-sitter holds the GIL while it parses, and an incremental reparse of a 10,000-line
    document is not cheap in every grammar (tree-sitter-python cannot reuse its module's
    statements as a block: 10-30 ms; Java and C# 10 ms when a class's members changed): each
    :meth:`step` stops the parser at its deadline (tree-sitter's progress callback) and the
    next one resumes where it stopped, so a server answers messages between the steps.
    """

    def __init__(
        self, language: str, before: Parsed | None, start: int, end: int, text: str
    ) -> None:
        from tree_sitter import Parser

        self.language = language
        self._parser = Parser(_language(language))
        self._old: Tree | None = None
        if before is None:
            self._text = text
            self._data = text.encode("utf-8", "surrogatepass")
            self._source = preprocessor.masked(language, self._data)
        else:
            edit = _edited(before, start, end, text)
            self._text, self._data, self._source = edit.text, edit.data, edit.source
            self._old = _edited_tree(before, edit)
        self._view = memoryview(self._source)
        self._deadline = 0.0
        self._result: Parsed | None = None
        #: Steps taken so far.
        self.steps = 0

    @property
    def text(self) -> str:
        """The text being parsed."""
        return self._text

    def _read(self, byte: int, _point: object) -> memoryview:
        return self._view[byte : byte + _CHUNK]

    def _late(self, _offset: int, _has_error: bool) -> bool:
        return time.perf_counter() > self._deadline

    def step(self, seconds: float) -> Parsed | None:
        """Parse for about ``seconds`` (the parser looks at the clock every few hundred
        operations); the parsed text once done, else None (call again)."""
        if self._result is not None:
            return self._result
        self.steps += 1
        self._deadline = time.perf_counter() + seconds
        try:
            if self._old is not None:
                tree = self._parser.parse(self._read, self._old, progress_callback=self._late)
            else:
                tree = self._parser.parse(self._read, progress_callback=self._late)
        except ValueError:  # stopped at the deadline: the parser keeps its state for the next
            return None
        self._view.release()
        self._result = Parsed(self.language, self._text, tree, self._source, self._data)
        return self._result

    def finish(self) -> Parsed:
        """The parsed text, parsing what is left at once."""
        result = self.step(float("inf"))
        assert result is not None
        return result


#: Node types that hold a list of independent members (statements, declarations, a class's
#: members), in the ten grammars: the check parses only the members near the region.
_LISTS = frozenset(
    {
        "module",
        "block",
        "program",
        "source_file",
        "statement_list",
        "translation_unit",
        "compound_statement",
        "declaration_list",
        "field_declaration_list",
        "class_body",
        "interface_body",
        "enum_body",
        "statement_block",
        "switch_body",
        "switch_block",
        "compilation_unit",
    }
)

#: tree-sitter's "to the end of the text".
_END = 0xFFFFFFFF


@dataclass(frozen=True)
class _Scope:
    """Runs of a text's bytes the check leaves out: list members far from the region (whole
    nodes, each with its start and end points), in order."""

    runs: tuple[tuple[int, int, tuple[int, int], tuple[int, int]], ...]

    def included(self, shift_from: int = _END, by: int = 0, rows: int = 0) -> list[Range]:
        """What the grammar reads: all but the runs; runs from byte ``shift_from`` on moved by
        ``by`` bytes and ``rows`` lines (the draft's length and lines against the region's)."""
        from tree_sitter import Range

        out: list[Range] = []
        at, at_point = 0, (0, 0)
        for a, b, a_point, b_point in self.runs:
            if a >= shift_from:
                a, b = a + by, b + by
                a_point, b_point = (a_point[0] + rows, a_point[1]), (b_point[0] + rows, b_point[1])
            if a > at:
                out.append(Range(at_point, a_point, at, a))
            at, at_point = b, b_point
        out.append(Range(at_point, (_END, _END), at, _END))
        return out


def _scope(tree: Tree, start: int, end: int) -> _Scope | None:
    """The members of the lists enclosing bytes ``[start, end]`` that are neither within them
    nor next to them (None: nothing to leave out)."""
    left: list[tuple[int, int, tuple[int, int], tuple[int, int]]] = []
    right: list[tuple[int, int, tuple[int, int], tuple[int, int]]] = []
    node = tree.root_node
    while node.child_count:
        cursor = node.walk()
        lo = cursor.goto_first_child_for_byte(start)
        if lo is None:
            break
        cursor.goto_parent()
        hi = cursor.goto_first_child_for_byte(end)
        hi = node.child_count - 1 if hi is None else hi
        last = node.child(hi)
        if last is not None and last.start_byte > end and hi > lo:
            hi -= 1
        if node.type in _LISTS and node.named_child_count > 3:
            if node.has_error:
                _runs_around_errors(node, lo, hi, left, right)
            else:
                _runs(node, lo, hi, left, right)
        if lo != hi:
            break
        child = node.child(lo)
        if child is None or child.start_byte > start or child.end_byte < end:
            break
        node = child
    if not left and not right:
        return None
    return _Scope(tuple(sorted(left + right)))


_Run = tuple[int, int, tuple[int, int], tuple[int, int]]


def _runs(node: Node, lo: int, hi: int, left: list[_Run], right: list[_Run]) -> None:
    """The members of list ``node`` before child ``lo - 1`` and after child ``hi + 1``."""
    first_member = node.named_child(0)
    last_member = node.named_child(node.named_child_count - 1)
    before = node.child(lo - 1) if lo > 0 else None
    after = node.child(hi + 1) if hi + 1 < node.child_count else None
    if first_member is not None and before is not None:
        a, b = first_member, before
        if a.start_byte < b.start_byte:
            left.append((a.start_byte, b.start_byte, a.start_point, b.start_point))
    if last_member is not None and after is not None:
        a, b = after, last_member
        if b.end_byte > a.end_byte:
            right.append((a.end_byte, b.end_byte, a.end_point, b.end_point))


def _runs_around_errors(node: Node, lo: int, hi: int, left: list[_Run], right: list[_Run]) -> None:
    """As :func:`_runs`, in a list holding errors: members with an error stay (a stray brace
    far away is part of the balance the check compares), the others around them go."""
    cursor = node.walk()
    if not cursor.goto_first_child():
        return
    index = 0
    first: Node | None = None
    last: Node | None = None

    def flush() -> None:
        if first is not None and last is not None:
            left.append((first.start_byte, last.end_byte, first.start_point, last.end_point))

    while True:
        child = cursor.node
        if child is not None and (index < lo - 1 or index > hi + 1):
            if child.has_error or child.is_missing:
                flush()
                first = last = None
            elif child.is_named:
                first = first or child
                last = child
        elif index == lo - 1:
            flush()
            first = last = None
        index += 1
        if not cursor.goto_next_sibling():
            break
    flush()
    del right  # the runs are sorted by position afterwards: one list holds them all


def _parse_scoped(language: str, source: bytes, ranges: list[Range]) -> Tree:
    from tree_sitter import Parser

    return Parser(_language(language), included_ranges=ranges).parse(source)


def _point(data: bytes, byte: int) -> tuple[int, int]:
    """tree-sitter's (row, byte column) of a byte offset."""
    return data.count(b"\n", 0, byte), byte - (data.rfind(b"\n", 0, byte) + 1)


#: Bracket tokens → (bracket, how many it opens; negative: closes). ``${`` opens a JavaScript
#: template's substitution, ``[[`` and ``]]`` are C++ attributes' brackets.
_BRACKETS: dict[str, tuple[str, int]] = {
    "(": ("(", 1),
    ")": ("(", -1),
    "[": ("[", 1),
    "]": ("[", -1),
    "[[": ("[", 2),
    "]]": ("[", -2),
    "{": ("{", 1),
    "}": ("{", -1),
    "${": ("{", 1),
}


#: Bracket bytes → (bracket, 1 opens or -1 closes).
_BRACKET_BYTES: dict[int, tuple[str, int]] = {ord(c): _BRACKETS[c] for c in "()[]{}"}


def _balance(parsed: Parsed, start: int = 0, end: int | None = None) -> Counter[str]:
    """Brackets opened minus closed, per kind, by the tokens within bytes ``[start, end)``
    (tokens, so brackets in strings and comments do not count; MISSING ones neither)."""
    stop = len(parsed.data) if end is None else end
    out: Counter[str] = Counter()
    cursor = parsed.tree.walk()
    while True:
        node = cursor.node
        if node is not None and node.end_byte > start and node.start_byte < stop:
            if node.child_count == 0:
                if not node.is_missing and node.type in _BRACKETS and node.start_byte >= start:
                    kind, count = _BRACKETS[node.type]
                    out[kind] += count
            elif cursor.goto_first_child():
                continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return out
