"""The offline next-edit engine: learn the transformation in the user's last edit and propose it
where it applies next.

Pure and deterministic. The last record of the document's :class:`EditHistory` is read as one
changed line and tried, in this order, as
1. a rename of a variable (:mod:`.rename`): the next occurrence of the old name in its scope;
2. an argument added to a call (:mod:`.calls`): the next call of that function that lacks it;
3. a line rewrite (:mod:`.rewrite`): the next line a known rewrite or the learnt template fits.
Every suggestion is checked (:func:`verified`) before it is returned.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...core.document import Point
from ..parse import language_of
from .calls import added_argument, carry_argument
from .history import EditRecord
from .lines import LineDiff, Lines, Prediction
from .rename import NOT_A_VARIABLE, carry_rename, renamed
from .rewrite import carry_rule, carry_template, known_rule, learn_template
from .scope import adds_syntax_error

#: Languages whose syntax the engine reads as Python (scopes from ``ast``, the parse check).
PYTHON = frozenset({"python", ""})
#: Lines on each side of an edit that the tree-sitter check parses.
CONTEXT_LINES = 40


def last_diff(records: Sequence[EditRecord], lines: Lines) -> LineDiff | None:
    """The user's last edit as one changed line, if it is still what the document holds."""
    if not records:
        return None
    record = records[-1]
    pair = record.single_line
    if pair is None:
        return None
    line = record.changed_line
    if line >= lines.line_count or lines.line(line) != pair[1]:
        return None
    return LineDiff.of(line, *pair)


def predict(
    lines: Lines, records: Sequence[EditRecord], cursor: Point, language: str = "python"
) -> Prediction | None:
    """The next edit, or None."""
    diff = last_diff(records, lines)
    if diff is None:
        return None
    python = language in PYTHON
    names = renamed(diff, python)
    found: Prediction | None = None
    if names is not None:
        grammar = None if python else language_of(language)
        carried = carry_rename(lines, diff, names, records, cursor, python, grammar)
        # A keyword changed (``var`` -> ``let``: the tree shows no variable) is a line rewrite.
        if carried is not NOT_A_VARIABLE:
            found = carried if isinstance(carried, Prediction) else None
            return found if found is not None and verified(lines, found, language) is None else None
    if (added := added_argument(lines, diff)) is not None:
        found = carry_argument(lines, diff, added, cursor, python)
    elif (rule := known_rule(diff)) is not None:
        found = carry_rule(lines, diff, rule, cursor, python)
    elif (template := learn_template(diff)) is not None:
        found = carry_template(lines, diff, template, cursor, python)
    if found is None or verified(lines, found, language) is not None:
        return None
    return found


def verified(lines: Lines, prediction: Prediction, language: str) -> str | None:
    """Why a suggestion cannot be shown on the current version (None: it can): it must apply
    to it, change something, and add no syntax error where a parser exists (``ast`` for Python,
    tree-sitter for the other languages with a grammar)."""
    python = language in PYTHON
    start, end = prediction.start, prediction.end
    if end < start or end.line >= lines.line_count:
        return "it does not apply to this version"
    if start.col > len(lines.line(start.line)) or end.col > len(lines.line(end.line)):
        return "it does not apply to this version"
    if start.line == end.line and lines.line(start.line)[start.col : end.col] == prediction.text:
        return "it changes nothing"
    # A rename puts one identifier in another's place (one the tree shows as an identifier, in
    # the tree-sitter languages): it cannot change the syntax, and the parse would cost more
    # than the rest of the suggestion.
    if prediction.kind == "rename":
        return None
    if python and adds_syntax_error(lines, prediction):
        return "it adds a syntax error"
    if not python and language and _tree_sitter_breaks(lines, prediction, language):
        return "it adds a syntax error"
    return None


def _tree_sitter_breaks(lines: Lines, prediction: Prediction, language: str) -> bool:
    """The parse check (tree-sitter) on the lines around the edit, where a grammar exists."""
    from ..parse import check_region, language_of

    grammar = language_of(language)
    if grammar is None:
        return False
    lo = max(0, prediction.start.line - CONTEXT_LINES)
    hi = min(lines.line_count, prediction.end.line + CONTEXT_LINES + 1)
    before = [lines.line(i) for i in range(lo, hi)]
    first, last = prediction.start.line - lo, prediction.end.line - lo
    head = before[first][: prediction.start.col]
    tail = before[last][prediction.end.col :]
    middle = (head + prediction.text + tail).split("\n")
    after = before[:first] + middle + before[last + 1 :]
    verdict = check_region(
        grammar, "\n".join(before) + "\n", "\n".join(after) + "\n", first, first + len(middle) - 1
    )
    return not verdict.ok
