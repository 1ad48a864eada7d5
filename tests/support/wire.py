"""A raw JSON-RPC peer for the real server: bytes on its stdin, every message from its stdout.

pytest-lsp only sends well-formed messages; hostile-input tests need to send anything (a body
that is not JSON, a message without ``jsonrpc``, ids of any type) and to see everything the
server writes. The server's log goes to a file the test reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastedit_lsp.tools.lsp_client import frame, read_message
from tests.support.harness import with_checkers

#: Client capabilities of a plain editor (edits, progress, configuration).
CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "window": {"workDoneProgress": True},
    "workspace": {"applyEdit": True, "configuration": True},
}


class Wire:
    """One server process driven over raw stdio."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log
        #: Every message the server wrote, in order.
        self.received: list[dict[str, Any]] = []
        #: Answers to the server's requests, by method (default: applyEdit applied, else null).
        self.handlers: dict[str, Callable[[Any], Any]] = {
            "workspace/applyEdit": lambda params: {"applied": True},
            "workspace/configuration": lambda params: [None for _ in params["items"]],
        }
        #: Report the edits this client applies back as ``didChange``, as an editor does (the
        #: server waits a while for that report before it verifies a job's text).
        self.echo_changes = True
        #: The version of each document opened through :meth:`open`.
        self.versions: dict[str, int] = {}
        self._ids = itertools.count(1)
        self._arrived = asyncio.Condition()
        self.closed = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def start(cls, env: dict[str, str], log: Path, *args: str) -> Wire:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "fastedit_lsp",
            "--log-file",
            str(log),
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
        return cls(proc, log)

    # -- sending ---------------------------------------------------------------------------

    def send_raw(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame(message))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any = None) -> int:
        """Send a request; its id (await :meth:`response`)."""
        msg_id = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id

    async def call(self, method: str, params: Any = None) -> dict[str, Any]:
        return await self.response(self.request(method, params))

    async def command(self, name: str, *arguments: Any) -> dict[str, Any]:
        return await self.call(
            "workspace/executeCommand", {"command": name, "arguments": list(arguments)}
        )

    async def initialize(self, init_options: Any = None, capabilities: Any = None) -> None:
        reply = await self.call(
            "initialize",
            {
                "processId": None,
                "rootUri": None,
                "capabilities": CAPABILITIES if capabilities is None else capabilities,
                "initializationOptions": with_checkers(init_options),
            },
        )
        assert "result" in reply, reply
        self.notify("initialized", {})

    def open(self, uri: str, text: str) -> None:
        self.versions[uri] = 1
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )

    # -- receiving -------------------------------------------------------------------------

    async def wait_for(
        self,
        match: Callable[[dict[str, Any]], bool],
        *,
        seconds: float = 20,
    ) -> dict[str, Any]:
        """The first message (seen so far or arriving) that ``match`` accepts."""

        def found() -> dict[str, Any] | None:
            return next((m for m in self.received if match(m)), None)

        async with asyncio.timeout(seconds), self._arrived:
            await self._arrived.wait_for(lambda: found() is not None or self.closed.is_set())
        message = found()
        if message is None:
            raise EOFError(f"the server exited; it said: {self.received[-5:]}")
        return message

    async def response(self, msg_id: Any, *, seconds: float = 20) -> dict[str, Any]:
        return await self.wait_for(
            lambda m: m.get("id") == msg_id and "method" not in m, seconds=seconds
        )

    def notifications(self, method: str) -> list[Any]:
        return [
            m.get("params") for m in self.received if m.get("method") == method and "id" not in m
        ]

    async def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        try:
            while True:
                message = await read_message(self.proc.stdout)
                if "method" in message and "id" in message:
                    handler = self.handlers.get(message["method"], lambda params: None)
                    result = handler(message.get("params"))
                    if result is not ...:  # Ellipsis: never answer
                        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
                    if message["method"] == "workspace/applyEdit" and result == {"applied": True}:
                        self._report(message.get("params") or {})
                async with self._arrived:
                    self.received.append(message)
                    self._arrived.notify_all()
        except (EOFError, asyncio.IncompleteReadError, ConnectionError, json.JSONDecodeError):
            pass
        finally:
            self.closed.set()
            async with self._arrived:
                self._arrived.notify_all()

    def _report(self, params: dict[str, Any]) -> None:
        """``didChange`` for an applied edit's changes to documents this client opened."""
        if not self.echo_changes:
            return
        edit = params.get("edit") or {}
        by_uri: dict[str, list[dict[str, Any]]] = dict(edit.get("changes") or {})
        for change in edit.get("documentChanges") or []:
            if "textDocument" in change:
                by_uri.setdefault(change["textDocument"]["uri"], []).extend(change["edits"])
        for uri, edits in by_uri.items():
            if uri not in self.versions:
                continue
            self.versions[uri] += 1
            # An edit's TextEdits all address the text before it; applied from the last one up,
            # each range is still right when its turn comes.
            ordered = sorted(
                edits,
                key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
                reverse=True,
            )
            self.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": self.versions[uri]},
                    "contentChanges": [
                        {"range": e["range"], "text": e["newText"]} for e in ordered
                    ],
                },
            )

    # -- ending ----------------------------------------------------------------------------

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    async def stop(self) -> int:
        """shutdown + exit (or EOF if the server stopped listening); the exit code."""
        if self.proc.returncode is None and not self.closed.is_set():
            with contextlib.suppress(Exception):
                await self.response(self.request("shutdown"), seconds=10)
                self.notify("exit")
        try:
            code = await asyncio.wait_for(self.proc.wait(), 15)
        except TimeoutError:
            self.proc.kill()
            code = await self.proc.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        return code

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""
