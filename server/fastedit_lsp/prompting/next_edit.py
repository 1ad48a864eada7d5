"""The next-edit prompt: the user's recent edits and the window around the cursor, asked back
as the window rewritten with the edit the user will make next ("original/updated" blocks).

Pure: the history comes as ``(before, after)`` line blocks, the window as text with the cursor
marked.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..backends.base import ChatMessage

SYSTEM = (
    "You predict the next edit a programmer makes in their code. You see their recent edits, "
    "oldest first, each as an <original> block and the <updated> block it became, and a window "
    "of the file with the cursor marked <|cursor|>. Continue what the edits are doing (a "
    "rename carried to the next use, an argument added to the next call, the same rewrite on "
    "the next line) with the one next edit. Answer with only the window after that edit, in "
    "<updated></updated>, without the cursor mark. If no edit follows, repeat the window."
)


def next_edit_messages(
    path: str, edits: Sequence[tuple[str, str]], window: str, first_line: int
) -> tuple[ChatMessage, ...]:
    parts = [f"File: {path}", "", "Recent edits:"]
    for before, after in edits:
        parts += ["<original>", before, "</original>", "<updated>", after, "</updated>"]
    parts += [
        "",
        f"Window (from line {first_line + 1}):",
        "<original>",
        window,
        "</original>",
    ]
    return (ChatMessage("system", SYSTEM), ChatMessage("user", "\n".join(parts)))
