"""What git says about the user's files (no LSP): whether a file is git-ignored.

``context.exclude``'s default includes git-ignored files, which never reach a model; the
language server asks once per opened document, off the request path.
"""

from __future__ import annotations

import asyncio
import os

from .processes import run_process

#: How long ``git check-ignore`` may take.
GIT_SECONDS = 5.0


async def git_ignored(path: str) -> bool:
    """Whether git says ``path`` is ignored (False without git or outside a repository)."""
    directory = os.path.dirname(path)
    if not await asyncio.to_thread(os.path.isdir, directory):
        return False
    try:
        code, _ = await run_process(
            ("git", "check-ignore", "-q", "--", path), cwd=directory, seconds=GIT_SECONDS
        )
    except OSError:
        return False  # no git: nothing is git-ignored
    return code == 0
