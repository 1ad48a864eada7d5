"""Structural guards: the counts behind the bench's figures, which no machine load can change.

Timings belong to ``fastedit-lsp bench``; these tests pin what makes them, against the real server
process over stdio (the stub stands in for the model only): what start-up imports, how many edits
a stream makes, what the server sends back for a keystroke and for an edit, and how many model
calls a completion sequence costs.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from fastedit_lsp.core import json_codec
from fastedit_lsp.tools.lsp_client import LspClient
from fastedit_lsp.tools.stub import CHAT_PATH, Answer, StubModelServer
from tests.support.harness import hermetic_env, with_checkers

DEBUG = "fastedit/debugTimings"
STATS = "fastedit/debugStats"
#: Every fastedit module imported before the ``initialize`` reply: what answering it needs.
AT_START_UP = (
    "fastedit_lsp",
    "fastedit_lsp.actions",
    "fastedit_lsp.actions.registry",
    "fastedit_lsp.cli",
    "fastedit_lsp.core",
    "fastedit_lsp.core.diff",
    "fastedit_lsp.core.document",
    "fastedit_lsp.core.jobs",
    # The message loop reads every message with it.
    "fastedit_lsp.core.json_codec",
    "fastedit_lsp.core.outline",
    "fastedit_lsp.core.rewrite_tracking",
    "fastedit_lsp.core.timings",
    "fastedit_lsp.core.tracking",
    "fastedit_lsp.engines",
    "fastedit_lsp.engines.next_edit",
    "fastedit_lsp.engines.next_edit.history",
    "fastedit_lsp.lsp",
    "fastedit_lsp.lsp.client",
    "fastedit_lsp.lsp.config",
    "fastedit_lsp.lsp.diagnostics",
    "fastedit_lsp.lsp.documents",
    "fastedit_lsp.lsp.features",
    "fastedit_lsp.lsp.features.code_actions",
    "fastedit_lsp.lsp.features.commands",
    "fastedit_lsp.lsp.features.completions",
    "fastedit_lsp.lsp.features.debug_stats",
    "fastedit_lsp.lsp.features.debug_timings",
    "fastedit_lsp.lsp.features.lifecycle",
    "fastedit_lsp.lsp.features.next_edit",
    "fastedit_lsp.lsp.features.review",
    "fastedit_lsp.lsp.features.run",
    "fastedit_lsp.lsp.features.sync",
    "fastedit_lsp.lsp.flags",
    "fastedit_lsp.lsp.next_edits",
    "fastedit_lsp.lsp.protocol",
    # The start-up self-check of the pygls internals the protocol's patches use.
    "fastedit_lsp.lsp.pygls_internals",
    "fastedit_lsp.lsp.reporter",
    "fastedit_lsp.lsp.review",
    "fastedit_lsp.lsp.server",
    "fastedit_lsp.lsp.stdio",
    "fastedit_lsp.lsp.user_actions",
    "fastedit_lsp.lsp.warmup",
    "fastedit_lsp.prompting",
    "fastedit_lsp.prompting.context",
)
#: Imported only once needed: none of them is needed to answer ``initialize``.
NOT_AT_START_UP = (
    "pydantic",
    "httpx",
    "grex",
    # The parse check's grammars load with the first check.
    "tree_sitter",
    "fastedit_lsp.engines.parse",
    "fastedit_lsp.settings",
    "fastedit_lsp.pipeline.runner",
    # The action registry (a list of names) is read at start-up; the actions themselves are not.
    "fastedit_lsp.actions.base",
    "fastedit_lsp.actions.complete_rest",
    "fastedit_lsp.actions.edit_selection",
    "fastedit_lsp.actions.regex",
    "fastedit_lsp.actions.syntax",
    "fastedit_lsp.actions.write_tests",
    "fastedit_lsp.backends.openai",
    "fastedit_lsp.completion.budget",
    "fastedit_lsp.completion.lexer",
    "fastedit_lsp.completion.cut",
)


class Session:
    """The real server over stdio, with an editor's buffer model reduced to what the guards need:
    every edit is applied, echoed back as ``didChange`` (as editors do) and its message kept."""

    def __init__(self, client: LspClient) -> None:
        self.client = client
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        #: Every ``workspace/applyEdit`` message: (size in bytes, its edits).
        self.edits: list[tuple[int, list[dict[str, Any]]]] = []
        self._edited = asyncio.Event()
        self.configured: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        client.on_message = self._on_message
        client.handlers["workspace/applyEdit"] = self._apply
        client.handlers["workspace/configuration"] = self._configuration

    @classmethod
    async def start(cls, env: dict[str, str], options: Any = None) -> Session:
        client = await LspClient.start(env)
        session = cls(client)
        await client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None,
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "workspace": {"applyEdit": True, "configuration": True},
                    "textDocument": {"inlineCompletion": {}},
                },
                "initializationOptions": with_checkers(options),
            },
            seconds=60,
        )
        return session

    async def initialized(self) -> None:
        """Send ``initialized`` and wait until the server's start-up traffic is over."""
        self.client.notify("initialized", {})
        await asyncio.wait_for(self.configured, 30)
        await self.barrier()

    async def settled(self) -> dict[str, Any]:
        """debugStats once the server's background work (the warm-up among it) has finished."""
        reply: dict[str, Any] = await self.client.request(
            STATS, {"settle": True, "timeoutMs": 30_000}, seconds=60
        )
        assert reply["settled"] is True
        return reply

    async def modules(self) -> set[str]:
        return set((await self.barrier())["modules"])

    async def barrier(self) -> dict[str, Any]:
        """A request answered after every message sent before it."""
        reply: dict[str, Any] = await self.client.request(DEBUG, {"modules": True})
        return reply

    def open(self, uri: str, text: str) -> None:
        self.versions[uri], self.texts[uri] = 1, text
        self.client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )

    def change(self, uri: str, changes: list[dict[str, Any]]) -> None:
        self.versions[uri] += 1
        self.client.notify(
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": self.versions[uri]},
                "contentChanges": changes,
            },
        )

    async def run(self, command: str, argument: dict[str, Any]) -> dict[str, Any]:
        """Run a job command and return its finished record."""
        started = await self.client.command(command, argument)
        job: dict[str, Any] = await self.client.command(
            "fastedit.wait", {"jobId": started["jobId"], "timeoutMs": 30_000}, seconds=60
        )
        assert job["state"] == "done", job
        return job

    async def edits_reach(self, count: int) -> None:
        """Wait until ``count`` edits have arrived."""
        while len(self.edits) < count:
            self._edited.clear()
            await asyncio.wait_for(self._edited.wait(), 30)

    def _on_message(self, message: dict[str, Any], size: int) -> None:
        if message.get("method") == "workspace/applyEdit":
            changes = message["params"]["edit"].get("changes") or {}
            self.edits.append((size, [e for es in changes.values() for e in es]))
            self._edited.set()

    def _apply(self, params: dict[str, Any]) -> dict[str, Any]:
        for uri, edits in (params["edit"].get("changes") or {}).items():
            for edit in edits:
                self.texts[uri] = _splice(self.texts[uri], edit)
            self.change(uri, [{"range": e["range"], "text": e["newText"]} for e in edits])
        return {"applied": True}

    def _configuration(self, params: Any) -> list[None]:
        if not self.configured.done():
            self.configured.set_result(None)
        return [None]


def _splice(text: str, edit: dict[str, Any]) -> str:
    lines = text.split("\n")  # ASCII-only documents: UTF-16 units are characters

    def offset(position: dict[str, int]) -> int:
        return sum(len(line) + 1 for line in lines[: position["line"]]) + position["character"]

    start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
    return text[:start] + edit["newText"] + text[end:]


def _env(stub: StubModelServer) -> dict[str, str]:
    return hermetic_env(
        FASTEDIT_FAST_BASE_URL=stub.base_url,
        FASTEDIT_FAST_MODEL="stub-fast",
        FASTEDIT_MODE="fast",
    )


def _big_document(lines: int) -> str:
    return "".join(f"def function_{i}(x):\n    return x + {i}\n" for i in range(lines // 2))


async def test_start_up_imports_nothing_the_initialize_reply_does_not_need(
    stub: StubModelServer,
) -> None:
    session = await Session.start(_env(stub))
    try:
        before_initialized = set((await session.barrier())["modules"])
        assert "lsprotocol.types" in before_initialized  # the list is the server's own
        assert [m for m in NOT_AT_START_UP if m in before_initialized] == []
        ours = sorted(m for m in before_initialized if m.startswith("fastedit_lsp"))
        assert ours == sorted(AT_START_UP)
        # Settings are validated once the client has its reply.
        await session.initialized()
        await session.client.command("fastedit.status")
        assert {"pydantic", "fastedit_lsp.settings"} <= await session.modules()
    finally:
        await session.client.shutdown()


async def test_after_the_warm_up_the_first_job_and_completion_import_nothing(
    stub: StubModelServer,
) -> None:
    # The warm-up (after initialized, in the background) loads what a model job and a model
    # completion need: the session's first ones then cost what later ones cost.
    session = await Session.start(_env(stub))
    try:
        await session.initialized()
        uri = "file:///guard/first_call.py"
        session.open(uri, "x = \n")  # its grammar (the parse check's) loads in the background
        stats = await session.settled()
        # What the warm-up loaded is frozen: a full GC collection no longer walks it (11,500
        # objects unfrozen, 61 frozen).
        assert stats["gcTracked"] < 2_000, stats
        warm = await session.modules()
        assert {"fastedit_lsp.backends.network", "fastedit_lsp.pipeline.runner"} <= warm
        assert "grex" not in warm  # engines only some actions need are not loaded
        # httpx's command line (its console script's click and pygments) is never loaded: a
        # third of httpx's import time, on the warm-up's way to the first job.
        assert {"click", "pygments"} & warm == set()
        stub.default = Answer(text="1", role_chunk=False)
        await session.run(
            "fastedit.completeRest", {"uri": uri, "position": {"line": 0, "character": 4}}
        )
        after_job = await session.modules()
        assert sorted(after_job - warm) == []
        session.change(uri, [{"text": "import math\n\nvalue = \n"}])
        await session.client.request(
            "textDocument/inlineCompletion",
            {
                "textDocument": {"uri": uri},
                "position": {"line": 2, "character": 8},
                "context": {"triggerKind": 1},
            },
            seconds=30,
        )
        assert sorted(await session.modules() - after_job) == []
    finally:
        await session.client.shutdown()


async def test_the_first_job_finds_its_connection_to_the_model_server_open(
    stub: StubModelServer,
) -> None:
    # The warm-up opens a connection to each profile's model server (nothing sent): the
    # session's first request skips the TCP handshake (and a hosted server's TLS one).
    session = await Session.start(_env(stub))
    try:
        await session.initialized()
        uri = "file:///guard/first_connection.py"
        session.open(uri, "x = \n")
        stats = await session.settled()
        assert stub.connections_accepted == 1, stats["http"]
        assert stub.requests == []  # opened, nothing sent
        assert stats["http"] == {"open": 1, "idle": 1}
        stub.default = Answer(text="1", role_chunk=False)
        await session.run(
            "fastedit.completeRest", {"uri": uri, "position": {"line": 0, "character": 4}}
        )
        assert len(stub.requests) == 1
        assert stub.connections_accepted == 1  # the request went on it
    finally:
        await session.client.shutdown()


async def test_a_stream_shorter_than_the_edit_interval_is_three_edits_carrying_only_their_text(
    stub: StubModelServer,
) -> None:
    # One edit a second, a 0.3 s stream: the first token goes out at once, and so does the
    # piece that completes the answer's first line (its line break); all the rest together when
    # the stream ends (invariant 5). Per token, it would be 30 edits. The stub holds the rest
    # until the first edit arrived: on a loaded machine its paced tokens could otherwise come in
    # one burst (one edit, 1 run in 8 under load). It holds again after the second token until
    # the second edit arrived: a server starved for the rest of the stream's 0.3 s (a loaded
    # soak, once) read the line break with everything after it (two edits).
    options = {"fastedit": {"maxEditsPerSecond": 1}}
    session = await Session.start(_env(stub), options)
    try:
        await session.initialized()
        # At the end of a 10,000-line document: an edit's size must not follow the document's.
        uri = "file:///guard/stream.py"
        text = _big_document(10_000) + "x = \n"
        session.open(uri, text)
        tokens = [f"v{i} = {i}\n" for i in range(30)]
        stub.default = Answer(tokens=tokens, tps=100, role_chunk=False, hold_after=[1, 2])
        started = await session.client.command(
            "fastedit.completeRest", {"uri": uri, "position": {"line": 10_000, "character": 4}}
        )
        (request,) = await stub.wait_for_requests(1)
        await session.edits_reach(1)
        # The first token alone (its line break waits: it may repeat the one after the cursor).
        assert [edit["newText"] for _, [edit] in session.edits] == [tokens[0].rstrip("\n")]
        request.release.set()
        # The next token completes the first line: its line break goes out at once, with it.
        await session.edits_reach(2)
        assert session.edits[1][1][0]["newText"].startswith("\n")
        request.release.set()
        job = await session.client.command(
            "fastedit.wait", {"jobId": started["jobId"], "timeoutMs": 30_000}, seconds=60
        )
        assert job["state"] == "done", job
        assert job["metrics"]["edits"] == 3
        assert len(session.edits) == 3
        # The answer's last line break repeats the one after the cursor: dropped (the reconciler).
        assert session.texts[uri] == text[:-1] + "".join(tokens)
        for size, edits in session.edits:
            [edit] = edits
            # The envelope (ids, method, uri, range) around the text stays small.
            assert size - len(json.dumps(edit["newText"])) < 300
    finally:
        await session.client.shutdown()


async def test_final_streaming_sends_one_edit(stub: StubModelServer) -> None:
    session = await Session.start(_env(stub), {"fastedit": {"streaming": "final"}})
    try:
        await session.initialized()
        uri = "file:///guard/final.py"
        session.open(uri, "x = \n")
        stub.default = Answer(tokens=[f"v{i} = {i}\n" for i in range(30)], tps=300)
        job = await session.run(
            "fastedit.completeRest", {"uri": uri, "position": {"line": 0, "character": 4}}
        )
        assert job["metrics"]["edits"] == 1 and len(session.edits) == 1
    finally:
        await session.client.shutdown()


async def test_keystrokes_on_a_large_document_send_nothing_back(stub: StubModelServer) -> None:
    session = await Session.start(_env(stub))
    try:
        await session.initialized()
        uri = "file:///guard/typing.py"
        session.open(uri, _big_document(50_000))
        await session.barrier()
        messages, size = session.client.messages_received, session.client.bytes_received
        for n in range(100):
            at = {"line": 25_000, "character": 4}
            if n % 2:
                change = {
                    "range": {"start": at, "end": {"line": 25_000, "character": 5}},
                    "text": "",
                }
            else:
                change = {"range": {"start": at, "end": at}, "text": "y"}
            session.change(uri, [change])
        reply = await session.barrier()
        # Nothing but the barrier's own reply: no diagnostics, status or edits per keystroke.
        assert session.client.messages_received - messages == 1
        # The reply's body as the server writes it (compact ASCII, core/json_codec.py).
        assert session.client.bytes_received - size == len(json_codec.dumps(_response(reply)))
        # And each keystroke was handled (timed inside the server: the bench reads these).
        assert len(reply["timingsMs"]["didChange"]) == 100
    finally:
        await session.client.shutdown()


def _response(result: dict[str, Any]) -> dict[str, Any]:
    # The reply's body as pygls serialises it: only its length matters.
    return {"id": 0, "jsonrpc": "2.0", "result": result}


async def test_typing_the_suggestion_costs_one_model_request_for_the_whole_sequence(
    stub: StubModelServer,
) -> None:
    session = await Session.start(_env(stub), {"fastedit": {"completionDeadlineMs": 20000}})
    try:
        await session.initialized()
        uri = "file:///guard/complete.py"
        head = "import math\n\n\ndef area(radius):\n    return math.pi * radius ** 2\n\n\nvalue = "
        session.open(uri, head + "\n")
        stub.default = Answer(text="area(2.0) + area(3.0)\n")
        line, column = head.count("\n"), len("value = ")
        typed = ""
        answers = []
        for char in ["", "a", "r", "e", ""]:  # ask, type three characters, ask again
            if char:
                at = {"line": line, "character": column + len(typed)}
                session.change(uri, [{"range": {"start": at, "end": at}, "text": char}])
                typed += char
            result = await session.client.request(
                "textDocument/inlineCompletion",
                {
                    "textDocument": {"uri": uri},
                    "position": {"line": line, "character": column + len(typed)},
                    "context": {"triggerKind": 1},
                },
                seconds=30,
            )
            items = result["items"] if isinstance(result, dict) else result
            answers.append([item["insertText"] for item in items])
        assert answers[0] == ["area(2.0) + area(3.0)"]
        assert (
            answers[1:]
            == [["rea(2.0) + area(3.0)"], ["ea(2.0) + area(3.0)"]] + [["a(2.0) + area(3.0)"]] * 2
        )
        assert len([r for r in stub.requests if r.path == CHAT_PATH]) == 1
    finally:
        await session.client.shutdown()


async def test_each_completion_is_one_model_request_on_one_kept_connection(
    stub: StubModelServer,
) -> None:
    # A completion closes its stream once it has its line; the answer ends right after, so the
    # connection is kept (a new connection per completion cost 5-10 ms on loopback).
    session = await Session.start(_env(stub), {"fastedit": {"completionDeadlineMs": 20000}})
    try:
        await session.initialized()
        uri = "file:///guard/complete_many.py"
        head = "import math\n\n\ndef area(radius):\n    return math.pi * radius ** 2\n\n\n"
        session.open(uri, head)
        stub.default = Answer(text="area(1.0)\nmore = 2\n")
        completions = 6
        for run in range(completions):
            # A new prefix each time: neither the cache nor an open stream can answer.
            session.change(uri, [{"text": f"{head}# run {run}\nvalue = \n"}])
            await session.client.request(
                "textDocument/inlineCompletion",
                {
                    "textDocument": {"uri": uri},
                    "position": {"line": head.count("\n") + 1, "character": 8},
                    "context": {"triggerKind": 1},
                },
                seconds=30,
            )
            await _connections_idle(session)
        requests = [r for r in stub.requests if r.path == CHAT_PATH]
        assert len(requests) == completions
        assert len({r.connection for r in requests}) == 1
    finally:
        await session.client.shutdown()


async def _connections_idle(session: Session) -> None:
    """Until the server's HTTP pool holds no busy connection (a lingering stream has ended)."""
    async with asyncio.timeout(10):
        while True:
            http = (await session.client.request(STATS, {}))["http"]
            if http["open"] == http["idle"]:
                return
            await asyncio.sleep(0.01)


async def test_a_20000_token_per_second_stream_never_exceeds_max_edits_per_second(
    stub: StubModelServer,
) -> None:
    # However fast the model and however loaded the machine, at most maxEditsPerSecond edits go
    # out: a fast stream sends fewer, larger edits (the first one at once).
    options = {"maxEditsPerSecond": 20, "profiles": {"fast": {"maxTokens": 32768}}}
    session = await Session.start(_env(stub), {"fastedit": options})
    try:
        await session.initialized()
        uri = "file:///guard/fast.py"
        session.open(uri, "x = \n")
        tokens = [f"v{i % 10} = 1\n" for i in range(20_000)]
        stub.default = Answer(tokens=tokens, tps=20_000, role_chunk=False, chunk_per_event=True)
        job = await session.run(
            "fastedit.completeRest", {"uri": uri, "position": {"line": 0, "character": 4}}
        )
        elapsed = job["metrics"]["elapsedMs"] / 1000
        # One edit at once, then at most 20 a second for as long as the job ran.
        assert len(session.edits) <= 2 + 20 * elapsed
        assert session.texts[uri] == "x = " + "".join(tokens)
    finally:
        await session.client.shutdown()
