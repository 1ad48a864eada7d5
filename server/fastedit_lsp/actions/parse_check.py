"""The parse check as an action's verifier, and the follow-up request when a draft fails it.

Pure. Every action that writes code into a document in a language with a grammar (see
``engines.parse``) verifies its draft with :func:`verifier`: the document before the job, with
the draft in the job's region, must not have more syntax errors around the region than before.
A streamed draft that fails is asked for again once with the parser's message
(:func:`correction`); what happens after that (escalation, or landing flagged) is the
pipeline's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..backends.base import ChatMessage, ChatRequest
from ..core.document import Point
from .base import ActionInput, Verification

#: Documents longer than this (characters) are not parse-checked: tree-sitter holds the GIL while
#: it parses, and a 5 MB line took 1.7 s to parse and 3.4 s to check, the server answering
#: nothing meanwhile. Their drafts are recorded as unchecked (``ok: null``).
MAX_CHARACTERS = 1_000_000


def language(data: ActionInput) -> str | None:
    """The grammar of the job's document (its languageId, else its path), or None."""
    from ..engines.parse import language_of

    return language_of(data.document.language_id) or language_of(data.path)


def verifier(data: ActionInput) -> Callable[[str], Verification] | None:
    """Checks a draft for the job's region of ``data.document``; None without a grammar.

    The document is read now (before any edit): the text before the job is the document with
    the region's original text (``data.original``: the region may already hold the job's own
    text, on escalation or retry). It is parsed on the first check and kept for the next ones
    (a correction, an escalation), which reparse incrementally.
    """
    name = language(data)
    if name is None:
        return None
    document = data.document
    start = document.offset_of(data.start)
    if data.original is None:
        # The document as it is (one join: the kept parse compares it with its own text).
        before = document.text
        end = start + len(document.get_text(data.start, data.end))
    else:
        head = document.get_text(Point(0, 0), data.start)
        before = head + data.original + document.get_text(data.end, document.end)
        end = start + len(data.original)
    if len(before) > MAX_CHARACTERS:
        return None
    parsed: list[object] = []

    trees = data.trees

    def verify(text: str) -> Verification:
        from ..engines.parse import Parsed, check_edit, parse

        if not parsed:
            if trees is not None:
                parsed.append(trees.parse(document.uri, name, before))
            else:
                parsed.append(parse(name, before))
        first = parsed[0]
        assert isinstance(first, Parsed)
        verdict = check_edit(first, start, end, text)
        return {"ok": verdict.ok, "details": verdict.message}

    return verify


def correction(
    request: ChatRequest,
) -> Callable[[str, Verification], ChatRequest | None]:
    """The request asking the same model again, once, with its draft and the parser's message."""

    def follow_up(draft: str, result: Verification) -> ChatRequest | None:
        details = result.get("details") or "a syntax error"
        return dataclasses.replace(
            request,
            messages=(
                *request.messages,
                ChatMessage("assistant", draft),
                ChatMessage(
                    "user",
                    f"That does not parse: {details}. Reply again with the corrected code only "
                    "(close every bracket, brace and string you open).",
                ),
            ),
        )

    return follow_up
