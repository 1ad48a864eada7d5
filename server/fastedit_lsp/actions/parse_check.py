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
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..backends.base import ChatMessage, ChatRequest
from ..core.document import Point
from ..engines import names
from .base import ActionInput, Verification

if TYPE_CHECKING:
    from ..engines.checkers import Shadow
    from ..engines.parse import Parsed

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
    #: Whether CPython accepts the statements around the region before (Python; found on the
    #: first check).
    compiled: list[bool] = []
    #: What the package's other files declare (Go, Java; Rust: its crates; C, C++: its
    #: headers; read on the first check).
    package: list[names.PackageNames] = []

    trees = data.trees

    def verify(text: str) -> Verification:
        from ..engines.parse import Parsed, check_edit, parse

        clock = time.perf_counter()
        if not parsed:
            if trees is not None:
                parsed.append(trees.parse(document.uri, name, before))
            else:
                parsed.append(parse(name, before))
        first = parsed[0]
        assert isinstance(first, Parsed)
        verdict = check_edit(first, start, end, text)
        ok, details, after = verdict.ok, verdict.message, None
        if ok and (name == "python" or names.supported(name)):
            after = _after(first, start, end, text)
        if ok and name == "python" and after is not None:
            rejected = _cpython(first, after, start, end, text, compiled)
            if rejected is not None:
                ok, details = False, rejected
        checks = [_check("parse", ok, details, clock)]
        clock = time.perf_counter()
        if name in ("go", "java", "rust", "c", "cpp") and not package:
            package.append(data.package())
        known = package[0] if package else None
        checks.append(_names(name, first, after, start, text, clock, known))
        return combine(checks)

    return verify


def shadower(data: ActionInput) -> Callable[[str], Shadow] | None:
    """The draft's shadow for the project's checkers (``engines.checkers``): the document before
    the job (read now, as the verifier does) and with the draft in the region; None when no
    checker applies to the document's language."""
    from ..engines.checkers import FOR_LANGUAGE, shadow

    name = language(data)
    if name not in FOR_LANGUAGE or not data.path:
        return None
    document = data.document
    start = document.offset_of(data.start)
    if data.original is None:
        before = document.text
        end = start + len(document.get_text(data.start, data.end))
    else:
        head = document.get_text(Point(0, 0), data.start)
        before = head + data.original + document.get_text(data.end, document.end)
        end = start + len(data.original)
    path = data.path
    return lambda text: shadow(path, name, before, start, end, text)


def _after(before: Parsed, start: int, end: int, text: str) -> Parsed:
    """The whole text after the draft, parsed incrementally from ``before``."""
    from ..engines.parse import reparse

    return reparse(before, start, end, text)


def _check(
    check: str, ok: bool | None, details: str, since: float, **extra: object
) -> Verification:
    ms = round((time.perf_counter() - since) * 1000, 2)
    return {"name": check, "ok": ok, "details": details, "ms": ms, **extra}


def _cpython(
    before: Parsed, after: Parsed, start: int, end: int, text: str, accepted: list[bool]
) -> str | None:
    """CPython's message when it rejects the top-level statements around the draft but not
    those around the region before (found once: ``accepted``), else None."""
    from ..engines import cpython

    s = before.byte_of(start)
    if not accepted:
        old_block, _ = cpython.block(before.tree, before.data, s, before.byte_of(end))
        accepted.append(cpython.rejects(old_block) is None)
    if not accepted[0]:
        return None  # CPython rejects the code around already: tree-sitter's verdict stands
    new_end = s + len(text.encode("utf-8", "surrogatepass"))
    new_block, line = cpython.block(after.tree, after.data, s, new_end)
    rejection = cpython.rejects(new_block)
    if rejection is None:
        return None
    return f"Python syntax error (CPython): line {line + rejection.line}: {rejection.message}"


def _names(
    language: str,
    before: Parsed,
    after: Parsed | None,
    start: int,
    text: str,
    since: float,
    package: names.PackageNames = None,
) -> Verification:
    """The names check of the draft (``names`` in ``verification.checks``): ``ok: None`` when
    the language has none or the draft does not parse. A failure says where the first name is,
    relative to the region's start (``at``: line, character in code points, end)."""
    from ..engines.languages import DISPLAY
    from ..engines.names import check_names

    display = DISPLAY.get(language, language)
    if not names.supported(language):
        return _check("names", None, f"{display} names are not checked", since)
    if after is None:
        return _check("names", None, "not checked: the draft does not parse", since)
    s = before.byte_of(start)
    new_end = s + len(text.encode("utf-8", "surrogatepass"))
    verdict = check_names(language, after.tree, after.data, s, new_end, package)
    if verdict.ok is not False:
        return _check("names", verdict.ok, verdict.message, since)
    first = verdict.findings[0]
    head = after.data[s : first.start].decode("utf-8", "surrogatepass")
    line = head.count("\n")
    character = len(head) - (head.rfind("\n") + 1)
    at = {"line": line, "character": character, "end": character + len(first.name)}
    found = [f.message for f in verdict.findings[:5]]
    return _check("names", False, verdict.message, since, symbol=first.name, at=at, findings=found)


def combine(checks: list[Verification]) -> Verification:
    """The verification of a draft from its checks: ``ok`` false when any failed, null only
    when none could run; ``details`` names the first failed check (or says what passed)."""
    failed = [c for c in checks if c["ok"] is False]
    ran = [c for c in checks if c["ok"] is not None]
    if failed:
        first = failed[0]
        what = (
            first["details"]
            if first["name"] == "parse"
            else f"{first['name']} check: {first['details']}"
        )
        return {"ok": False, "details": what, "checks": checks}
    if not ran:
        return {"ok": None, "details": "; ".join(c["details"] for c in checks), "checks": checks}
    details = "; ".join(
        c["details"] if c["name"] == "parse" else f"{c['name']}: {c['details']}" for c in ran
    )
    return {"ok": True, "details": details, "checks": checks}


def correction(
    request: ChatRequest,
) -> Callable[[str, Verification], ChatRequest | None]:
    """The request asking the same model again, once, with its draft and the parser's message."""

    def follow_up(draft: str, result: Verification) -> ChatRequest | None:
        details = result.get("details") or "a syntax error"
        failed = [c for c in result.get("checks", ()) if c.get("ok") is False]
        checker = failed[0].get("name") if failed else "parse"
        if checker not in ("parse", "names"):
            ask = (
                f"The project's checker {checker} reports an error the draft introduced: "
                f"{failed[0].get('details')}. Reply again with the corrected code only."
            )
        elif checker == "names":
            ask = (
                f"That uses a name that is not defined: {failed[0].get('details')}. Reply again "
                "with the corrected code only (use only names the code defines or imports)."
            )
        else:
            ask = (
                f"That does not parse: {details}. Reply again with the corrected code only "
                "(close every bracket, brace and string you open)."
            )
        return dataclasses.replace(
            request,
            messages=(*request.messages, ChatMessage("assistant", draft), ChatMessage("user", ask)),
        )

    return follow_up
