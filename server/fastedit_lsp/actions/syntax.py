"""Fix syntax: repair the first syntax error, touching only the lines around it.

Pure. Python here (other languages with a grammar: ``syntax_tree``): ``compile`` finds the
error; the offline engine tries small repairs confined to the error region
(``engines.syntax_fix.python``); a model rewrites the region (the statement holding the error
± 2 lines). Either way the result is verified: the whole file must parse.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Sequence

from ..core.document import Document, Point
from ..core.jobs import Inputs
from ..engines.syntax_fix.python import error_region, find_error, repair
from . import line_fix
from .base import (
    ActionInput,
    CommandInput,
    Draft,
    Offer,
    OfferView,
    OfflineAnswer,
    Start,
    Verification,
    no_answer,
)

#: How alike (difflib's ratio) a model's repair must be to the lines it replaces.
MIN_KEPT = 0.6


def _parses(source: str) -> str | None:
    try:
        compile(source, "<fastedit>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except ValueError as exc:  # NUL bytes
        return str(exc)
    return None


def start(document: Document, command: CommandInput) -> Start:
    """At the range (``prepare`` finds the error region)."""
    return Start(command.start, command.end, Inputs(diagnostics=command.diagnostics))


def offers(view: OfferView) -> Sequence[Offer]:
    """Offered when the file's syntax error is within two lines of the range (Python: its
    outline's error; other languages: tree-sitter's, see ``syntax_tree``)."""
    if (view.document.language_id or "python") != "python":
        from . import syntax_tree

        return syntax_tree.offers(view)
    error = view.outline().error
    if error is None:
        return ()
    line, message = error
    if not view.start.line - 2 <= line <= view.end.line + 2:
        return ()
    argument = {"uri": view.uri, "range": view.wire_range, "diagnostics": view.errors}
    return [Offer(f"Fix syntax error: {message} (fastedit)", "quickfix", argument)]


def prepare(data: ActionInput) -> Draft:
    document = data.document
    if (data.document.language_id or "python") != "python":
        from . import syntax_tree

        if syntax_tree.grammar(document, data.path) is not None:
            return syntax_tree.prepare(data, data.path)
        return Draft(
            request=None,
            offline=no_answer,
            no_suggestion="no suggestion: no parser for this language",
        )
    source = document.text
    found = find_error(source)
    if found is None:
        return Draft(
            request=None, offline=no_answer, no_suggestion="no suggestion: the file parses"
        )
    line, message = found
    # The statement holding the error, ± 2 lines: what either engine may change.
    first, last = error_region(source) or (line, line)
    last = min(last, document.line_count - 1)
    start = Point(first, 0)
    end = Point(last, len(document.line(last)))
    # The text around the region (and in it) before any edit: the document changes as the fix
    # streams in.
    around = {
        "before": document.get_text(Point(0, 0), start),
        "original": document.get_text(start, end),
        "after": document.get_text(end, document.end),
    }

    async def offline() -> OfflineAnswer | None:
        # Up to ~80 compiles of the file: off the event loop.
        fixed = await asyncio.to_thread(repair, source)
        if fixed is None:
            return None
        a = Point(fixed.start_line, 0)
        b = Point(fixed.end_line, len(document.line(fixed.end_line)))
        around["before"] = document.get_text(Point(0, 0), a)
        around["original"] = document.get_text(a, b)
        around["after"] = document.get_text(b, document.end)
        # Whole lines without the last line's terminator: the document keeps its own.
        text = fixed.new_text
        for ending in ("\r\n", "\n", "\r"):
            if text.endswith(ending):
                text = text[: -len(ending)]
                break
        return OfflineAnswer(text, a, b)

    def verify(text: str) -> Verification:
        if not text.strip():
            # Deleting the broken lines makes many files parse: that is not a repair.
            return {
                "ok": False,
                "details": "the answer is empty: it deletes the lines it should fix",
            }
        if (outside := _reaches_outside(text, around["before"], around["after"])) is not None:
            return {"ok": False, "details": outside}
        kept = difflib.SequenceMatcher(None, around["original"], text, autojunk=False).ratio()
        if kept < MIN_KEPT:
            # Any valid Python in place of the broken lines parses: a repair changes little.
            return {
                "ok": False,
                "details": f"the answer rewrites the lines instead of repairing them "
                f"({kept:.0%} alike, a repair keeps {MIN_KEPT:.0%})",
            }
        candidate = around["before"] + text + around["after"]
        problem = _parses(candidate)
        if problem is None:
            return {"ok": True, "details": f"the file parses (was: line {line + 1}: {message})"}
        return {"ok": False, "details": f"still a syntax error: {problem}"}

    numbered = "\n".join(
        f"{i + 1:>5} | {document.line(i)}"
        for i in range(max(0, first - 8), min(document.line_count, last + 9))
    )
    user = (
        f"File: {data.path}\nError: line {line + 1}: {message}\n\nExcerpt:\n{numbered}\n\n"
        f"Rewrite lines {first + 1} to {last + 1}."
    )
    return line_fix.draft(
        data,
        user=user,
        lines=(first, last),
        region=(start, end),
        budget=min(data.max_tokens, 64 + len(document.get_text(start, end))),
        offline=offline,
        verify=verify,
        no_suggestion="no suggestion: no small repair around the error makes the file parse",
    )


def _reaches_outside(text: str, before: str, after: str) -> str | None:
    """Why an answer changes lines outside the region (it repeats its neighbours), or None."""
    lines = text.splitlines()
    if not lines:
        return None
    previous = before.rstrip("\r\n").rsplit("\n", 1)[-1] if before.strip() else ""
    following = after.lstrip("\r\n").split("\n", 1)[0] if after.strip() else ""
    if previous.strip() and lines[0].strip() == previous.strip():
        return "the answer repeats the line before the error region: it reaches outside it"
    if following.strip() and lines[-1].strip() == following.strip():
        return "the answer repeats the line after the error region: it reaches outside it"
    return None
