"""Carry a rename: the user turned one variable's name into another at one place; the next
occurrence of the old name in the same scope gets the new one.

In Python the scope is the innermost function around the edit, from its block structure; outside
a function the variable's tokens in the window around the cursor. In the tree-sitter languages it
is the function or block that declares the variable, from the syntax tree (:mod:`.syntax_scope`;
no suggestion when the tree shows none); in a language with neither, the window's tokens.
A change that puts a name already used in the scope in place of another is a different variable
now being used, not a rename, and suggests nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...core.document import Point
from .history import EditRecord
from .lines import WINDOW, LineDiff, Lines, Prediction
from .scope import enclosing_def, in_code, rename_sites
from .syntax_scope import SCOPES, scoped_names


class NotAVariable:
    """What :func:`carry_rename` answers when the syntax tree shows no variable where the name
    changed (a keyword: ``var`` -> ``let``): not a rename, and the other kinds are tried."""


NOT_A_VARIABLE = NotAVariable()

#: Uses of the old name read as code or not, outside a function (the first in code is taken).
CANDIDATES = 8


def renamed(diff: LineDiff, python: bool = True) -> tuple[str, str] | None:
    """``(old, new)`` when the line's only change is one variable's name, in one place or in
    several (the same name each time). In Python, ``f(name=...)`` names a keyword argument, not
    a variable; elsewhere it is an assignment or a default value."""
    a, b = diff.old_tokens, diff.new_tokens
    if len(a) != len(b) or diff.prefix == len(a):
        return None
    pairs = {(x.text, y.text) for x, y in zip(a, b, strict=True) if x.text != y.text}
    if len(pairs) != 1:
        return None
    old, new = a[diff.prefix], b[diff.prefix]
    if python and not (old.is_identifier and new.is_identifier):
        return None
    if not python and not (old.kind == new.kind == "name"):
        return None  # (Python's keywords, ``match`` or ``type``, are names elsewhere)
    before = a[diff.prefix - 1].text if diff.prefix else ""
    after = a[diff.prefix + 1].text if diff.prefix + 1 < len(a) else ""
    signature = bool(a) and a[0].text in ("def", "async")
    if before in (".", "->", "::"):
        return None  # an attribute or a path: a line rewrite, not a variable
    if python and not signature and after == "=" and before in ("(", ","):
        return None  # a keyword argument
    return old.text, new.text


def carry_rename(
    lines: Lines,
    diff: LineDiff,
    names: tuple[str, str],
    records: Sequence[EditRecord],
    cursor: Point,
    python: bool,
    grammar: str | None = None,
) -> Prediction | NotAVariable | None:
    """The next use of the old name in the renamed variable's scope. ``grammar``: a
    tree-sitter grammar with scopes (:mod:`.syntax_scope`), for a language other than Python;
    :data:`NOT_A_VARIABLE` when its tree shows no variable where the name changed."""
    old, new = names
    block = enclosing_def(lines, diff.line) if python else None
    if block is not None:
        rows = range(*block)
    else:
        lo = max(0, min(cursor.line, diff.line) - WINDOW)
        rows = range(lo, min(lines.line_count, max(cursor.line, diff.line) + WINDOW + 1))
    renamed_lines = {
        r.changed_line
        for r in records
        if (pair := r.single_line) is not None
        and new in pair[1]  # the cheap test first: most records are other edits
        and (names_of := renamed(LineDiff.of(r.changed_line, *pair), python)) is not None
        and names_of == names
    }
    here = max(cursor, Point(diff.line, 0)) if cursor.line == diff.line else cursor
    if grammar is not None and grammar in SCOPES:
        at = Point(diff.line, diff.new_tokens[diff.prefix].col)
        scoped = scoped_names(lines, grammar, at, names)
        if scoped is not None and not scoped.variable:
            return NOT_A_VARIABLE
        if scoped is None or any(p.line not in renamed_lines for p in scoped.new):
            return None  # no scope in the tree, or the new name was in use already
        ordered = [p for p in scoped.old if p >= here] + [p for p in scoped.old if p < here]
        if not ordered:
            return None
        return Prediction(
            ordered[0], Point(ordered[0].line, ordered[0].col + len(old)), new, "rename"
        )
    # Outside a function, up to CANDIDATES uses are read as code or not (a docstring's example);
    # in one, the block's own tokens already say so and the first use is the answer.
    limit = CANDIDATES if block is None and python else 1
    found = rename_sites(lines, rows, names, here, renamed_lines, limit)
    if found.new_in_use:
        return None  # the new name was in use already: another variable, not a rename
    ordered = (found.after + found.before)[:limit]
    if block is None and python:
        site = next((s for s in ordered if in_code(lines, s)), None)
    else:
        site = ordered[0] if ordered else None
    if site is None:
        return None
    return Prediction(site, Point(site.line, site.col + len(old)), new, "rename")
