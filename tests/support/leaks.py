"""Counting what the real server holds (``fastedit/debugStats``), to prove nothing leaks."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastedit_lsp.backends.network import MAX_CONNECTIONS
from tests.support.harness import Editor, _plain

DEBUG_STATS = "fastedit/debugStats"
#: Idle connections the server's pool may keep: aiohttp keeps each released connection until its
#: keep-alive time (4 s), bounded by the pool's limit (a burst of 20 streams leaves 20).
KEEP_ALIVE = MAX_CONNECTIONS
#: What must be zero at rest, whatever happened before.
ZERO_AT_REST = (
    "backgroundTasks",
    "progressTokens",
    "progressJobs",
    "runningJobs",
    "cancellable",
    "outlineTimers",
)


async def at_rest(editor: Editor) -> dict[str, Any]:
    """The server's counts once its jobs and background work are over (awaited server-side)."""
    stats: dict[str, Any] = _plain(
        await editor.client.protocol.send_request_async(
            DEBUG_STATS, {"settle": True, "timeoutMs": 20000}
        )
    )
    assert stats["settled"], stats
    return stats


def leaks(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What ``after`` holds that ``before`` did not (both at rest); empty when nothing leaked."""
    found = [f"{name}: {after[name]}" for name in ZERO_AT_REST if after[name]]
    if after["tasks"] > before["tasks"]:
        found.append(f"tasks: {before['tasks']} -> {after['tasks']}")
    http = after["http"]
    # Idle keep-alive connections are the pool doing its job (at most KEEP_ALIVE of them); any
    # other new descriptor is a leak.
    pooled = http["open"] - before["http"]["open"]
    if after["fds"] - before["fds"] > max(0, pooled):
        found.append(f"file descriptors: {before['fds']} -> {after['fds']} (pool {http})")
    if http["open"] != http["idle"]:
        found.append(f"HTTP connections busy at rest: {http}")
    if http["open"] > KEEP_ALIVE:
        found.append(f"HTTP connections: {before['http']} -> {http}")
    if after["pendingRequests"] != 1:  # the debugStats request itself
        found.append(f"pending requests: {after['pendingRequests']}")
    return found


async def assert_no_leaks(editor: Editor, before: dict[str, Any]) -> dict[str, Any]:
    after = await at_rest(editor)
    assert leaks(before, after) == [], (before, after)
    return after


@contextlib.asynccontextmanager
async def raw_http_server(
    respond: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any],
) -> AsyncIterator[str]:
    """A loopback TCP server answering each connection with ``respond``; yields its /v1 URL.

    For faults below HTTP (bytes that are not HTTP at all) that the stub model cannot script.
    """

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await respond(reader, writer)
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        await server.wait_closed()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """Read one request, head and body (an unread body would make the close a reset)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return head + await reader.readexactly(length)
