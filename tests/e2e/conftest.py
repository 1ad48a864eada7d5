"""Fixtures: the loopback stub model and a factory of editors talking to the real server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from fastedit_lsp.tools.stub import StubModelServer
from tests.support.harness import Editor, hermetic_env, start_editor, stop_editor
from tests.support.reliability import RECORDER, UPDATE, Recorder, write

MakeEditor = Callable[..., Awaitable[Editor]]


@pytest.fixture
async def stub() -> AsyncIterator[StubModelServer]:
    async with await StubModelServer.start() as server:
        yield server


@pytest.fixture
async def make_editor(stub: StubModelServer) -> AsyncIterator[MakeEditor]:
    """Start editors; by default both profiles point at the stub model."""
    editors: list[Editor] = []

    async def make(*, env: dict[str, str] | None = None, model: bool = True, **kw: Any) -> Editor:
        base: dict[str, str] = {}
        if model:
            base = {
                "FASTEDIT_FAST_BASE_URL": stub.base_url,
                "FASTEDIT_FAST_MODEL": "stub-fast",
                "FASTEDIT_STANDARD_BASE_URL": stub.base_url,
                "FASTEDIT_STANDARD_MODEL": "stub-strong",
            }
        editor = await start_editor(hermetic_env(**{**base, **(env or {})}), **kw)
        editors.append(editor)
        return editor

    yield make
    for editor in editors:
        await stop_editor(editor)
        # Checked for every test: edits stay in their target and never delete typing.
        assert editor.violations == []


@pytest.fixture
async def editor(make_editor: MakeEditor) -> Editor:
    return await make_editor()


@pytest.fixture
def reliability() -> Recorder:
    """Record a (fault or input, observed outcome) row of docs/reliability.md."""
    return RECORDER


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if UPDATE and RECORDER.rows:
        write(RECORDER.rows)
