"""One server and one stub model per test module, reset between its tests.

Starting the real server costs 0.5–0.6 s per test (more under load); a module whose tests only
need *a* server talking to the stub shares one. A module opts in with::

    from tests.support import shared_server

    pytestmark = pytest.mark.asyncio(loop_scope="module")
    module_stub, module_editor = shared_server.module_stub, shared_server.module_editor
    stub = shared_server.stub
    editor = shared_server.editor
    make_editor = shared_server.make_editor

Its tests then run in the module's event loop; ``editor`` is the module's server and ``stub``
its stub model, and ``make_editor`` still starts a fresh server (pointing at the shared stub)
for a test about start-up, settings at ``initialize``, the environment or a crash.

Tests stay independent: before each test the stub forgets its script and requests (and gets
its default answer back); after each test every job the test started has ended (waited for,
not slept on), the documents it opened are closed, the editor's record of edits, statuses and
requests is cleared, and the contract check (no resource operations, edits only to open
documents) is asserted as for a fresh server. A test that changes the server's settings, trips
a breaker, or needs the stub's connection count from zero uses ``make_editor`` instead.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest_asyncio

from fastedit_lsp.tools.stub import StubModelServer
from tests.support.harness import HANG_GUARD, Editor, hermetic_env, start_editor, stop_editor

MakeEditor = Callable[..., Awaitable[Editor]]


def stub_env(stub: StubModelServer) -> dict[str, str]:
    """Both profiles pointed at the stub model (what ``make_editor`` gives by default)."""
    return {
        "FASTEDIT_FAST_BASE_URL": stub.base_url,
        "FASTEDIT_FAST_MODEL": "stub-fast",
        "FASTEDIT_STANDARD_BASE_URL": stub.base_url,
        "FASTEDIT_STANDARD_MODEL": "stub-strong",
    }


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_stub() -> AsyncIterator[StubModelServer]:
    async with await StubModelServer.start() as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_editor(module_stub: StubModelServer) -> AsyncIterator[Editor]:
    editor = await start_editor(hermetic_env(**stub_env(module_stub)))
    yield editor
    await stop_editor(editor)
    assert editor.violations == []


@pytest_asyncio.fixture(loop_scope="module")
async def stub(module_stub: StubModelServer) -> AsyncIterator[StubModelServer]:
    default, models = module_stub.default, module_stub.models
    module_stub.reset()
    yield module_stub
    module_stub.default, module_stub.models = default, models
    module_stub.reset()


async def settle(editor: Editor) -> None:
    """Wait for every job to end, close every document, forget what the test saw."""
    status: dict[str, Any] = await editor.command("fastedit.status")
    for job in status["jobs"]:
        if job["state"] == "running":
            record = await editor.wait_job(job["jobId"])
            assert record["state"] != "running", record
    for uri in list(editor.docs):
        editor.close(uri)
    editor.flush()
    assert editor.violations == []
    editor.applied.clear()
    editor.statuses.clear()
    editor.apply_requests = 0
    editor.refuse_edits = False
    editor.client.shown_documents.clear()
    editor.client.messages.clear()
    editor.client.log_messages.clear()
    editor.client.diagnostics.clear()
    editor.client.progress_reports.clear()


@pytest_asyncio.fixture(loop_scope="module")
async def editor(module_editor: Editor, stub: StubModelServer) -> AsyncIterator[Editor]:
    yield module_editor
    await settle(module_editor)


@pytest_asyncio.fixture(loop_scope="module")
async def make_editor(stub: StubModelServer) -> AsyncIterator[MakeEditor]:
    """A fresh server per call, in the module's loop (as ``tests/e2e/conftest.py``'s)."""
    editors: list[Editor] = []

    async def make(*, env: dict[str, str] | None = None, model: bool = True, **kw: Any) -> Editor:
        base = stub_env(stub) if model else {}
        editor = await start_editor(hermetic_env(**{**base, **(env or {})}), **kw)
        editors.append(editor)
        return editor

    yield make
    for editor in editors:
        await stop_editor(editor)
        assert editor.violations == []


__all__ = ["HANG_GUARD", "editor", "make_editor", "module_editor", "module_stub", "stub"]
