"""Fix syntax beyond Python: a model repairs the first tree-sitter error, checked by a reparse.

Pure. For the languages with a grammar (``engines.parse``) other than Python: the error is the
first ERROR or MISSING node near the command's range; the region is its lines ± 2 (at most
:data:`MAX_LINES`); a model rewrites the region, and the answer lands only if the errors around
the region are fewer than before and none is new (the parse check), it keeps most of the lines,
and it does not repeat the lines around it. Offline, ``engines.syntax_repair`` inserts what
tree-sitter says is missing (a closer, a semicolon, a quote, a comma) around the range.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Sequence

from ..backends.base import ChatMessage, ChatRequest
from ..core.document import Document, Point
from ..prompting import prompts
from ..prompting.filters import FenceFilter, Pipeline
from .base import ActionInput, Draft, Offer, OfferView, OfflineAnswer, Verification, no_answer

#: Lines around the error the model may rewrite, and at most this many lines in all.
AROUND = 2
MAX_LINES = 12
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

    before = parse(name, document.text)
    problems = before.problems()
    if not problems:
        return Draft(
            request=None, offline=no_answer, no_suggestion="no suggestion: the file parses"
        )
    near = [p for p in problems if data.start.line - 2 <= p.line <= data.end.line + 2]
    problem = (near or problems)[0]
    last_line = min(
        before.data.count(b"\n", 0, problem.end) + AROUND,
        problem.line + MAX_LINES - AROUND - 1,
        document.line_count - 1,
    )
    first_line = max(0, problem.line - AROUND)
    start, end = Point(first_line, 0), Point(last_line, len(document.line(last_line)))
    original = document.get_text(start, end)
    # The region the answer replaces (the offline repair may choose another): read by verify.
    region = {"head": document.get_text(Point(0, 0), start), "original": original}
    region["tail"] = document.get_text(end, document.end)

    async def offline() -> OfflineAnswer | None:
        from ..engines.syntax_repair import repair

        # Tens of reparses of the file: off the event loop.
        fixed = await asyncio.to_thread(repair, name, before.text, data.start.line)
        if fixed is None:
            return None
        lines = fixed.text.split("\n")
        a = Point(fixed.start_line, 0)
        b = Point(fixed.end_line, len(document.line(fixed.end_line)))
        region["head"] = document.get_text(Point(0, 0), a)
        region["original"] = document.get_text(a, b)
        region["tail"] = document.get_text(b, document.end)
        region["offline"] = "yes"  # insertions inside the region only, by construction
        text = "\n".join(lines[fixed.start_line : fixed.end_line + 1]).removesuffix("\r")
        return OfflineAnswer(text, a, b)

    def verify(text: str) -> Verification:
        head, original, tail = region["head"], region["original"], region["tail"]
        offset = len(head)
        window_before = len(before.problems(*around(before, offset, offset + len(original))))
        if not text.strip():
            return {"ok": False, "details": "the answer is empty: it deletes the lines to fix"}
        if "offline" not in region and _repeats_neighbour(text, head, tail):
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
    budget = min(data.max_tokens, 64 + len(original))

    def ask(extra: str = "") -> ChatRequest:
        return ChatRequest(
            messages=(ChatMessage("system", prompts.FIX_SYNTAX), ChatMessage("user", user + extra)),
            max_tokens=budget,
            temperature=data.temperature,
        )

    def refine(_text: str, result: Verification) -> ChatRequest:
        return ask(
            f"\nYour previous answer was rejected: {result.get('details')}. "
            f"Reply with lines {first_line + 1} to {last_line + 1} only, corrected."
        )

    return Draft(
        request=ask(),
        pipeline=Pipeline(FenceFilter()),
        transform=lambda answer: answer.removesuffix("\n").removesuffix("\r"),
        offline=offline,
        verify=verify,
        refine=refine,
        rounds=2,
        region=(start, end),
        no_suggestion="no suggestion: no insertion of a missing closer, semicolon, quote or "
        "comma around the error makes it parse",
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
