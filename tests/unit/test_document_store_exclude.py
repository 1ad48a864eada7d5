"""Which open documents ``context.exclude`` keeps from models: remembered per path, and asked
again when the patterns change (the settings reloaded)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastedit_lsp.core.jobs import JobRegistry
from fastedit_lsp.lsp import documents
from fastedit_lsp.lsp.documents import DocumentStore
from fastedit_lsp.settings import GIT_IGNORED


def _store(patterns: list[str]) -> DocumentStore:
    def spawn(coro: Any) -> asyncio.Task[Any]:
        raise AssertionError("nothing is spawned here")

    return DocumentStore(
        JobRegistry(), spawn=spawn, encoding=lambda: "utf-16", exclude=lambda: patterns
    )


def test_a_path_matches_the_patterns_in_force_whenever_they_change() -> None:
    patterns = [".env*", "secrets/**"]
    store = _store(patterns)
    assert store.excluded("file:///w/.env.local") == ".env*"
    assert store.excluded("file:///w/secrets/key.py") == "secrets/**"
    assert store.excluded("file:///w/app.py") is None
    assert store.excluded("file:///w/app.py") is None  # asked again: the same answer
    patterns[:] = ["*.py"]  # the user's settings changed
    assert store.excluded("file:///w/app.py") == "*.py"
    assert store.excluded("file:///w/.env.local") is None
    patterns.append(GIT_IGNORED)  # git's answer is not remembered here: still pending
    assert store.excluded("file:///w/notes.md") == GIT_IGNORED
    store.git_ignored["/w/notes.md"] = False
    assert store.excluded("file:///w/notes.md") is None


def test_the_remembered_matches_are_bounded(monkeypatch: Any) -> None:
    monkeypatch.setattr(documents, "MATCHES_KEPT", 3)
    store = _store([".env*"])
    answers = [store.excluded(f"file:///w/{name}") for name in ("a", "b", ".env", "c", "d", ".env")]
    assert answers == [None, None, ".env*", None, None, ".env*"]
    assert len(store._matches) <= 4
