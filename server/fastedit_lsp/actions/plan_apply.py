"""Plan and apply for edit selection: when to plan, the two requests, and the merge's check.

Pure: no pygls, no httpx. The standard model writes a short update of the selection (the plan:
changed lines, a little context, ``... existing code ...`` comment lines for everything kept);
the apply model merges it into the selection, streamed as a minimal diff like any rewrite. A
merge that keeps a marker or drops a line of the plan is wrong (the apply model misread the
plan): it fails :func:`check_merge` and the job falls back to a direct rewrite.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..backends.base import ChatMessage, ChatRequest
from ..prompting import prompts
from ..prompting.context import CursorContext
from .base import Verification
from .edit_selection import user_message

#: ``editSelection.plan`` and the command's ``plan`` argument.
PLAN_VALUES = ("auto", "on", "off")

#: Line comment starts by language id; the rest use ``//``.
_HASH = frozenset(
    {"python", "ruby", "shellscript", "sh", "bash", "yaml", "toml", "r", "perl", "makefile"}
)
_DASH = frozenset({"lua", "sql", "haskell", "elm", "ada"})
_SEMI = frozenset({"lisp", "clojure", "scheme", "emacs-lisp", "elisp", "racket"})
_BLOCK = {"html": ("<!--", "-->"), "xml": ("<!--", "-->"), "css": ("/*", "*/")}

#: A comment line standing for unchanged code: an ellipsis and "existing code" (or the
#: phrasings apply models are trained on: "rest of code", "unchanged code"...).
_MARKER = re.compile(
    r"^\s*(?:#+|//+|--|;+|/\*|<!--|%|\*)\s*(?:\.\.\.|…)\s*"
    r"(?:keep\s+)?(?:existing|rest\s+of(?:\s+the)?|unchanged|remaining|other)\s+code\b.*$",
    re.IGNORECASE,
)


def marker(language_id: str) -> str:
    """The marker comment line in the selection's language (``# ... existing code ...``)."""
    if language_id in _BLOCK:
        start, end = _BLOCK[language_id]
        return f"{start} ... existing code ... {end}"
    if language_id in _HASH:
        return "# ... existing code ..."
    if language_id in _DASH:
        return "-- ... existing code ..."
    if language_id in _SEMI:
        return ";; ... existing code ..."
    return "// ... existing code ..."


def is_marker(line: str) -> bool:
    """Whether ``line`` is a marker comment standing for unchanged code."""
    return _MARKER.match(line.rstrip("\r\n")) is not None


@dataclass(frozen=True)
class Choice:
    """Whether a job plans, and why (for the job's reason)."""

    plan: bool
    why: str


def decide(*, setting: str, argument: str | None, mode: str, lines: int, min_lines: int) -> Choice:
    """Plan or not: ``on``, or ``auto`` and at least ``min_lines`` lines; never in fast mode.

    ``argument`` (the command's ``plan``) wins over ``setting`` (``editSelection.plan``);
    ``mode`` is the server's mode, or the profile a retry forces.
    """
    value, source = (argument, "plan argument") if argument else (setting, "editSelection.plan")
    if value == "off":
        return Choice(False, f"{source} off")
    if mode == "fast":
        return Choice(False, f"{source} {value}, but plans run in auto and standard mode only")
    if value == "on":
        return Choice(True, f"{source} on")
    if lines >= min_lines:
        return Choice(True, f"{source} auto: {lines} lines ≥ planMinLines {min_lines}")
    return Choice(False, f"{source} auto: {lines} lines < planMinLines {min_lines}")


def plan_request(
    ctx: CursorContext, instruction: str, *, max_tokens: int, temperature: float
) -> ChatRequest:
    """The standard model's request: the update of the selection, with markers."""
    system = prompts.PLAN.format(marker=marker(ctx.language_id))
    user = user_message(ctx, instruction, "Reply with the update of the selection only.")
    budget = min(max_tokens, max(64, len(ctx.selection) // 2 + 256))
    return ChatRequest(
        messages=(ChatMessage("system", system), ChatMessage("user", user)),
        max_tokens=budget,
        temperature=temperature,
    )


def apply_request(
    original: str,
    plan: str,
    instruction: str,
    *,
    apply_format: bool,
    max_tokens: int,
    temperature: float,
) -> ChatRequest:
    """The apply model's request: the selection and the plan, verbatim, in the
    ``<instruction><code><update>`` format of Morph's and Relace's apply models (which take no
    system prompt; any other model gets one saying what to do)."""
    user = (
        f"<instruction>{instruction}</instruction>\n"
        f"<code>{original}</code>\n"
        f"<update>{plan}</update>"
    )
    messages: tuple[ChatMessage, ...] = (ChatMessage("user", user),)
    if not apply_format:
        messages = (ChatMessage("system", prompts.APPLY), *messages)
    # The merge is the selection plus what the plan adds.
    budget = min(max_tokens, max(64, (len(original) + len(plan)) // 2 + 256))
    return ChatRequest(messages=messages, max_tokens=budget, temperature=temperature)


def _lines(text: str) -> Iterator[str]:
    return (line.rstrip() for line in text.splitlines())


def line_set(text: str) -> frozenset[str]:
    """The lines of ``text`` (trailing blanks stripped), for :func:`kept_marker`."""
    return frozenset(_lines(text))


def kept_marker(line: str, original: frozenset[str]) -> bool:
    """A merged line that is a marker the original (:func:`line_set`) did not have: checked as
    the merge streams, before the line reaches the buffer."""
    return is_marker(line) and line.rstrip() not in original


def check_merge(original: str, plan: str, merged: str) -> Verification:
    """The merge keeps no marker and every line the plan wrote, in the plan's order."""
    had = line_set(original)
    for number, line in enumerate(_lines(merged), 1):
        if kept_marker(line, had):
            return {"ok": False, "details": f"the merge kept a marker (line {number}: {line!r})"}
    wanted = [line for line in _lines(plan) if line.strip() and not is_marker(line)]
    merged_lines = _lines(merged)
    for line in wanted:
        if not any(candidate == line for candidate in merged_lines):
            return {"ok": False, "details": f"the merge dropped a line of the plan: {line!r}"}
    return {"ok": True, "details": f"the merge keeps the plan's {len(wanted)} lines, no marker"}


def has_marker(plan: str) -> bool:
    """Whether a plan stands for any unchanged code (one without is a whole rewrite)."""
    return any(is_marker(line) for line in plan.splitlines())
