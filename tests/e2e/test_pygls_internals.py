"""The start-up self-check through the real server process: when a pygls internal a correctness
fix needs is gone (here: pygls without ``_handle_cancel_notification``, as a pygls release that
renamed it), the user is told in a ``window/showMessage`` after ``initialized``; with the pinned
pygls, nothing is said."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from fastedit_lsp.tools.lsp_client import LspClient
from tests.support.harness import HANG_GUARD, hermetic_env

#: The server, started as ``fastedit-lsp serve --stdio`` after deleting one pygls internal.
WITHOUT_CANCEL = (
    "import sys\n"
    "from pygls.protocol.json_rpc import JsonRPCProtocol\n"
    "del JsonRPCProtocol._handle_cancel_notification\n"
    "from fastedit_lsp.cli import main\n"
    "sys.exit(main(['serve', '--stdio']))\n"
)


async def _session(command: list[str] | None) -> tuple[LspClient, list[dict[str, Any]]]:
    client = await LspClient.start(hermetic_env(), command=command)
    shown: list[dict[str, Any]] = []
    client.on_notification = lambda method, params: (
        shown.append(params) if method == "window/showMessage" else None
    )
    await client.request(
        "initialize",
        {"processId": os.getpid(), "rootUri": None, "capabilities": {}},
        seconds=HANG_GUARD,
    )
    client.notify("initialized", {})
    # The status request is answered after initialized was handled (messages are handled in
    # order, and initialized shows its message before it awaits anything).
    await client.command("fastedit.status", seconds=HANG_GUARD)
    return client, shown


async def test_a_correctness_fix_that_cannot_be_applied_is_shown_to_the_user() -> None:
    client, shown = await _session([sys.executable, "-c", WITHOUT_CANCEL])
    try:
        warnings = [m for m in shown if m["type"] == 2 and "pygls" in m["message"]]
        assert len(warnings) == 1, shown
        message = warnings[0]["message"]
        assert "$/cancelRequest stops a running command" in message
        assert "_handle_cancel_notification not found" in message
        assert "fastedit-lsp doctor" in message
    finally:
        assert await asyncio.wait_for(client.shutdown(), HANG_GUARD) == 0


async def test_with_the_pinned_pygls_no_fix_is_reported_off() -> None:
    client, shown = await _session(None)
    try:
        assert not [m for m in shown if "pygls" in m["message"]], shown
    finally:
        assert await asyncio.wait_for(client.shutdown(), HANG_GUARD) == 0
