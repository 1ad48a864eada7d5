"""Carry a rename: the user turned one variable's name into another at one place; the next
occurrence of the old name in the same scope gets the new one.

The scope is the innermost function around the edit, from its syntax tree (Python); outside a
function (or in a block that does not parse) the variable's tokens in the window around the cursor.
A change that puts a name already used in the scope in place of another is a different variable
now being used, not a rename, and suggests nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...core.document import Point
from .history import EditRecord
from .lines import WINDOW, LineDiff, Lines, Prediction
from .scope import enclosing_def, name_sites, token_sites


def renamed(diff: LineDiff) -> tuple[str, str] | None:
    """``(old, new)`` when the line's only change is one variable name for another."""
    old_mid, new_mid = diff.old_mid, diff.new_mid
    if len(old_mid) != 1 or len(new_mid) != 1:
        return None
    old, new = old_mid[0], new_mid[0]
    if not (old.is_identifier and new.is_identifier):
        return None
    toks = diff.old_tokens
    before = toks[diff.prefix - 1].text if diff.prefix else ""
    after = toks[diff.prefix + 1].text if diff.prefix + 1 < len(toks) else ""
    if before == "." or (after == "=" and before in ("(", ",")):
        return None  # an attribute or a keyword argument: a line rewrite, not a variable
    return old.text, new.text


def carry_rename(
    lines: Lines,
    diff: LineDiff,
    names: tuple[str, str],
    records: Sequence[EditRecord],
    cursor: Point,
    python: bool,
) -> Prediction | None:
    old, new = names
    block = enclosing_def(lines, diff.line) if python else None
    sites_old: list[Point] | None = None
    sites_new: list[Point] | None = None
    if block is not None:
        sites_old = name_sites(lines, *block, old)
        sites_new = name_sites(lines, *block, new) if sites_old is not None else None
    if sites_old is None or sites_new is None:
        lo = max(0, min(cursor.line, diff.line) - WINDOW)
        hi = min(lines.line_count, max(cursor.line, diff.line) + WINDOW + 1)
        rows = range(block[0], block[1]) if block is not None else range(lo, hi)
        sites_old = list(token_sites(lines, rows, old))
        sites_new = list(token_sites(lines, rows, new))
    if not sites_old:
        return None
    renamed_lines = {
        r.changed_line
        for r in records
        if (pair := r.single_line) is not None
        and (names_of := renamed(LineDiff.of(r.changed_line, *pair))) is not None
        and names_of == names
    }
    if any(site.line not in renamed_lines for site in sites_new):
        return None  # the new name was in use already: another variable, not a rename
    here = max(cursor, Point(diff.line, 0)) if cursor.line == diff.line else cursor
    after = [s for s in sites_old if s >= here]
    site = after[0] if after else sites_old[0]
    return Prediction(site, Point(site.line, site.col + len(old)), new, "rename")
