"""What a model may see of the document: prefix and suffix within a budget, and the exclude rules.

Pure: no pygls, no httpx, no I/O (whether a file is git-ignored is decided by the caller and passed
in). The budget is in estimated tokens (about four characters each for code), filled with whole
lines alternately before and after the cursor, nearest first, as llm-ls does.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..core.document import Document, Point

CHARS_PER_TOKEN = 4

#: Never sent to a model: environment files, keys and certificates (git-ignored files are added by
#: the server, which asks git).
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    ".envrc",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.crt",
    "*.cer",
    "*.der",
    "*.jks",
    "*.keystore",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "*.gpg",
    "credentials*",
    "secrets.*",
    "*.secret",
    ".git/**",
)


def is_excluded(path: str, patterns: tuple[str, ...] | list[str]) -> str | None:
    """The pattern that excludes ``path`` (a file path), or None.

    A pattern without a slash matches the file name (``.env*``); one with a slash matches the path
    or any tail of it (``secrets/**``); a trailing slash names a directory (``private/``).
    """
    posix = PurePosixPath(path.replace("\\", "/"))
    parts = posix.parts
    for pattern in patterns:
        # A trailing slash names a directory: everything below it.
        body = pattern + "**" if pattern.endswith("/") else pattern
        if "/" not in body:
            if fnmatch.fnmatchcase(posix.name, body):
                return pattern
            continue
        for i in range(len(parts)):
            tail = "/".join(parts[i:])
            if fnmatch.fnmatchcase(tail, body) or fnmatch.fnmatchcase(tail, body + "/**"):
                return pattern
            if body.endswith("/**") and fnmatch.fnmatchcase(tail, body[:-3] + "/*"):
                return pattern
    return None


@dataclass(frozen=True)
class CursorContext:
    """The text around a target range that goes into a prompt."""

    prefix: str
    selection: str
    suffix: str
    #: Whether the prefix/suffix were cut short by the budget.
    truncated: bool
    language_id: str
    path: str


def around(
    document: Document, start: Point, end: Point, *, budget_tokens: int, path: str
) -> CursorContext:
    """Prefix before ``start`` and suffix after ``end``, whole lines, within ``budget_tokens``."""
    budget = max(budget_tokens, 64) * CHARS_PER_TOKEN
    selection = document.get_text(start, end)
    head = document.line(start.line)[: start.col]
    tail = document.get_text(end, Point(end.line, len(document.line(end.line))))
    # The cursor's own line is cut too when it alone exceeds the budget (a minified file, a 5 MB
    # literal): the part nearest the cursor is kept.
    room = max(0, budget - len(selection))
    truncated = len(head) + len(tail) > room
    if truncated:
        keep_head = max(room // 2, room - len(tail))
        head = head[len(head) - min(len(head), keep_head) :]
        tail = tail[: max(0, room - len(head))]
    budget -= len(head) + len(tail) + len(selection)
    before: list[str] = []
    after: list[str] = []
    up, down = start.line - 1, end.line + 1
    while up >= 0 or down < document.line_count:
        progressed = False
        for side in ("up", "down"):
            if side == "up" and up >= 0:
                line = document.line(up) + "\n"
                if len(line) > budget:
                    up = -1
                    truncated = True
                    continue
                before.append(line)
                budget -= len(line)
                up -= 1
                progressed = True
            elif side == "down" and down < document.line_count:
                line = "\n" + document.line(down)
                if len(line) > budget:
                    down = document.line_count
                    truncated = True
                    continue
                after.append(line)
                budget -= len(line)
                down += 1
                progressed = True
        if not progressed:
            break
    prefix = "".join(reversed(before)) + head
    # Keep the document's own line ending after the cursor line when it has more lines.
    suffix = tail + "".join(after)
    if down < document.line_count or (after and end.line + len(after) < document.line_count - 1):
        truncated = True
    return CursorContext(prefix, selection, suffix, truncated, document.language_id, path)
