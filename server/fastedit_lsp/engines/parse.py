"""The parse check: does a draft add syntax errors where it was written? (tree-sitter)

Pure, offline: the check's rules. The trees themselves (grammars, parses, reparses, scoped
parses) are ``engines.parse_tree``'s, re-exported here (``parse``, ``reparse``, ``Parsed``...).

A draft replaces one region of a document. It fails when the syntax errors (tree-sitter's ERROR
and MISSING nodes) within the region ± :data:`MARGIN` lines grow, in count or in span, compared
with the document before the job: so a file already broken elsewhere, or code the user is still
writing, does not fail every draft; only what the draft made worse does. The document before
the job is parsed once (:func:`parse`); the draft's document is parsed incrementally from its
tree (tree-sitter reuses every subtree the edit did not touch), and only the nodes around the
region are visited.

The API: :func:`language_of` (an LSP ``languageId``, a path or a URI → a grammar name),
:func:`parse_errors` (every error of a text), :func:`parse` + :func:`check_edit` (the check on
an edit, from a parsed "before"), :func:`check_region` (the same from two texts and the region's
lines), :class:`Reparse` (a text brought up to date after an edit in steps of bounded time, so
that a server answers between them).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.document import split_lines
from . import preprocessor

# The tables and language_of live with the languages (no tree_sitter there); kept importable here.
from .languages import DISPLAY as DISPLAY
from .languages import EXTENSIONS as EXTENSIONS
from .languages import GRAMMARS as GRAMMARS
from .languages import LANGUAGE_IDS as LANGUAGE_IDS
from .languages import language_of as language_of
from .parse_tree import (
    _BRACKET_BYTES,
    _BRACKETS,
    _balance,
    _edited,
    _parse,
    _parse_scoped,
    _point,
    _reparse,
    _Scope,
    _scope,
)
from .parse_tree import Parsed as Parsed
from .parse_tree import Reparse as Reparse
from .parse_tree import SyntaxProblem as SyntaxProblem
from .parse_tree import grammar as grammar
from .parse_tree import load as load
from .parse_tree import parse as parse
from .parse_tree import parse_errors as parse_errors
from .parse_tree import reparse as reparse

if TYPE_CHECKING:
    from tree_sitter import Range

#: Lines around the edited region that the check looks at.
MARGIN = 3


@dataclass(frozen=True)
class Verdict:
    """The check's answer: ``ok`` and what the user is told (the first new error, or why it
    passed)."""

    ok: bool
    message: str


def check_edit(before: Parsed, start: int, end: int, text: str) -> Verdict:
    """Whether replacing code points ``[start, end)`` of ``before`` with ``text`` keeps the
    syntax errors around the region (± :data:`MARGIN` lines) from growing in count or span.

    Both texts are parsed first only where it matters: the members of the lists (statements,
    declarations, class members) that enclose the region, from the neighbour before to the
    neighbour after, with every enclosing opener and closer (tree-sitter's included ranges);
    members farther away are the same in both texts and are left out, so a draft that passes
    costs what the region's surroundings cost, not the document's length. A draft that fails
    there is checked again on the whole texts (incrementally), which decide, only when its
    brackets could mend what the text before's errors leave unmatched (:func:`_may_mend`: it
    closes what the text before left open); otherwise the members left out are whole in both
    texts whatever the draft. Where the text before's errors recover otherwise without the
    members left out, a pass there does not count: the whole texts decide.

    In C and C++, a draft that fails is compared again with both texts normalized alike
    (``engines.preprocessor``: one branch of each conditional, macro uses set aside), so that
    what only the preprocessor could read, in the draft as in the code around it, does not fail
    a correct draft.
    """
    edit = _edited(before, start, end, text)
    s, e, new_end = edit.start, edit.old_end, edit.new_end
    window = _window(before.data, s, e)
    scope = _scope(before.tree, *window)
    if scope is not None:
        scoped = before.scoped(scope, loose=True)
        assert scoped is not None
        rows = edit.data.count(b"\n", s, new_end) - before.data.count(b"\n", s, e)
        included = scope.included(e, new_end - e, rows)
        tree = _parse_scoped(before.language, edit.source, included)
        after = Parsed(before.language, edit.text, tree, edit.source, edit.data)
        verdict = compare(scoped, after, s, e, new_end)
        # Whether that parse shows the text before's errors as the whole text does (without the
        # members left out, tree-sitter may recover from them otherwise: then a pass does not
        # count, the whole texts decide; a corpus draft missing a class's brace passed there).
        same = before.scoped(scope) is not None
        if verdict.ok and same:
            return verdict
        if not verdict.ok and not _may_mend(scoped if same else before, after, s, e, new_end):
            # The text before parses, or leaves nothing open that the draft's brackets could
            # close (nor closes too often what they could open): the members left out stay
            # whole, and this verdict is the whole texts' too (reparsing them after a draft
            # that leaves a brace open took tree-sitter's error recovery 5-700 ms).
            return _preprocessed(before, scoped, after, verdict, (s, e, new_end), (scope, included))
    # The whole texts: where the draft changes what encloses the region (it closes what the
    # text before left open), the members left out would no longer be whole.
    after = _reparse(before, edit)
    verdict = compare(before, after, s, e, new_end)
    if verdict.ok:
        return verdict
    return _preprocessed(before, before, after, verdict, (s, e, new_end), None)


def _preprocessed(
    before: Parsed,
    plain: Parsed,
    after: Parsed,
    verdict: Verdict,
    region: tuple[int, int, int],
    scope: tuple[_Scope, list[Range]] | None,
) -> Verdict:
    """A failed C/C++ verdict, compared again with both texts normalized alike (within
    ``scope``, the before's and the after's included ranges, when the check had one)."""
    if verdict.ok or before.language not in ("c", "cpp"):
        return verdict
    s, e, new_end = region
    for line in preprocessor.directives(after.data, s, new_end):
        # Blanked by the normalization: a conditional of the draft is checked on its own.
        if Parsed(before.language, "", source=line, data=b"").has_errors:
            return verdict
    if scope is None:
        source = preprocessor.normalize(after.source, (s, new_end))
        plain_before = before.normalized((s, e))
        plain_after = _reparse_source(plain_before, after.text, after.data, source)
    else:
        spans = [(r.start_byte, r.end_byte) for r in scope[1]]
        source = preprocessor.normalize(after.source, (s, new_end), spans)
        plain_before = before.normalized((s, e), scope[0])
        tree = _parse_scoped(before.language, source, scope[1])
        plain_after = Parsed(before.language, after.text, tree, source, after.data)
    window = _window(before.data, s, e)
    if len(plain_before.problems(*window)) > len(plain.problems(*window)):
        # Normalized, the text before looks worse around the region than it is (its errors
        # recovered elsewhere): no fairer a comparison.
        return verdict
    second = compare(plain_before, plain_after, s, e, new_end)
    if not second.ok:
        return verdict
    return Verdict(True, f"{second.message}, preprocessor branches and macros set aside")


def _reparse_source(before: Parsed, text: str, data: bytes, source: bytes) -> Parsed:
    """``text`` (its bytes ``data``, parsed as ``source``) reparsed incrementally from
    ``before``'s tree: the edit is where the two sources differ."""
    old = before.source
    low, high = 0, min(len(old), len(source))
    while low < high:  # the longest common prefix, by halves (memcmp, not a Python loop)
        mid = (low + high + 1) // 2
        if old[:mid] == source[:mid]:
            low = mid
        else:
            high = mid - 1
    prefix = low
    low, high = 0, min(len(old), len(source)) - prefix
    while low < high:
        mid = (low + high + 1) // 2
        if old[len(old) - mid :] == source[len(source) - mid :]:
            low = mid
        else:
            high = mid - 1
    old_end, new_end = len(old) - low, len(source) - low
    tree = before.tree.copy()
    tree.edit(
        start_byte=prefix,
        old_end_byte=old_end,
        new_end_byte=new_end,
        start_point=_point(old, prefix),
        old_end_point=_point(old, old_end),
        new_end_point=_point(source, new_end),
    )
    return Parsed(before.language, text, _parse(before.language, source, tree), source, data)


def compare(before: Parsed, after: Parsed, start: int, end: int, new_end: int) -> Verdict:
    """The check on two parsed texts that differ in bytes ``[start, end)`` (before) and
    ``[start, new_end)`` (after).

    Fails when, around the region (± :data:`MARGIN` lines), the draft's text has more errors
    than the text before, or error nodes cover more of the unchanged lines or a larger share of
    the region; or when errors appear farther away where there were none (the draft left a
    brace open: tree-sitter reports the missing ``}`` where the enclosing block ends).
    """
    name = DISPLAY.get(before.language, before.language)
    if not after.has_errors:
        return Verdict(True, f"{name} parses around the edit")
    b_window = _window(before.data, start, end)
    a_window = _window(after.data, start, new_end)
    old_all = before.problems()
    new_all = after.problems()
    if _body_fragment(before):
        old_all = [p for p in old_all if not _outer_closers(before.data, p)]
        new_all = [p for p in new_all if not _outer_closers(after.data, p)]
    old = [p for p in old_all if _overlaps(p, b_window)]
    new = [p for p in new_all if _overlaps(p, a_window)]
    fresh = _fresh(old_all, new_all, start, end, new_end)
    if not new_all:
        # has_error without an ERROR or MISSING node to show for it: nothing to compare.
        return Verdict(True, f"{name} parses around the edit")
    first = fresh[0] if fresh else (new or new_all)[0]
    if len(new) > len(old):
        return Verdict(False, f"{name} syntax error: {first.message}")
    outside = _coverage(new, after.data, a_window, start, new_end) > _coverage(
        old, before.data, b_window, start, end
    )
    if (
        outside
        or _inside(new, after.data, start, new_end) > _inside(old, before.data, start, end) + 1e-9
    ):
        return Verdict(False, f"{name} syntax error spreads: {first.message}")
    if (
        len(new_all) - len(new) > len(old_all) - len(old)
        and any(not _overlaps(p, a_window) for p in fresh)
        and not _keeps_balance(before, after, start, end, new_end)
    ):
        far = next(p for p in fresh if not _overlaps(p, a_window))
        return Verdict(False, f"{name} syntax error: {far.message} (unbalanced by the edit)")
    known = "; ".join(p.message for p in new[:2]) or "errors elsewhere are not the edit's"
    return Verdict(True, f"{name} parses around the edit as well as before ({known})")


#: Statements that C and C++ allow only inside a function: at a file's top level, they say the
#: file is a body fragment, ``#include``d inside a function (mypyc's base64 ``enc_tail.c``).
_BODY_STATEMENTS = frozenset(
    {
        "if_statement",
        "case_statement",
        "switch_statement",
        "while_statement",
        "for_statement",
        "do_statement",
        "return_statement",
        "break_statement",
        "continue_statement",
        "goto_statement",
    }
)


def _body_fragment(parsed: Parsed) -> bool:
    """Whether a C/C++ text is the inside of a function, written to be ``#include``d there:
    statements at its top level (tree-sitter-c accepts them, the language does not)."""
    if parsed.language not in ("c", "cpp"):
        return False
    cursor = parsed.tree.walk()
    if not cursor.goto_first_child():
        return False
    while True:
        node = cursor.node
        if node is not None and node.type in _BODY_STATEMENTS:
            return True
        if not cursor.goto_next_sibling():
            return False


def _outer_closers(data: bytes, problem: SyntaxProblem) -> bool:
    """Whether an error is only closing braces: in a body fragment, they close the blocks of
    the function the file is included in (the file's own text cannot show them opened)."""
    if problem.kind != "error":
        return False
    text = data[problem.start : problem.end]
    return bool(text.strip()) and not text.translate(None, b"} \t\r\n")


def _may_mend(before: Parsed, after: Parsed, start: int, end: int, new_end: int) -> bool:
    """Whether the draft could mend what the text before's errors leave broken, so that only
    the whole texts can tell: the text before has errors around the region (the draft may
    complete them: a comment or a string it ends, a statement it finishes); in C/C++ the draft
    opens or closes more preprocessor conditionals than it matches (their partners may be in
    the members left out); or its brackets close more of a kind than they open where the text
    before holds an opener of that kind without its closer (a MISSING closer, or an ERROR
    holding the opener), or open more where the text before holds a stray closer."""
    if not before.has_errors:
        return False
    problems = before.problems()
    window = _window(before.data, start, end)
    if any(_overlaps(p, window) for p in problems):
        return True
    if before.language in preprocessor.MASKED and preprocessor.conditional_balance(
        after.data, start, new_end
    ):
        return True
    draft = _balance(after, start, new_end)
    if not any(draft.values()):
        return False
    unclosed: Counter[str] = Counter()
    stray: Counter[str] = Counter()
    for problem in problems:
        if problem.kind == "missing":
            kind, count = _BRACKETS.get(problem.token, ("", 0))
            if count < 0:
                unclosed[kind] += 1
            elif count > 0:
                stray[kind] += 1
            continue
        # An ERROR's text, bracket by bracket (strings and comments in it counted too: this
        # only decides whether the whole texts are worth reparsing).
        depth: Counter[str] = Counter()
        lowest: Counter[str] = Counter()
        for byte in before.data[problem.start : problem.end]:
            kind, count = _BRACKET_BYTES.get(byte, ("", 0))
            if count:
                depth[kind] += count
                lowest[kind] = min(lowest[kind], depth[kind])
        for kind in depth:
            if lowest[kind] < 0:
                stray[kind] += 1
            if depth[kind] > lowest[kind]:
                unclosed[kind] += 1
    return any(
        (count < 0 and unclosed[kind]) or (count > 0 and stray[kind])
        for kind, count in draft.items()
    )


def _keeps_balance(before: Parsed, after: Parsed, start: int, end: int, new_end: int) -> bool:
    """Whether the draft leaves the document's brackets balanced: then errors far from the
    region are not a bracket it left open or closed too many (they are the grammar's own gaps,
    which the text before hid behind the brace it lacked)."""
    result = before.balance().copy()
    result.update(_balance(after, start, new_end))
    result.subtract(_balance(before, start, end))
    if not any(result.values()):
        return True
    # Counted on the draft's own tokens: where the text before was lexed inside out (a cut
    # through a template literal or a string: what followed was read as literal, and literal
    # as code), its token balance says nothing of the draft's document. An exact answer
    # restoring such a file was flagged "unbalanced" for an error of the grammar's own far away.
    return not any(after.balance().values())


def _overlaps(problem: SyntaxProblem, window: tuple[int, int]) -> bool:
    return problem.start <= window[1] and problem.end >= window[0]


def _fresh(
    old: list[SyntaxProblem], new: list[SyntaxProblem], start: int, end: int, new_end: int
) -> list[SyntaxProblem]:
    """The draft's document's errors that the document before had not at the same place."""
    shift = new_end - end
    seen = Counter((p.kind, p.token, p.start) for p in old)
    in_region = any(p.start < end and p.end > start for p in old)
    out = []
    for p in new:
        if p.start < start:
            key = p.start
        elif p.start >= new_end:
            key = p.start - shift
        else:
            if in_region:
                continue
            out.append(p)
            continue
        if seen[p.kind, p.token, key] > 0:
            seen[p.kind, p.token, key] -= 1
        else:
            out.append(p)
    return out


def _window(data: bytes, start: int, end: int) -> tuple[int, int]:
    """Bytes of the lines from ``MARGIN`` above ``start`` to ``MARGIN`` below ``end``."""
    first = start
    for _ in range(MARGIN + 1):
        first = data.rfind(b"\n", 0, first)
        if first < 0:
            break
    last = end - 1
    for _ in range(MARGIN + 1):
        last = data.find(b"\n", last + 1)
        if last < 0:
            break
    return first + 1, len(data) if last < 0 else last + 1


def around(parsed: Parsed, start: int, end: int) -> tuple[int, int]:
    """The bytes the check looks at for code points ``[start, end)``: their lines ±
    :data:`MARGIN` (for :meth:`Parsed.problems`)."""
    return _window(parsed.data, parsed.byte_of(start), parsed.byte_of(end))


def _coverage(
    problems: list[SyntaxProblem], data: bytes, window: tuple[int, int], start: int, end: int
) -> int:
    """How many lines of the window outside the region's lines ERROR nodes touch (lines, not
    bytes: an error that now also takes the blank before the draft has not spread)."""
    first_region = data.count(b"\n", 0, start)
    last_region = first_region + data.count(b"\n", start, end)
    first = data.count(b"\n", 0, window[0])
    last = first + data.count(b"\n", window[0], window[1])
    touched: set[int] = set()
    for p in problems:
        if p.kind != "error":
            continue
        a = max(p.start, window[0])
        b = min(p.end, window[1])
        if a > b:
            continue
        top = first + data.count(b"\n", window[0], a)
        bottom = top + data.count(b"\n", a, b)
        touched.update(
            line
            for line in range(max(top, first), min(bottom, last) + 1)
            if not first_region <= line <= last_region
        )
    return len(touched)


def _inside(problems: list[SyntaxProblem], data: bytes, start: int, end: int) -> float:
    """The share of the region covered by ERROR nodes (an empty region: 1 when an ERROR node
    reaches its line: text inserted there continues the broken code)."""
    spans = [(p.start, p.end) for p in problems if p.kind == "error"]
    if end <= start:
        first = data.rfind(b"\n", 0, start) + 1
        last = data.find(b"\n", start)
        last = len(data) if last < 0 else last
        return 1.0 if any(a <= last and b >= first for a, b in spans) else 0.0
    covered = sum(max(0, min(b, end) - max(a, start)) for a, b in spans)
    return covered / (end - start)


def check_region(language: str, before: str, after: str, start_line: int, end_line: int) -> Verdict:
    """The check from two texts: ``after`` is ``before`` with one region replaced, which in
    ``after`` spans lines ``start_line`` to ``end_line`` (0-based, inclusive)."""
    parsed = parse(language, before)
    after_lines = split_lines(after)
    before_lines = split_lines(before)
    delta = len(after_lines) - len(before_lines)
    start = sum(len(line) for line in before_lines[:start_line])
    end = start + sum(
        len(line) for line in before_lines[start_line : max(start_line, end_line - delta + 1)]
    )
    new_end = start + sum(len(line) for line in after_lines[start_line : end_line + 1])
    return check_edit(parsed, start, end, after[start:new_end])
