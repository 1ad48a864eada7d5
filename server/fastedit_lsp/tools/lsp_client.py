"""A small scripted LSP client for ``demo``, ``doctor`` and benchmarks: JSON-RPC over pipes.

It starts the real server as a subprocess (``python -m fastedit_lsp serve --stdio``), frames
messages with ``Content-Length`` headers, matches responses to requests, answers the server's
requests through handlers and hands notifications to a callback. No pygls: it is the editor side.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

Handler = Callable[[Any], Awaitable[Any] | Any]


class LspError(Exception):
    """An error response from the server."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def frame(message: Mapping[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    message, _ = await read_framed(reader)
    return message


async def read_framed(reader: asyncio.StreamReader) -> tuple[dict[str, Any], int]:
    """One message and the size of its body in bytes."""
    length = 0
    while True:
        header = await reader.readline()
        if not header:
            raise EOFError("the server closed its output")
        if header in (b"\r\n", b"\n"):
            break
        name, _, value = header.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    message: dict[str, Any] = json.loads(await reader.readexactly(length))
    return message, length


class LspClient:
    """One session with a server process."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        #: Messages and body bytes received from the server so far.
        self.messages_received = 0
        self.bytes_received = 0
        #: Called with every message from the server and its size in bytes, before dispatch.
        self.on_message: Callable[[dict[str, Any], int], None] | None = None
        self.handlers: dict[str, Handler] = {}
        self.on_notification: Callable[[str, Any], None] = lambda method, params: None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._answering: set[asyncio.Future[None]] = set()
        self._reader = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def start(
        cls, env: Mapping[str, str] | None = None, command: Sequence[str] | None = None
    ) -> LspClient:
        """Start the server (or ``command``, another stdio language server)."""
        argv = command or (sys.executable, "-m", "fastedit_lsp", "serve", "--stdio")
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=dict(os.environ if env is None else env),
        )
        return cls(proc)

    def _write(self, message: Mapping[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame({"jsonrpc": "2.0", **message}))

    async def request(self, method: str, params: Any = None, *, seconds: float = 30) -> Any:
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        self._write({"id": msg_id, "method": method, "params": params})
        try:
            return await asyncio.wait_for(future, seconds)
        finally:
            self._pending.pop(msg_id, None)

    def notify(self, method: str, params: Any = None) -> None:
        self._write({"method": method, "params": params})

    async def command(self, name: str, argument: Any = None, *, seconds: float = 30) -> Any:
        arguments = [] if argument is None else [argument]
        return await self.request(
            "workspace/executeCommand",
            {"command": name, "arguments": arguments},
            seconds=seconds,
        )

    async def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        try:
            while True:
                message, size = await read_framed(self.proc.stdout)
                self.messages_received += 1
                self.bytes_received += size
                if self.on_message is not None:
                    self.on_message(message, size)
                if "method" in message and "id" in message:
                    task = asyncio.ensure_future(self._answer(message))
                    self._answering.add(task)
                    task.add_done_callback(self._answering.discard)
                elif "method" in message:
                    self.on_notification(message["method"], message.get("params"))
                elif (future := self._pending.get(message.get("id", -1))) is not None:
                    if future.done():
                        continue
                    if "error" in message:
                        error = message["error"]
                        future.set_exception(LspError(error["code"], error["message"]))
                    else:
                        future.set_result(message.get("result"))
        except (EOFError, asyncio.IncompleteReadError, ConnectionError):
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(EOFError("the server exited"))

    async def _answer(self, message: dict[str, Any]) -> None:
        handler = self.handlers.get(message["method"])
        if handler is None:
            self._write({"id": message["id"], "result": None})
            return
        try:
            result = handler(message.get("params"))
            if asyncio.iscoroutine(result):
                result = await result
        except Exception as exc:
            self._write({"id": message["id"], "error": {"code": -32603, "message": str(exc)}})
            return
        self._write({"id": message["id"], "result": result})

    async def shutdown(self) -> int:
        """shutdown, exit, and the process' exit code."""
        with contextlib.suppress(Exception):
            await self.request("shutdown", seconds=10)
            self.notify("exit")
        try:
            code = await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            code = await self.proc.wait()
        self._reader.cancel()
        return code
