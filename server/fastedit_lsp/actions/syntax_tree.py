"""Fix syntax beyond Python: repair the first tree-sitter error, checked by a reparse.

Pure. For the languages with a grammar (``engines.parse``) other than Python: the error is the
first ERROR or MISSING node near the command's range; the region is its lines ± 2 (at most
:data:`MAX_LINES`; ``engines.syntax_fix.treesitter.error_region``); a model rewrites the region, or
offline the engine inserts what tree-sitter reports missing (``engines.syntax_fix.treesitter``). The
answer lands only if the errors around the region are fewer than before and none is new (the
parse check), it keeps most of the lines, and (a model's) it does not repeat the lines around it.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Sequence

from ..core.document import Document, Point
from . import line_fix
from .base import ActionInput, Draft, Offer, OfferView, OfflineAnswer, Verification, no_answer

#: How alike (difflib's ratio) a repair must be to the lines it replaces.
MIN_KEPT = 0.6


def grammar(document: Document, uri: str) -> str | None:
    from ..engines.parse import language_of

    name = language_of(document.language_id) or language_of(uri)
    return None if name in (None, "python") else name


def offers(view: OfferView) -> Sequence[Offer]:
    """Offered when the editor reports an error in range and the parser finds one within two
    lines of it (the parse runs only then: code actions are asked for on every cursor move)."""
    name = grammar(view.document, view.uri)
    if name is None or view.errors == 0:
        return ()
    from ..engines.parse import parse_errors

    for problem in parse_errors(name, view.document.text):
        if view.start.line - 2 <= problem.line <= view.end.line + 2:
            argument = {"uri": view.uri, "range": view.wire_range, "diagnostics": view.errors}
            return [Offer(f"Fix syntax error: {problem.message} (fastedit)", "quickfix", argument)]
    return ()


def prepare(data: ActionInput, path: str) -> Draft:
    """The model's request for the region around the first error near the range."""
    document = data.document
    name = grammar(document, path) or ""
    from ..engines.parse import around, check_edit, parse, reparse
    from ..engines.syntax_fix.treesitter import error_region, repair

    before = parse(name, document.text)
    found = error_region(before, data.start.line, data.end.line)
    if found is None:
        return Draft(
            request=None, offline=no_answer, no_suggestion="no suggestion: the file parses"
        )
    problem, first_line, last_line = found
    last_line = min(last_line, document.line_count - 1)
    start, end = Point(first_line, 0), Point(last_line, len(document.line(last_line)))
    head = document.get_text(Point(0, 0), start)
    original = document.get_text(start, end)
    tail = document.get_text(end, document.end)
    offset = len(head)
    window_before = len(before.problems(*around(before, offset, offset + len(original))))
    #: The offline repair's answer: insertions only, so its lines may repeat their neighbours.
    offline_text: list[str] = []

    async def offline() -> OfflineAnswer | None:
        # A few hundred incremental reparses: off the event loop.
        fixed = await asyncio.to_thread(repair, name, document.text, offset, offset + len(original))
        if fixed is None:
            return None
        offline_text.append(fixed.text)
        return OfflineAnswer(fixed.text)

    def verify(text: str) -> Verification:
        if not text.strip():
            return {"ok": False, "details": "the answer is empty: it deletes the lines to fix"}
        if text not in offline_text and _repeats_neighbour(text, head, tail):
            return {"ok": False, "details": "the answer repeats a line around the region"}
        kept = difflib.SequenceMatcher(None, original, text, autojunk=False).ratio()
        if kept < MIN_KEPT:
            return {
                "ok": False,
                "details": f"the answer rewrites the lines instead of repairing them "
                f"({kept:.0%} alike, a repair keeps {MIN_KEPT:.0%})",
            }
        verdict = check_edit(before, offset, offset + len(original), text)
        if not verdict.ok:
            return {"ok": False, "details": verdict.message}
        after = reparse(before, offset, offset + len(original), text)
        left = after.problems(*around(after, offset, offset + len(text)))
        if len(left) >= window_before:
            return {"ok": False, "details": f"still a syntax error: {left[0].message}"}
        return {"ok": True, "details": f"fixed ({problem.message})"}

    numbered = "\n".join(
        f"{i + 1:>5} | {document.line(i)}"
        for i in range(max(0, first_line - 8), min(document.line_count, last_line + 9))
    )
    user = (
        f"File: {path} (language: {document.language_id or name})\n"
        f"Error (tree-sitter): {problem.message}\n\nExcerpt:\n{numbered}\n\n"
        f"Rewrite lines {first_line + 1} to {last_line + 1}."
    )
    return line_fix.draft(
        data,
        user=user,
        lines=(first_line, last_line),
        region=(start, end),
        budget=min(data.max_tokens, 64 + len(original)),
        offline=offline,
        verify=verify,
        no_suggestion="no suggestion: no insertion of a missing token around the error fixes it",
    )


def _repeats_neighbour(text: str, head: str, tail: str) -> bool:
    lines = text.splitlines()
    if not lines:
        return False
    previous = head.rstrip("\r\n").rsplit("\n", 1)[-1].strip() if head.strip() else ""
    following = tail.lstrip("\r\n").split("\n", 1)[0].strip() if tail.strip() else ""
    return bool(
        (previous and lines[0].strip() == previous)
        or (following and lines[-1].strip() == following)
    )
