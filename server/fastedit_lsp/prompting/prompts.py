"""Every system prompt fastedit sends, in one place: short, because fast models lose the thread.

Each action module builds its user message (the code, the examples, the error) around one of
these; ``tests/unit/test_prompts.py`` pins exactly what is sent for each action. The one user
message built here is the completions feature's (``fim: chat``, :func:`fim_chat_messages`),
pinned by ``tests/unit/test_fim_wire.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends.base import ChatMessage

#: Unlikely in code, so the model cannot mistake it for text of the file.
CURSOR = "<|CURSOR|>"

COMPLETE_REST = (
    "You are a code completion engine inside an editor. You receive a file with the marker "
    f"{CURSOR} where the cursor is. Reply with only the text to insert at the cursor: no "
    "explanation, no Markdown fences, no repetition of the code before or after the cursor. "
    "Complete the current statement or block, matching the file's indentation and style. "
    "If nothing should be inserted, reply with nothing."
)

EDIT_SELECTION = (
    "You are a code editor. You receive a file excerpt, a selection from it and an instruction. "
    "Reply with only the code that replaces the selection, following the instruction: no "
    "explanation, no Markdown fences, nothing from outside the selection. Keep the selection's "
    "indentation and the file's style."
)

#: Plan and apply, the plan: the standard model writes only what changes.
PLAN = (
    "You are a code editor planning an edit. You receive a file excerpt, a selection from it and "
    "an instruction. Reply with a short update of the selection: write the lines that change "
    "(with a line or two of unchanged code around each, copied exactly, so that its place is "
    "clear) and stand for every run of unchanged lines with one comment line `{marker}`. To "
    "delete lines, show the lines around them without them. Keep the indentation. No "
    "explanation, no Markdown fences."
)

#: Plan and apply, the merge (models other than the apply models, which know their task).
APPLY = (
    "You merge an update into code. The update shows the changed lines and stands for unchanged "
    "code with `... existing code ...` comments. Reply with the whole code after the update: "
    "every unchanged line kept exactly, every change made, no `... existing code ...` comment "
    "left. No explanation, no Markdown fences."
)

REGEX = (
    "You write one regular expression for Python's re module, meant for re.fullmatch. Reply "
    "with only the pattern: no quotes, no code fences, no explanation."
)

FIX_SYNTAX = (
    "You fix syntax errors. You receive a file excerpt with line numbers, the compiler's error, "
    "and the lines to rewrite. Reply with only the corrected version of those lines, keeping "
    "everything that is not part of the error exactly as it is: no explanation, no fences."
)

WRITE_TESTS = (
    "You write pytest tests. You receive a Python function (or method), its module's imports "
    "and the import path of its module. Reply with only a complete pytest module: imports, "
    "then one test function per behaviour. Every test must pass on the code as it is: assert "
    "the docstring's examples exactly as shown; one pytest.raises test per exception the "
    "function raises itself, called with arguments that reach that raise; assert only values "
    "you can derive from the code. A hypothesis property draws only inputs the function "
    "accepts (its guard clauses, documented preconditions and declared exceptions); where "
    "the domain is unclear, treat an exception as its answer, not a failure. Assert the "
    "return type, and idempotence or a round trip only when the code guarantees it. No "
    "explanation, no fences. Never call external services."
)

FIM_SYSTEM = (
    "You are a code completion engine inside an editor. You receive a file with the marker "
    f"{CURSOR} where the cursor is, and perhaps excerpts of other files for reference. Reply with "
    f"only the text to insert at {CURSOR}: no explanation, no Markdown fences, no repetition of "
    "the code before or after the cursor. If nothing should be inserted, reply with nothing."
)


def fim_chat_messages(
    prefix: str,
    suffix: str,
    *,
    path: str,
    language_id: str,
    snippets: Sequence[tuple[str, str]] = (),
) -> tuple[ChatMessage, ...]:
    """Fill-in-the-middle for any chat model: the file with :data:`CURSOR` at the cursor.

    ``snippets`` are ``(path, text)`` excerpts of other files, shown first, each under its path.
    """
    language = language_id or "text"
    parts = [f"Excerpt of {name}:\n```\n{text.rstrip()}\n```\n" for name, text in snippets]
    parts.append(
        f"File: {path or 'untitled'} (language: {language})\n"
        f"```{language}\n{prefix}{CURSOR}{suffix}\n```\n"
        f"Reply with only the text that goes at {CURSOR}."
    )
    return (ChatMessage("system", FIM_SYSTEM), ChatMessage("user", "".join(parts)))
